#include "tests/support/daemon_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"

extern char** environ;

namespace ibfabric::testing {

using Clock = std::chrono::steady_clock;

DaemonProcess::DaemonProcess(const SimFabric& fabric, const std::vector<std::string>& args,
                             const std::string& tag, const std::string& host) {
  static int serial = 0;
  errPath_ = scratchDir() / (tag + "-" + fabric.name() + "-" + std::to_string(++serial) + ".err");
  std::vector<std::string> argv = {cliPath().string(), "sim", "run", "--name", fabric.name()};
  if (!host.empty()) argv.insert(argv.end(), {"--host", host});
  argv.insert(argv.end(), {"--", daemonPath().string()});
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
  const int rc = ::posix_spawn(&pid_, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    throw std::runtime_error("cannot start the daemon");
  }
  out_ = out[0];
}

pid_t DaemonProcess::daemonPid() const {
  if (pid_ <= 0 || reaped_) return -1;
  std::ifstream in("/proc/" + std::to_string(pid_) + "/task/" + std::to_string(pid_) + "/children");
  long child = -1;
  if (!(in >> child)) return -1;
  return static_cast<pid_t>(child);
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
    const ssize_t n = ::read(out_, buf, sizeof buf);
    if (n <= 0) return -1;
    text.append(buf, static_cast<std::size_t>(n));
    for (const char* scheme : {"http", "https"}) {
      const std::string marker = std::string("listening on ") + scheme + "://";
      const auto at = text.find(marker);
      const auto eol = at == std::string::npos ? at : text.find('\n', at);
      if (eol == std::string::npos) continue;
      scheme_ = scheme;
      const auto colon = text.rfind(':', eol);
      return std::stoi(text.substr(colon + 1, eol - colon - 1));
    }
  }
  return -1;
}

int DaemonProcess::signal(int sig) { return ::kill(pid_, sig); }

int DaemonProcess::signalAndWait(int sig, std::chrono::milliseconds timeout) {
  ::kill(pid_, sig);
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
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

std::unique_ptr<DaemonProcess> startReadyDaemon(const SimFabric& fabric,
                                                const std::filesystem::path& config,
                                                const std::string& tag,
                                                std::unique_ptr<JsonClient>& http, int* port) {
  auto daemon = std::make_unique<DaemonProcess>(
      fabric, std::vector<std::string>{"--config", config.string(), "--listen", "127.0.0.1:0"},
      tag);
  const int p = daemon->waitForPort(std::chrono::seconds(60));
  EXPECT_GT(p, 0) << daemon->log();
  if (p <= 0) return nullptr;
  if (port) *port = p;
  http = std::make_unique<JsonClient>(p);
  const bool ready = waitFor([&] { return http->get("/api/v1/health/ready").first == 200; },
                             std::chrono::seconds(60), std::chrono::milliseconds(100));
  EXPECT_TRUE(ready) << daemon->log();
  return ready ? std::move(daemon) : nullptr;
}

}  // namespace ibfabric::testing
