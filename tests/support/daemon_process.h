// A daemon under test: `ibfabric sim run --name N -- ibfabricd ARGS` in the background, stdout on
// a pipe (for the "listening on" line), stderr in a scratch file; SIGKILLed and reaped in the
// destructor if still running. Use from one thread.
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
  DaemonProcess(const SimFabric& fabric, const std::vector<std::string>& args);
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  /// Reads stdout until "listening on http://HOST:PORT"; the port, or -1 after `timeout`.
  int waitForPort(std::chrono::milliseconds timeout);
  /// Sends `sig` and waits at most `timeout` for the exit; the wait status, or -1.
  int signalAndWait(int sig, std::chrono::milliseconds timeout);
  /// The daemon's stderr so far.
  std::string log() const;

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int out_ = -1;
  std::filesystem::path errPath_;
};

}  // namespace ibfabric::testing
