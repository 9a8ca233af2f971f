#include "tools/osm_plugin/event_sender.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ibfabric::osm {
namespace {

class UnixConnection final : public Connection {
 public:
  explicit UnixConnection(int fd) : fd_(fd) {}
  ~UnixConnection() override { ::close(fd_); }
  bool send(std::string_view data) override {
    while (!data.empty()) {
      // MSG_NOSIGNAL: a daemon that went away must not SIGPIPE OpenSM.
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        return false;  // EPIPE, ECONNRESET, EAGAIN after the write timeout, ...
      }
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

 private:
  int fd_;
};

}  // namespace

ConnectionPtr connectUnixSocket(const std::string& path, std::chrono::milliseconds writeTimeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) return nullptr;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(writeTimeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((writeTimeout.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return nullptr;
  }
  return std::make_unique<UnixConnection>(fd);
}

std::chrono::milliseconds nextBackoff(std::chrono::milliseconds current,
                                      const SenderOptions& options) {
  if (current < options.backoffMin) return options.backoffMin;
  return std::min(current * 2, std::max(options.backoffMax, options.backoffMin));
}

EventSender::EventSender(Connector connector, SenderOptions options,
                         std::function<PluginEvent()> hello)
    : connector_(std::move(connector)),
      options_(options),
      hello_(std::move(hello)),
      queue_(options.queueCapacity) {}

EventSender::~EventSender() { stop(); }

void EventSender::start() {
  thread_ = std::thread([this] { loop(); });
}

void EventSender::stop() {
  {
    std::lock_guard lock(stopMu_);
    stopping_ = true;
  }
  stopCv_.notify_all();
  queue_.close();
  if (thread_.joinable()) thread_.join();
}

bool EventSender::report(PluginEvent event) noexcept {
  try {
    event.seq = nextSeq_++;
    if (!connected_) {
      queue_.countDropped(1);  // nobody listens: counted, not kept
      return false;
    }
    return queue_.tryPush(std::move(event));
  } catch (...) {
    queue_.countDropped(1);
    return false;
  }
}

bool EventSender::sleepFor(std::chrono::milliseconds d) {
  std::unique_lock lock(stopMu_);
  return !stopCv_.wait_for(lock, d, [&] { return stopping_; });
}

void EventSender::loop() {
  ConnectionPtr conn;
  std::chrono::milliseconds backoff{0};
  auto stopping = [&] {
    std::lock_guard lock(stopMu_);
    return stopping_;
  };
  while (!stopping()) {
    try {
      if (!conn) {
        ++connectAttempts_;
        conn = connector_ ? connector_() : nullptr;
        if (conn) {
          connected_ = true;  // from here on, reports are queued (after the hello)
          if (hello_) {
            PluginEvent hello = hello_();
            hello.type = PluginEventType::kHello;
            hello.seq = nextSeq_++;
            if (!conn->send(formatEventLine(hello, queue_.dropped()))) conn.reset();
          }
        }
        if (!conn) {
          connected_ = false;
          queue_.dropAll();  // left over from a broken connection: counted, not kept
          backoff = nextBackoff(backoff, options_);
          sleepFor(backoff);
          continue;
        }
        backoff = std::chrono::milliseconds{0};
        ++connections_;
      }
      auto event = queue_.popFor(std::chrono::milliseconds(200));
      if (!event) continue;
      const std::string line = formatEventLine(*event, queue_.dropped());
      if (line.empty()) {
        queue_.countDropped(1);
        continue;
      }
      if (!conn->send(line)) {
        queue_.countDropped(1);
        conn.reset();
        connected_ = false;
        continue;
      }
      ++sent_;
    } catch (...) {
      // Nothing may escape into OpenSM's process: count and carry on with a fresh connection.
      queue_.countDropped(1);
      conn.reset();
      connected_ = false;
      sleepFor(options_.backoffMin);
    }
  }
  connected_ = false;
}

}  // namespace ibfabric::osm
