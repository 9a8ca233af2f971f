// A long-running child for tests (ibfabricd under `ibfabric sim run`, Prometheus, slurmctld):
// started in its own process group with stdin from /dev/null and stdout + stderr in a log
// file; stopped with SIGTERM (then SIGKILL to the group) by stop() or the destructor.
//
// Not thread-safe: one owner thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ibfabric::testing {

class BackgroundProcess {
 public:
  /// Starts argv (argv[0] an absolute path or looked up in PATH) in `cwd`; throws
  /// std::runtime_error when it cannot be started.
  BackgroundProcess(const std::vector<std::string>& argv, std::filesystem::path logPath,
                    const std::filesystem::path& cwd = {});
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  /// The log so far.
  std::string log() const;
  /// Its last `bytes` bytes (for failure messages).
  std::string logTail(std::size_t bytes = 6000) const;
  /// Waits until the log contains `text`; returns the rest of that line, or nullopt after
  /// `timeout` or when the process exits first.
  std::optional<std::string> waitForLog(const std::string& text, std::chrono::milliseconds timeout);
  /// Sends `sig`; waits up to `timeout`, then SIGKILLs the process group. Returns the exit
  /// status as from waitpid (or -1 when it had to be killed). Later calls return the same.
  int stop(int sig, std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = -1;
  std::filesystem::path logPath_;
};

/// Stops `process` with SIGTERM (SIGKILL after `timeout`) and expects (gtest) that it exited
/// with status 0; `name` and the process's log go into the failure message.
void expectCleanStop(BackgroundProcess& process, const std::string& name,
                     std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace ibfabric::testing
