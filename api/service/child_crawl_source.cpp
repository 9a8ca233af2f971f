#include "api/service/child_crawl_source.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "discovery/topology_json.h"
#include "telemetry/child_process.h"

extern char** environ;

namespace ibfabric::api {
namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0) throw CrawlError(std::string("pipe: ") + std::strerror(errno));
  }
  ~Pipe() {
    closeRead();
    closeWrite();
  }
  void closeRead() {
    if (fd[0] >= 0) ::close(fd[0]);
    fd[0] = -1;
  }
  void closeWrite() {
    if (fd[1] >= 0) ::close(fd[1]);
    fd[1] = -1;
  }
};

std::string lastLine(const std::string& text) {
  std::size_t end = text.find_last_not_of("\n\r ");
  if (end == std::string::npos) return {};
  std::size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start + 1));
}

}  // namespace

ChildCrawlSource::ChildCrawlSource(std::vector<std::string> argv, std::chrono::milliseconds timeout)
    : argv_(std::move(argv)), timeout_(timeout) {}

std::string ChildCrawlSource::describe() const {
  std::string out = "child";
  for (const auto& a : argv_) out += " " + a;
  return out;
}

TopologyPtr ChildCrawlSource::discover() {
  if (argv_.empty()) throw CrawlError("crawl child: no command");
  Pipe out, err;
  // Nothing else of the daemon's (the listening socket, the sweep's umad port) leaks into the
  // child, and it gets the default signal mask and dispositions back.
  pid_t pid = -1;
  const int rc = spawnChild(argv_, {{{out.fd[1], STDOUT_FILENO}, {err.fd[1], STDERR_FILENO}}}, pid);
  if (rc != 0) throw CrawlError("crawl child: cannot start " + argv_[0] + ": " + std::strerror(rc));
  out.closeWrite();
  err.closeWrite();

  std::string stdoutText, stderrText;
  stdoutText.reserve(lastDocumentBytes_ + lastDocumentBytes_ / 8);
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  bool timedOut = false, cancelled = false;
  std::array<pollfd, 2> fds{pollfd{out.fd[0], POLLIN, 0}, pollfd{err.fd[0], POLLIN, 0}};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    if (cancelled_) {
      cancelled = true;
      break;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timedOut = true;
      break;
    }
    int n = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long>(left.count(), 100)));
    if (n < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        (i == 0 ? stdoutText : stderrText).append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        fds[i].fd = -1;
      }
    }
  }
  if (timedOut || cancelled) {
    ::kill(pid, SIGKILL);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (cancelled) throw CrawlError("crawl cancelled");
  if (timedOut)
    throw CrawlError("crawl child timed out after " + std::to_string(timeout_.count()) + " ms");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string why = lastLine(stderrText);
    if (WIFSIGNALED(status))
      why =
          "killed by signal " + std::to_string(WTERMSIG(status)) + (why.empty() ? "" : ": ") + why;
    throw CrawlError(why.empty() ? "crawl child failed" : why);
  }
  lastDocumentBytes_ = stdoutText.size();
  try {
    return topologyFromJsonText(stdoutText);
  } catch (const TopologyJsonError& e) {
    throw CrawlError(std::string("crawl child output: ") + e.what());
  }
}

}  // namespace ibfabric::api
