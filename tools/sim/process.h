// Process plumbing for the simulator harness: detached daemons, liveness checks that survive PID
// reuse, escalating termination, and running a child with a timeout while capturing its output.
//
// Linux only (/proc). Free functions; no shared state, safe to call from any thread except
// spawnDetached(), which forks and must run while the process is single-threaded.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ibfabric::sim {

/// A process identified by pid and its start time (clock ticks since boot), so that a recycled
/// pid is never mistaken for the process we started.
struct ProcRef {
  pid_t pid = 0;
  std::uint64_t startTime = 0;
};

/// Start time of `pid` from /proc/<pid>/stat; nullopt when it does not exist or is a zombie.
std::optional<std::uint64_t> processStartTime(pid_t pid);
/// True while the process exists, is not a zombie and (if recorded) has the same start time.
bool isAlive(const ProcRef& proc);

/// How to start a detached daemon.
struct DaemonSpec {
  std::vector<std::string> argv;           // argv[0] is looked up in PATH when it has no '/'
  std::map<std::string, std::string> env;  // set on top of the caller's environment
  std::filesystem::path cwd;
  std::filesystem::path
      stdinPath;                  // opened read-write (a FIFO then never sees EOF); "" = /dev/null
  std::filesystem::path logPath;  // stdout and stderr, appended
};

/// Starts `spec` in a new session (double fork, so it is reparented away from us and `sim up`
/// can return). Every descriptor but 0-2 is closed in the daemon. Throws std::runtime_error when
/// the program cannot be executed.
ProcRef spawnDetached(const DaemonSpec& spec);

/// SIGTERM, wait up to `termWait`, then SIGKILL and wait up to `killWait`. Returns true when the
/// process is gone (or was already).
bool terminate(const ProcRef& proc, std::chrono::milliseconds termWait,
               std::chrono::milliseconds killWait);

/// Processes (other than ourselves) whose environment contains exactly `key=value`.
std::vector<pid_t> processesWithEnv(std::string_view key, std::string_view value);

/// Result of runCaptured().
struct CapturedRun {
  int exitCode = -1;  // exit status, 128+signal when killed, 124 on timeout
  bool timedOut = false;
  std::string out;
  std::string err;
};

struct CaptureOptions {
  std::map<std::string, std::string> env;  // set on top of the caller's environment
  std::filesystem::path cwd;               // "" = inherit
  std::chrono::milliseconds timeout{60000};
};

/// Runs argv as a child in its own process group with stdin from /dev/null, capturing stdout and
/// stderr. On timeout the group gets SIGTERM, then SIGKILL after 3 s. Output of grandchildren
/// that keep the pipes open after the child exits is read for at most 1 s more.
CapturedRun runCaptured(const std::vector<std::string>& argv, const CaptureOptions& options);

/// Exit status of a waitpid() status word: the code, or 128+signal.
int exitCodeOf(int waitStatus);

/// Absolute path of `program` via PATH ("" when not found); paths with '/' are returned as is.
std::string findProgram(const std::string& program);

}  // namespace ibfabric::sim
