#include "telemetry/subprocess_mad_transport.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "telemetry/child_process.h"
#include "telemetry/mad_proxy.h"

extern char** environ;

namespace ibfabric::mad {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::size_t kMaxPending = 1024;  // requests buffered while the socket is full
constexpr int kChildFd = 3;

std::string errnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

std::string describeStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

/// Waits until `fd` is ready for `events` or `timeout` passed (ppoll: not wrapped by umad2sim).
short waitFd(int fd, short events, std::chrono::nanoseconds timeout) {
  if (timeout < 0ns) timeout = 0ns;
  pollfd pfd{fd, events, 0};
  timespec ts{static_cast<time_t>(timeout.count() / 1'000'000'000),
              static_cast<long>(timeout.count() % 1'000'000'000)};
  const int n = ::ppoll(&pfd, 1, &ts, nullptr);
  return n > 0 ? pfd.revents : 0;
}

}  // namespace

SubprocessMadTransport::SubprocessMadTransport(Options options)
    : options_(std::move(options)),
      packet_(proxy::kMaxRecordsPerPacket * sizeof(proxy::ReplyRecord)) {}

SubprocessMadTransport::~SubprocessMadTransport() { close(); }

bool SubprocessMadTransport::spawn(std::string& error) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    error = errnoText("socketpair");
    return false;
  }
  int err[2];
  if (::pipe2(err, O_CLOEXEC) != 0) {
    error = errnoText("pipe");
    ::close(sv[0]);
    ::close(sv[1]);
    return false;
  }
  pid_t pid = -1;
  if (options_.childMain) {
    pid = ::fork();
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::close(sv[0]);
      ::close(err[0]);
      ::dup2(err[1], STDERR_FILENO);
      ::_exit(options_.childMain(sv[1]));
    }
    if (pid < 0) error = errnoText("fork");
  } else if (options_.argv.empty()) {
    error = "mad proxy: no command";
  } else {
    const int rc = spawnChild(options_.argv, {{{sv[1], kChildFd}, {err[1], STDERR_FILENO}}}, pid);
    if (rc != 0) {
      error = "mad proxy: cannot start " + options_.argv[0] + ": " + std::strerror(rc);
      pid = -1;
    }
  }
  ::close(sv[1]);
  ::close(err[1]);
  if (pid <= 0) {
    ::close(sv[0]);
    ::close(err[0]);
    return false;
  }
  pid_ = pid;
  fd_ = sv[0];
  stderrFd_ = err[0];
  stderrReader_ = std::thread([this, fd = stderrFd_, child = pid] {
    std::string line;
    char buf[4096];
    std::uint64_t lines = 0;
    auto emit = [&] {
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      if (line.empty()) return;
      // A child that floods its stderr (umad2sim on a dead simulator) must not flood the log.
      ++lines;
      if (lines <= 100 || lines % 10000 == 0)
        spdlog::warn("mad proxy[{}]: {}{}", child, line,
                     lines == 100 ? " (further lines: every 10000th)" : "");
      std::lock_guard lock(mu_);
      // The proxy's own account of why it stops beats whatever its exit handlers print after.
      if (line.rfind("mad proxy:", 0) == 0) proxyLine_ = line;
      lastStderr_ = line;
    };
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      for (ssize_t i = 0; i < n; ++i) {
        if (buf[i] == '\n') {
          emit();
          line.clear();
        } else if (line.size() < 1000) {
          line += buf[i];
        }
      }
    }
    emit();
  });
  return true;
}

bool SubprocessMadTransport::open(std::string& error) {
  if (fd_ >= 0) return true;
  if (!spawn(error)) return false;
  const auto deadline = Clock::now() + options_.openTimeout;
  while (true) {
    const auto left = deadline - Clock::now();
    if (left <= 0ns) {
      error = "mad proxy did not open the port within " +
              std::to_string(options_.openTimeout.count()) + " ms" + stderrSuffix();
      close();
      return false;
    }
    if (waitFd(fd_, POLLIN, left) == 0) continue;
    proxy::HelloRecord hello;
    const ssize_t n = ::recv(fd_, &hello, sizeof hello, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n == static_cast<ssize_t>(sizeof hello) && hello.magic == proxy::kHelloMagic) {
      hello.text[sizeof hello.text - 1] = '\0';
      if (hello.ok == 1) {
        description_ = hello.text;
        localLid_ = Lid{hello.localLid};
        smLid_ = Lid{hello.smLid};
        localPortGuid_ = Guid{hello.localPortGuid};
        spdlog::debug("mad proxy pid {}: {}", pid_, description_);
        return true;
      }
      error = hello.text;
      close();
      return false;
    }
    // EOF (or garbage): the child died before opening the port.
    ::close(fd_);
    fd_ = -1;
    const std::string how = reap();
    if (stderrReader_.joinable()) stderrReader_.join();
    error = "mad proxy " + how + " before opening the port" + stderrSuffix();
    close();
    return false;
  }
}

void SubprocessMadTransport::markDead(const std::string& why) {
  if (dead_.exchange(true)) return;
  int status = 0;
  std::string how = why;
  // The child usually exits right after closing its socket: wait briefly to say how it ended.
  const auto until = Clock::now() + std::min<std::chrono::milliseconds>(options_.exitGrace, 500ms);
  while (pid_ > 0 && Clock::now() < until) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      how += " (" + describeStatus(status) + ")";
      pid_ = -1;
      break;
    }
    std::this_thread::sleep_for(5ms);
  }
  const std::string suffix = stderrSuffix();
  std::lock_guard lock(mu_);
  fatal_ = how + suffix;
  spdlog::warn("{}", fatal_);
}

bool SubprocessMadTransport::flush() {
  constexpr std::size_t kRecord = sizeof(proxy::RequestRecord);
  std::size_t offset = 0;
  while (pendingCount_ > 0) {
    const std::size_t count = std::min(pendingCount_, proxy::kMaxRecordsPerPacket);
    const ssize_t n =
        ::send(fd_, pending_.data() + offset, count * kRecord, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        markDead(errno == EPIPE || errno == ECONNRESET
                     ? "mad proxy (pid " + std::to_string(pid_) + ") exited"
                     : "mad proxy socket: " + std::string(std::strerror(errno)));
        pending_.clear();
        pendingCount_ = 0;
        return false;
      }
      break;
    }
    offset += count * kRecord;
    pendingCount_ -= count;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(offset));
  return pendingCount_ == 0;
}

int SubprocessMadTransport::send(const MadAddress& to, const MadBuffer& mad) {
  if (fd_ < 0) return EBADF;
  if (dead_) return EPIPE;
  if (pendingCount_ >= kMaxPending && !flush()) return dead_ ? EPIPE : EAGAIN;
  proxy::RequestRecord r;
  r.lid = to.lid.value();
  r.mgmtClass = static_cast<std::uint8_t>(to.mgmtClass);
  r.sl = to.sl;
  r.qp = to.qp;
  r.qkey = to.qkey;
  r.mad = mad;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(&r);
  pending_.insert(pending_.end(), bytes, bytes + sizeof r);
  ++pendingCount_;
  if (pendingCount_ >= proxy::kMaxRecordsPerPacket) flush();
  return dead_ ? EPIPE : 0;
}

bool SubprocessMadTransport::readPacket() {
  while (true) {
    const ssize_t n = ::recv(fd_, packet_.data(), packet_.size(), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n <= 0) {
      markDead(n == 0 ? "mad proxy (pid " + std::to_string(pid_) + ") exited"
                      : "mad proxy socket: " + std::string(std::strerror(errno)));
      return false;
    }
    const std::size_t count = static_cast<std::size_t>(n) / sizeof(proxy::ReplyRecord);
    for (std::size_t i = 0; i < count; ++i) {
      proxy::ReplyRecord r;
      std::memcpy(&r, packet_.data() + i * sizeof r, sizeof r);
      ReceivedMad m;
      m.mad = r.mad;
      m.umadStatus = r.umadStatus;
      m.sourceLid = Lid(r.sourceLid);
      replies_.push_back(m);
    }
    return true;
  }
}

ReceiveResult SubprocessMadTransport::receive(std::chrono::nanoseconds timeout) {
  ReceiveResult result;
  auto pop = [&] {
    result.status = ReceiveStatus::kMad;
    result.mad = replies_.front();
    replies_.pop_front();
    return result;
  };
  auto broken = [&] {
    result.status = ReceiveStatus::kError;
    result.error = fatalError();
    return result;
  };
  if (!replies_.empty()) return pop();
  if (fd_ < 0) {
    result.status = ReceiveStatus::kError;
    result.error = "mad proxy not open";
    return result;
  }
  if (dead_) {
    // Pace a caller that loops on errors (the engine does, until its timers expire).
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(timeout, 100ms));
    return broken();
  }
  flush();
  const auto deadline = Clock::now() + timeout;
  while (!dead_) {
    const short events = POLLIN | (pendingCount_ > 0 ? POLLOUT : 0);
    const short ready = waitFd(fd_, events, deadline - Clock::now());
    if (ready & (POLLIN | POLLHUP | POLLERR)) {
      if (!readPacket()) return broken();
      if (!replies_.empty()) return pop();
    } else if (ready & POLLOUT) {
      flush();
    }
    if (Clock::now() >= deadline) break;
  }
  if (dead_) return broken();
  result.status = ReceiveStatus::kTimeout;
  return result;
}

std::string SubprocessMadTransport::reap() {
  if (pid_ <= 0) return "exited";
  const auto until = Clock::now() + options_.exitGrace;
  int status = 0;
  std::string how = "exited";
  while (true) {
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      how = describeStatus(status);
      break;
    }
    if (r < 0 && errno != EINTR) break;
    if (Clock::now() >= until) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      how = "did not exit within " + std::to_string(options_.exitGrace.count()) + " ms (killed)";
      break;
    }
    std::this_thread::sleep_for(5ms);
  }
  pid_ = -1;
  return how;
}

void SubprocessMadTransport::close() {
  if (fd_ >= 0) {
    ::close(fd_);  // EOF for the child: it closes its port and exits
    fd_ = -1;
  }
  reap();
  if (stderrReader_.joinable()) stderrReader_.join();
  if (stderrFd_ >= 0) {
    ::close(stderrFd_);
    stderrFd_ = -1;
  }
  pending_.clear();
  pendingCount_ = 0;
  replies_.clear();
  description_.clear();
  dead_ = false;
  std::lock_guard lock(mu_);
  fatal_.clear();
  lastStderr_.clear();
  proxyLine_.clear();
}

std::string SubprocessMadTransport::stderrSuffix() const {
  std::lock_guard lock(mu_);
  const std::string& line = proxyLine_.empty() ? lastStderr_ : proxyLine_;
  return line.empty() ? std::string() : ": " + line;
}

std::string SubprocessMadTransport::fatalError() const {
  std::lock_guard lock(mu_);
  return fatal_;
}

}  // namespace ibfabric::mad
