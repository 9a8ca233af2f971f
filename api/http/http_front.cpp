#include "api/http/http_front.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "telemetry/heap_tuning.h"

namespace ibfabric::api {
namespace {

using Clock = std::chrono::steady_clock;

/// Bytes the gate peeks at: a request line and header longer than this are answered 431.
constexpr std::size_t kPeekBytes = 16 * 1024;
/// What an answer from the gate reads (and drops) of the request at most before it is sent.
constexpr std::size_t kDrainBytes = 64 * 1024;
/// After an answer that left the request's body unread (413, 415): what is read and dropped at
/// most, and for how long, before close() (so that the client receives the answer, not a reset).
constexpr std::size_t kLingerBytes = 1024 * 1024;
constexpr std::chrono::milliseconds kLinger{500};
/// A body this large, once answered, gives the freed heap back to the kernel.
constexpr std::size_t kReleaseHeapAfterBytes = 1024 * 1024;
constexpr std::size_t kNoLimit = static_cast<std::size_t>(-1);

/// One client connection, owned by the gate, a pool queue or a worker in turn.
struct Connection {
  int fd = -1;
  Clock::time_point opened;
  Clock::time_point deadline;        // in the gate: closed at this time
  Clock::time_point headerDeadline;  // the end of the next request's header is due
  bool started = false;              // a byte of the next request arrived
  std::size_t requests = 0;
  std::string readAhead;  // received, not yet handed to the parser (a pipelined request)
  std::string remoteAddr;
  int remotePort = -1;

  ~Connection() {
    if (fd >= 0) ::close(fd);
  }
};
using ConnectionPtr = std::unique_ptr<Connection>;

std::string ipOf(const sockaddr_storage& a) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (a.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, buf, sizeof buf);
  else if (a.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, buf, sizeof buf);
  return buf;
}

int portOf(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return -1;
}

/// Sends `text` without reading the request and ends the connection's output (the gate and
/// accept threads: never blocks). Up to kDrainBytes of the received request bytes are drained
/// first so the close is not a reset.
void answerAndEnd(int fd, const std::string& text) {
  char sink[4096];
  std::size_t drained = 0;
  for (ssize_t n = 0; drained < kDrainBytes; drained += static_cast<std::size_t>(n)) {
    n = ::recv(fd, sink, sizeof sink, MSG_DONTWAIT);
    if (n <= 0) break;
  }
  [[maybe_unused]] auto n = ::send(fd, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
}

std::string errorAnswer(int code, const char* reason, const char* message, const char* extra) {
  const std::string body =
      "{\"error\":{\"code\":" + std::to_string(code) + ",\"message\":\"" + message + "\"}}\n";
  return "HTTP/1.1 " + std::to_string(code) + " " + reason +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n" + extra + "Connection: close\r\n\r\n" + body;
}

/// Answers 503 and closes (see answerAndEnd).
void refuseBusy(int fd) {
  static const std::string text = errorAnswer(
      503, "Service Unavailable",
      "server busy: too many connections or requests waiting, retry later", "Retry-After: 1\r\n");
  answerAndEnd(fd, text);
}

/// Answers 431 (no end of the header within kPeekBytes) and closes (see answerAndEnd).
void refuseHeaderTooLarge(int fd) {
  static const std::string text =
      errorAnswer(431, "Request Header Fields Too Large", "request header over 16 KiB", "");
  answerAndEnd(fd, text);
}

int msUntil(Clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return ms <= 0 ? 0 : static_cast<int>(std::min<long long>(ms, 60'000));
}

/// Ends the output and reads (drops) what the client still sends, up to kLingerBytes or kLinger,
/// or until it closes: a close() with unread bytes would reset the connection, and the client's
/// stack would drop the answer it had not read yet.
void lingerBeforeClose(int fd) {
  ::shutdown(fd, SHUT_WR);
  const auto until = Clock::now() + kLinger;
  char sink[16 * 1024];
  for (std::size_t drained = 0; drained < kLingerBytes;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, msUntil(until)) <= 0) break;
    const ssize_t n = ::recv(fd, sink, sizeof sink, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;
    if (n > 0) drained += static_cast<std::size_t>(n);
  }
}

/// httplib's view of one connection during one request: reads bounded by the request's
/// deadline (the header's by what is left of the header deadline), the per-read timeout and the
/// body limit; writes by the per-write timeout and the answer's deadline (requestTimeout from its
/// first byte).
class ConnStream final : public httplib::Stream {
 public:
  ConnStream(Connection& c, const HttpLimits& limits) : c_(c), limits_(limits) {}

  void beginRequest() {
    deadline_ = Clock::now() + limits_.requestTimeout;
    inHeader_ = true;
    answering_ = false;
    consumed_ = 0;
    bodyStart_ = 0;
    bodyLimit_ = kNoLimit;
    noBody_ = false;
    tooLarge_ = false;
    closeAfter_ = false;
  }
  void limitBody(std::size_t bytes) {
    inHeader_ = false;
    bodyStart_ = consumed_;
    // Chunk framing is counted too: a little room above the limit of the decoded body (which
    // the router checks exactly once the body is read).
    bodyLimit_ = bytes + bytes / 8 + 4096;
  }
  void noBody() {
    inHeader_ = false;
    bodyStart_ = consumed_;
    noBody_ = true;
  }
  bool tooLarge() const { return tooLarge_; }
  bool broken() const { return broken_ || tooLarge_ || closeAfter_; }
  /// The answer was sent with the request's body (partly) unread.
  bool bodyLeftUnread() const { return !broken_ && (tooLarge_ || closeAfter_); }
  void closeAfter() {
    inHeader_ = false;
    closeAfter_ = true;
  }
  std::size_t bodyBytes() const { return consumed_ - bodyStart_; }

  bool is_readable() const override { return !c_.readAhead.empty() || waitFor(POLLIN); }
  bool is_writable() const override { return waitFor(POLLOUT); }

  ssize_t read(char* ptr, size_t size) override {
    if (noBody_) return 0;
    if (broken_ || tooLarge_) return -1;
    if (c_.readAhead.empty() && !fill()) return broken_ ? -1 : 0;
    std::size_t n = std::min(size, c_.readAhead.size());
    if (bodyLimit_ != kNoLimit) {
      const std::size_t left =
          bodyStart_ + bodyLimit_ - std::min(consumed_, bodyStart_ + bodyLimit_);
      if (left == 0) {
        tooLarge_ = true;
        return -1;
      }
      n = std::min(n, left);
    }
    std::memcpy(ptr, c_.readAhead.data(), n);
    c_.readAhead.erase(0, n);
    consumed_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!answering_) {
      answering_ = true;
      answerDeadline_ = Clock::now() + limits_.requestTimeout;
    }
    for (;;) {
      if (Clock::now() >= answerDeadline_) {
        broken_ = true;  // a client reading a few bytes now and then
        return -1;
      }
      const ssize_t n = ::send(c_.fd, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if ((errno != EAGAIN && errno != EWOULDBLOCK) || !waitFor(POLLOUT)) {
        broken_ = true;
        return -1;
      }
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.remoteAddr;
    port = c_.remotePort;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getsockname(c_.fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      ip = ipOf(a);
      port = portOf(a);
    }
  }
  socket_t socket() const override { return c_.fd; }

 private:
  /// Waits for `events` within the per-operation timeout and the request's (a read) or the
  /// answer's (a write) deadline.
  bool waitFor(short events) const {
    auto until = Clock::now() + (events == POLLIN ? limits_.readTimeout : limits_.writeTimeout);
    if (events == POLLIN) {
      until = std::min(until, deadline_);
      if (inHeader_) until = std::min(until, c_.headerDeadline);
    } else if (answering_) {
      until = std::min(until, answerDeadline_);
    }
    for (;;) {
      pollfd p{c_.fd, events, 0};
      const int r = ::poll(&p, 1, msUntil(until));
      if (r > 0) return true;
      if (r == 0 || errno != EINTR) return false;
    }
  }
  /// Receives more bytes; false at the end of the stream, a timeout or an error.
  bool fill() {
    if (!waitFor(POLLIN)) {
      broken_ = true;
      return false;
    }
    char buf[16 * 1024];
    const ssize_t n = ::recv(c_.fd, buf, sizeof buf, 0);
    if (n <= 0) {
      broken_ = n < 0;
      return false;
    }
    c_.readAhead.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  Connection& c_;
  const HttpLimits& limits_;
  Clock::time_point deadline_;
  Clock::time_point answerDeadline_;
  bool inHeader_ = true;    // the router has not seen the header yet
  bool answering_ = false;  // the answer's first byte was written
  std::size_t consumed_ = 0;
  std::size_t bodyStart_ = 0;
  std::size_t bodyLimit_ = kNoLimit;
  bool noBody_ = false;
  bool tooLarge_ = false;
  bool broken_ = false;
  bool closeAfter_ = false;  // the request's body was left unread: no next request
};

thread_local ConnStream* tCurrent = nullptr;

/// Runs every task at once on the caller's thread: httplib's accept loop only hands the socket
/// to the gate (FrontedServer::process_and_close_socket), which never blocks.
class InlineQueue final : public httplib::TaskQueue {
 public:
  explicit InlineQueue(std::function<void()> onShutdown) : onShutdown_(std::move(onShutdown)) {}
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override { onShutdown_(); }

 private:
  std::function<void()> onShutdown_;
};

}  // namespace

void limitCurrentRequestBody(std::size_t bytes) {
  if (tCurrent) tCurrent->limitBody(bytes);
}
void currentRequestHasNoBody() {
  if (tCurrent) tCurrent->noBody();
}
bool currentRequestTooLarge() { return tCurrent && tCurrent->tooLarge(); }
void closeCurrentConnection() {
  if (tCurrent) tCurrent->closeAfter();
}

/// The gate thread and the two worker pools of one FrontedServer.
class HttpFront {
 public:
  HttpFront(FrontedServer& server, HttpLimits limits)
      : server_(server),
        limits_(limits),
        main_(*this, limits_.workers, limits_.maxQueued),
        health_(*this, limits_.healthWorkers, limits_.maxHealthQueued) {
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wake_;
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &ev);
  }
  ~HttpFront() {
    stop();
    ::close(epoll_);
    ::close(wake_);
  }

  void start() {
    std::lock_guard lock(mu_);
    if (started_ || stopped_) return;
    started_ = true;
    gate_ = std::thread([this] { runGate(); });
    main_.start();
    health_.start();
  }

  /// Closes every connection; joins the gate and the workers. The sockets being served are shut
  /// down (a worker waiting for a client is woken at once), the queued connections answered 503.
  void stop() {
    std::vector<ConnectionPtr> arrived;
    {
      std::lock_guard lock(mu_);
      if (stopped_) return;
      stopped_ = true;
      // First: a worker woken below takes no queued connection (those are answered 503).
      main_.halt();
      health_.halt();
      arrived.swap(incoming_);
      for (int fd : serving_) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& c : arrived) closed(*c);
    wake();
    if (gate_.joinable()) gate_.join();
    main_.stop();
    health_.stop();
  }

  /// A new connection from the accept loop.
  void accept(int fd) {
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->opened = Clock::now();
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      c->remoteAddr = ipOf(a);
      c->remotePort = portOf(a);
    }
    bool full = false;
    {
      std::lock_guard lock(statsMu_);
      ++stats_.accepted;
      full = stats_.open >= limits_.maxConnections;
      if (full)
        ++stats_.refusedBusy;
      else
        ++stats_.open;
    }
    if (full) return refuseBusy(fd);  // closed by ~Connection
    toGate(std::move(c));
  }

  HttpFrontStats stats() const {
    const std::size_t queued = main_.size() + health_.size();
    std::lock_guard lock(statsMu_);
    HttpFrontStats s = stats_;
    s.queued = queued;
    return s;
  }

 private:
  class Pool {
   public:
    Pool(HttpFront& front, std::size_t threads, std::size_t maxQueued)
        : front_(front), threads_(std::max<std::size_t>(threads, 1)), maxQueued_(maxQueued) {}
    void start() {
      for (std::size_t i = 0; i < threads_; ++i) workers_.emplace_back([this] { run(); });
    }
    /// false when the queue is full and no worker is idle (the caller refuses the connection).
    bool tryPush(ConnectionPtr& c) {
      {
        std::lock_guard lock(mu_);
        if (stopped_ || queue_.size() >= maxQueued_ + idle_) return false;
        queue_.push_back(std::move(c));
      }
      cv_.notify_one();
      return true;
    }
    /// No connection is taken from the queue any more.
    void halt() {
      {
        std::lock_guard lock(mu_);
        stopped_ = true;
      }
      cv_.notify_all();
    }
    void stop() {
      halt();
      for (auto& t : workers_) t.join();
      workers_.clear();
      for (auto& c : queue_) {
        refuseBusy(c->fd);
        front_.closed(*c);
      }
      queue_.clear();
    }
    std::size_t size() const {
      std::lock_guard lock(mu_);
      return queue_.size();
    }

   private:
    void run() {
      for (;;) {
        ConnectionPtr c;
        {
          std::unique_lock lock(mu_);
          ++idle_;
          cv_.wait(lock, [this] { return stopped_ || !queue_.empty(); });
          --idle_;
          if (stopped_) return;
          c = std::move(queue_.front());
          queue_.pop_front();
        }
        front_.serve(std::move(c), *this);
      }
    }

    HttpFront& front_;
    std::size_t threads_;
    std::size_t maxQueued_;
    std::size_t idle_ = 0;  // workers waiting for a connection
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<ConnectionPtr> queue_;
    std::vector<std::thread> workers_;
    bool stopped_ = false;
  };

  void wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_, &one, sizeof one);
  }

  /// Into the gate (from any thread): waits there for its next request header.
  void toGate(ConnectionPtr c) {
    // A part (or the whole) of the next header may be read ahead already.
    c->started = !c->readAhead.empty();
    c->deadline = Clock::now() + (c->started ? limits_.headerTimeout : limits_.idleTimeout);
    c->headerDeadline = c->deadline;
    {
      std::lock_guard lock(mu_);
      if (!stopped_) {
        incoming_.push_back(std::move(c));
        c = nullptr;
      }
    }
    if (c) return closed(*c);
    wake();
  }

  void closed(const Connection&) {
    std::lock_guard lock(statsMu_);
    --stats_.open;
  }

  void count(std::uint64_t HttpFrontStats::*field) {
    std::lock_guard lock(statsMu_);
    ++(stats_.*field);
  }

  void runGate() {
    std::unordered_map<int, ConnectionPtr> held;
    epoll_event events[64];
    auto lastSweep = Clock::now();
    for (;;) {
      const int n = ::epoll_wait(epoll_, events, 64, 100);
      // Drained before the list is taken: a connection queued after this wakes the next wait.
      std::uint64_t v;
      while (::read(wake_, &v, sizeof v) > 0) {
      }
      std::vector<ConnectionPtr> arrived;
      {
        std::lock_guard lock(mu_);
        if (stopped_) break;
        arrived.swap(incoming_);
      }
      for (auto& c : arrived) {
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
        ev.data.fd = c->fd;
        const int fd = c->fd;
        if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) != 0) {
          closed(*c);
          continue;
        }
        held[fd] = std::move(c);
        inspect(held, fd);  // bytes may be there already
      }
      for (int i = 0; i < n; ++i) {
        if (events[i].data.fd == wake_) continue;
        inspect(held, events[i].data.fd);
      }
      if (Clock::now() - lastSweep >= std::chrono::milliseconds(100)) {
        lastSweep = Clock::now();
        expire(held);
      }
    }
    for (auto& [fd, c] : held) closed(*c);
  }

  /// Peeks at what a held connection sent: dispatches it once its request header is complete,
  /// closes it at the end of the stream.
  void inspect(std::unordered_map<int, ConnectionPtr>& held, int fd) {
    auto it = held.find(fd);
    if (it == held.end()) return;
    Connection& c = *it->second;
    char buf[kPeekBytes];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
    const bool nothingYet = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
    // A part of the header (or a whole one) may have come with the previous request.
    const bool aheadComplete = c.readAhead.find("\r\n\r\n") != std::string::npos;
    if (n == 0 || (n < 0 && !nothingYet)) {
      if (!aheadComplete) return drop(held, it);
    } else if (nothingYet && !aheadComplete) {
      return;
    }
    const std::size_t got = n > 0 ? static_cast<std::size_t>(n) : 0;
    if (!c.started) {
      c.started = true;
      c.deadline = Clock::now() + limits_.headerTimeout;
      c.headerDeadline = c.deadline;
    }
    std::string joined;
    if (!c.readAhead.empty()) joined = c.readAhead + std::string(buf, got);
    const std::string_view head =
        joined.empty() ? std::string_view(buf, got) : std::string_view(joined);
    const bool complete = head.find("\r\n\r\n") != std::string_view::npos;
    if (!complete && head.size() < kPeekBytes) return;  // not complete yet: wait for more
    ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
    ConnectionPtr conn = std::move(it->second);
    held.erase(it);
    if (!complete) {
      count(&HttpFrontStats::refusedHeaderTooLarge);
      refuseHeaderTooLarge(conn->fd);
      return closed(*conn);
    }
    Pool& pool = poolOf(head);
    if (!pool.tryPush(conn)) {
      count(&HttpFrontStats::refusedBusy);
      refuseBusy(conn->fd);
      closed(*conn);
    }
  }

  Pool& poolOf(std::string_view head) { return isHealthProbe(head) ? health_ : main_; }

  static bool isHealthProbe(std::string_view head) {
    for (std::string_view p : {"GET /api/v1/health/live", "GET /api/v1/health/ready"}) {
      if (head.substr(0, p.size()) != p || head.size() <= p.size()) continue;
      const char next = head[p.size()];
      if (next == ' ' || next == '?') return true;
    }
    return false;
  }

  void drop(std::unordered_map<int, ConnectionPtr>& held,
            std::unordered_map<int, ConnectionPtr>::iterator it) {
    ::epoll_ctl(epoll_, EPOLL_CTL_DEL, it->first, nullptr);
    closed(*it->second);
    held.erase(it);
  }

  void expire(std::unordered_map<int, ConnectionPtr>& held) {
    const auto now = Clock::now();
    for (auto it = held.begin(); it != held.end();) {
      auto next = std::next(it);
      if (now >= it->second->deadline) {
        count(it->second->started ? &HttpFrontStats::closedSlowHeader
                                  : &HttpFrontStats::closedIdle);
        drop(held, it);
      }
      it = next;
    }
  }

  /// Serves a connection's requests on a worker of `pool`, then hands it back to the gate (or
  /// closes it).
  void serve(ConnectionPtr c, Pool& pool) {
    beginServing(c->fd);
    ConnStream strm(*c, limits_);
    tCurrent = &strm;
    bool keep = false;
    for (;;) {
      strm.beginRequest();
      const bool last = c->requests + 1 >= limits_.keepAliveMax ||
                        Clock::now() - c->opened >= limits_.keepAliveLifetime || stopping();
      bool connectionClosed = false;
      const bool ok = server_.serveOne(strm, last, connectionClosed, c->remoteAddr, c->remotePort);
      ++c->requests;
      count(&HttpFrontStats::requests);
      if (strm.tooLarge()) count(&HttpFrontStats::refusedTooLarge);
      if (strm.bodyBytes() >= kReleaseHeapAfterBytes) telemetry::releaseFreeHeap();
      keep = ok && !connectionClosed && !last && !strm.broken();
      // A whole pipelined header of this pool's is served on this worker; one of the other pool
      // goes through the gate (and that pool's queue bound); a part of one waits in the gate.
      if (!keep || c->readAhead.find("\r\n\r\n") == std::string::npos) break;
      if (&poolOf(c->readAhead) != &pool) break;
      c->headerDeadline = Clock::now() + limits_.headerTimeout;
    }
    tCurrent = nullptr;
    if (!keep && strm.bodyLeftUnread()) lingerBeforeClose(c->fd);
    endServing(c->fd);
    if (keep) return toGate(std::move(c));
    closed(*c);
  }

  /// `fd` is on a worker: stop() shuts it down (at once when stopping already).
  void beginServing(int fd) {
    {
      std::lock_guard lock(mu_);
      serving_.insert(fd);
      if (stopped_) ::shutdown(fd, SHUT_RDWR);
    }
    std::lock_guard lock(statsMu_);
    ++stats_.serving;
  }
  /// Before the fd may be closed (stop() never shuts down a number reused by another socket).
  void endServing(int fd) {
    {
      std::lock_guard lock(mu_);
      serving_.erase(fd);
    }
    std::lock_guard lock(statsMu_);
    --stats_.serving;
  }

  bool stopping() {
    std::lock_guard lock(mu_);
    return stopped_;
  }

  FrontedServer& server_;
  const HttpLimits limits_;
  int epoll_ = -1;
  int wake_ = -1;
  std::mutex mu_;
  std::vector<ConnectionPtr> incoming_;
  std::unordered_set<int> serving_;  // fds on a worker now
  bool started_ = false;
  bool stopped_ = false;
  std::thread gate_;
  Pool main_;
  Pool health_;
  mutable std::mutex statsMu_;
  HttpFrontStats stats_;
};

FrontedServer::FrontedServer(HttpLimits limits)
    : front_(std::make_unique<HttpFront>(*this, limits)) {
  const auto secs = [](std::chrono::milliseconds d) {
    return std::max<time_t>(1, static_cast<time_t>((d.count() + 999) / 1000));
  };
  set_read_timeout(secs(limits.readTimeout), 0);
  set_write_timeout(secs(limits.writeTimeout), 0);
  set_keep_alive_max_count(std::max<std::size_t>(1, limits.keepAliveMax));
  set_keep_alive_timeout(secs(limits.idleTimeout));
  HttpFront* front = front_.get();
  new_task_queue = [front] {
    front->start();
    return new InlineQueue([front] { front->stop(); });
  };
}

FrontedServer::~FrontedServer() { front_->stop(); }

HttpFrontStats FrontedServer::stats() const { return front_->stats(); }

void FrontedServer::setListenBacklog(int backlog) {
  // listen() again on a listening socket changes its backlog (Linux).
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, backlog);
}

bool FrontedServer::process_and_close_socket(socket_t sock) {
  front_->accept(sock);
  return true;
}

bool FrontedServer::serveOne(httplib::Stream& strm, bool closeConnection, bool& connectionClosed,
                             const std::string& remoteAddr, int remotePort) {
  return process_request(strm, closeConnection, connectionClosed, [&](httplib::Request& req) {
    req.remote_addr = remoteAddr;
    req.remote_port = remotePort;
  });
}

}  // namespace ibfabric::api
