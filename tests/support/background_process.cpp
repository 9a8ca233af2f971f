#include "tests/support/background_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace ibfabric::testing {

using Clock = std::chrono::steady_clock;

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv,
                                     std::filesystem::path logPath,
                                     const std::filesystem::path& cwd)
    : logPath_(std::move(logPath)) {
  if (argv.empty()) throw std::runtime_error("BackgroundProcess: empty argv");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, logPath_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const int rc = ::posix_spawnp(&pid_, cargv[0], &fa, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::to_string(rc));
  }
}

BackgroundProcess::~BackgroundProcess() { stop(SIGTERM, std::chrono::seconds(5)); }

bool BackgroundProcess::running() {
  if (pid_ <= 0 || reaped_) return false;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) == pid_) {
    reaped_ = true;
    status_ = st;
    return false;
  }
  return true;
}

std::string BackgroundProcess::log() const {
  std::ifstream in(logPath_);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string BackgroundProcess::logTail(std::size_t bytes) const {
  std::string l = log();
  return l.size() <= bytes ? l : l.substr(l.size() - bytes);
}

std::optional<std::string> BackgroundProcess::waitForLog(const std::string& text,
                                                         std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    const std::string l = log();
    const auto at = l.find(text);
    if (at != std::string::npos) {
      const auto eol = l.find('\n', at);
      if (eol != std::string::npos) return l.substr(at + text.size(), eol - at - text.size());
    }
    if (!running()) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return std::nullopt;
}

int BackgroundProcess::stop(int sig, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  if (!running()) return status_;
  ::kill(pid_, sig);
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (!running()) return status_;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int st = 0;
  ::waitpid(pid_, &st, 0);
  reaped_ = true;
  status_ = -1;
  return -1;
}

void expectCleanStop(BackgroundProcess& process, const std::string& name,
                     std::chrono::milliseconds timeout) {
  const int st = process.stop(SIGTERM, timeout);
  EXPECT_TRUE(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
      << name << " did not stop cleanly: " << st << "\n"
      << process.log();
}

}  // namespace ibfabric::testing
