// ibfabricd under test: started through `ibfabric sim run --name N -- ibfabricd ARGS` (so it
// talks to that simulated fabric), stdout on a pipe (for the "listening on" line), stderr in a
// scratch file. Killed (SIGKILL) in the destructor if still running.
//
//   DaemonProcess daemon(fabric, {"--listen", "127.0.0.1:0", "--sweep-interval", "0.5"});
//   int port = daemon.waitForPort(60s);
//
// Not thread-safe: one thread drives it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/rest_get.h"
#include "tests/support/sim_fixture.h"

namespace ibfabric::testing {

class DaemonProcess {
 public:
  /// `tag` prefixes the stderr scratch file's name; `host`: the HCA it runs beside (`sim run
  /// --host`; empty: the fabric's client HCA). Throws std::runtime_error when the process cannot
  /// be started.
  DaemonProcess(const SimFabric& fabric, const std::vector<std::string>& args,
                const std::string& tag = "daemon", const std::string& host = "");
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  /// Reads stdout until "listening on http://HOST:PORT" (or https://); returns the port, or -1
  /// after `timeout` or when the daemon closed its stdout.
  int waitForPort(std::chrono::milliseconds timeout);
  /// "http" or "https", after waitForPort() succeeded.
  const std::string& scheme() const { return scheme_; }

  int signal(int sig);
  /// Sends `sig`, waits at most `timeout` for the exit; returns the wait status (or -1).
  int signalAndWait(int sig, std::chrono::milliseconds timeout);
  /// The `ibfabric sim run` wrapper's pid (it forwards SIGTERM/SIGINT/SIGHUP to the daemon).
  pid_t pid() const { return pid_; }
  /// The daemon itself (the wrapper's child): what SIGKILL must reach. -1 when it is gone.
  pid_t daemonPid() const;
  /// The daemon's stderr so far.
  std::string log() const;

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int out_ = -1;
  std::string scheme_;
  std::filesystem::path errPath_;
};

/// ibfabricd on `fabric` with `--config config --listen 127.0.0.1:0` (stderr file tagged `tag`),
/// waited for (≤ 60 s) until /api/v1/health/ready answers 200; `http` then reaches it and
/// `*port` (when given) is its port. nullptr, with a gtest failure, when it does not get there.
std::unique_ptr<DaemonProcess> startReadyDaemon(const SimFabric& fabric,
                                                const std::filesystem::path& config,
                                                const std::string& tag,
                                                std::unique_ptr<JsonClient>& http,
                                                int* port = nullptr);

}  // namespace ibfabric::testing
