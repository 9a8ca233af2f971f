// DaemonProcess: ibfabricd started on a simulated fabric through `ibfabric sim run`, in the
// background, for integration tests: stdout on a pipe (for the "listening on" line), stderr in
// a scratch file. Killed (SIGKILL) in the destructor if still running.
//
//   DaemonProcess d(fabric, {"--listen", "127.0.0.1:0"});
//   int port = d.waitForPort(60s);
//   d.signalAndWait(SIGTERM, 5s);
//
// Not thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/sim_fixture.h"

namespace ibfabric::testing {

class DaemonProcess {
 public:
  /// Throws std::runtime_error when the process cannot be started.
  DaemonProcess(const SimFabric& fabric, const std::vector<std::string>& args,
                const std::string& tag = "daemon");
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  /// Reads stdout until "listening on http://HOST:PORT"; the port, or -1 after `timeout`.
  int waitForPort(std::chrono::milliseconds timeout);
  /// Sends `sig`, waits at most `timeout` for the exit; the wait status, or -1.
  int signalAndWait(int sig, std::chrono::milliseconds timeout);
  /// Everything the daemon wrote to stderr so far.
  std::string log() const;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int out_ = -1;
  std::filesystem::path errPath_;
};

}  // namespace ibfabric::testing
