// DaemonProcess: ibfabricd started under `ibfabric sim run --name N --` on a SimFabric, with
// stdout on a pipe (for the "listening on" line) and stderr in a scratch file. Killed (SIGKILL)
// and reaped in the destructor if still running. Not thread-safe.
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
  DaemonProcess(const SimFabric& fabric, const std::vector<std::string>& args);
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  /// Reads stdout until "listening on http://HOST:PORT"; the port, or -1 after `timeout`.
  int waitForPort(std::chrono::milliseconds timeout);
  /// Sends `sig`, waits at most `timeout` for the exit; the wait status, or -1.
  int signalAndWait(int sig, std::chrono::milliseconds timeout);
  /// Everything the daemon wrote to stderr so far.
  std::string log() const;

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int out_ = -1;
  std::filesystem::path errPath_;
};

}  // namespace ibfabric::testing
