// Running child processes from tests: with a timeout, capturing stdout and stderr, and waiting
// on conditions with a bound instead of sleeping.
//
// Free functions, safe from any test; runProcess() forks, so call it from the test's main
// thread or from threads that do nothing else meanwhile.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ibfabric::testing {

struct ProcessResult {
  int exitCode = -1;  // exit status; 128+signal when killed; 124 on timeout
  bool timedOut = false;
  std::string out;
  std::string err;

  /// "exit 1\nstdout:\n...\nstderr:\n..." for assertion messages.
  std::string describe() const;
  /// stderr split into non-empty lines.
  std::vector<std::string> errLines() const;
};

/// Runs argv (argv[0] looked up in PATH) with stdin from /dev/null; `env` entries are set on
/// top of the test's environment. On timeout the child's process group is killed.
ProcessResult runProcess(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout = std::chrono::seconds(60),
                         const std::map<std::string, std::string>& env = {},
                         const std::filesystem::path& cwd = {});

/// Runs the `ibfabric` binary under test with `args`.
ProcessResult runCli(const std::vector<std::string>& args,
                     std::chrono::milliseconds timeout = std::chrono::seconds(120),
                     const std::map<std::string, std::string>& env = {});

/// Polls `condition` until it holds or `timeout` passes; returns its last value.
bool waitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
             std::chrono::milliseconds interval = std::chrono::milliseconds(50));

/// A directory private to this test process (created on first use, under $TMPDIR).
std::filesystem::path scratchDir();
/// Writes `content` to scratchDir()/name and returns the path.
std::filesystem::path writeScratchFile(std::string_view name, std::string_view content);

/// True while a process with this pid exists and is not a zombie.
bool processRunning(pid_t pid);

}  // namespace ibfabric::testing
