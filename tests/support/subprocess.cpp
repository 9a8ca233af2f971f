#include "tests/support/subprocess.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/test_paths.h"
#include "tools/sim/process.h"

namespace ibfabric::testing {

std::string ProcessResult::describe() const {
  std::ostringstream s;
  s << (timedOut ? "timed out" : "exit " + std::to_string(exitCode)) << "\nstdout:\n"
    << out << "\nstderr:\n"
    << err;
  return s.str();
}

std::vector<std::string> ProcessResult::errLines() const {
  std::vector<std::string> lines;
  std::istringstream in(err);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

ProcessResult runProcess(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                         const std::map<std::string, std::string>& env,
                         const std::filesystem::path& cwd) {
  sim::CaptureOptions options;
  options.env = env;
  options.timeout = timeout;
  options.cwd = cwd;
  const auto r = sim::runCaptured(argv, options);
  return {r.exitCode, r.timedOut, r.out, r.err};
}

ProcessResult runCli(const std::vector<std::string>& args, std::chrono::milliseconds timeout,
                     const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv{cliPath().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv, timeout, env);
}

bool waitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
             std::chrono::milliseconds interval) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(interval);
  }
}

namespace {
/// Created on first use, removed when the test process exits normally.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir()
      : path(std::filesystem::temp_directory_path() /
             ("ibfabric-test-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};
}  // namespace

std::filesystem::path scratchDir() {
  static const ScratchDir dir;
  return dir.path;
}

std::filesystem::path writeScratchFile(std::string_view name, std::string_view content) {
  const auto path = scratchDir() / name;
  std::ofstream out(path, std::ios::trunc);
  out << content;
  return path;
}

bool processRunning(pid_t pid) { return sim::processStartTime(pid).has_value(); }

}  // namespace ibfabric::testing
