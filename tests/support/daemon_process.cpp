#include "tests/support/daemon_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

#include "tests/support/subprocess.h"

extern char** environ;

namespace ibfabric::testing {

using Clock = std::chrono::steady_clock;

DaemonProcess::DaemonProcess(const SimFabric& fabric, const std::vector<std::string>& args) {
  errPath_ = scratchDir() / ("daemon-" + fabric.name() + ".err");
  std::vector<std::string> argv = {IBFABRIC_CLI_PATH,   "sim", "run", "--name", fabric.name(), "--",
                                   IBFABRIC_DAEMON_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, errPath_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addchdir_np(&fa, scratchDir().c_str());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  int rc = ::posix_spawn(&pid_, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    throw std::runtime_error("cannot start the daemon");
  }
  out_ = out[0];
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
  if (out_ >= 0) ::close(out_);
}

int DaemonProcess::waitForPort(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::string text;
  while (Clock::now() < deadline) {
    pollfd p{out_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[512];
    ssize_t n = ::read(out_, buf, sizeof buf);
    if (n <= 0) return -1;
    text.append(buf, static_cast<std::size_t>(n));
    auto at = text.find("listening on http://");
    auto eol = at == std::string::npos ? at : text.find('\n', at);
    if (eol != std::string::npos) {
      auto colon = text.rfind(':', eol);
      return std::stoi(text.substr(colon + 1, eol - colon - 1));
    }
  }
  return -1;
}

int DaemonProcess::signalAndWait(int sig, std::chrono::milliseconds timeout) {
  ::kill(pid_, sig);
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      return st;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

std::string DaemonProcess::log() const {
  std::ifstream in(errPath_);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace ibfabric::testing
