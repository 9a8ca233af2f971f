// HttpFront: the plain-HTTP connection handling of the daemon's server, on cpp-httplib, made to
// hold against slow, idle and too many clients. cpp-httplib (0.11) gives every connection a
// worker thread from accept() to close, so 16 idle or trickling connections take every worker;
// its read timeout is per read(), so a client sending one header line every few seconds keeps a
// worker for ever. HttpFront keeps httplib's accept loop, request parser, router and response
// writer (Server::process_request) and replaces what happens between accept() and close():
//
//   - the gate: one thread holds every connection that has no complete request header yet (new
//     connections and idle keep-alive ones) in an epoll set, peeking (MSG_PEEK) at what arrived.
//     Such connections cost a file descriptor, not a worker. A connection whose header is not
//     complete within `headerTimeout` of its first byte, or that sends nothing for
//     `idleTimeout`, is closed; a header longer than 16 KiB is answered 431 and closed;
//   - two worker pools: a connection whose header is complete goes to the health pool when its
//     request line is GET /api/v1/health/live or /api/v1/health/ready, else to the main pool.
//     Each pool has a bounded queue: when it is full (and no worker is idle) the connection is
//     answered 503 at once (JSON error, Retry-After: 1, Connection: close) from the gate thread,
//     never queued. A pipelined request goes on on the same worker only when it belongs to the
//     same pool; else the connection goes back through the gate;
//   - per request, on a worker: the whole request (header and body) must arrive within
//     `requestTimeout` (its header within what is left of `headerTimeout`), each read within
//     `readTimeout`, each write within `writeTimeout`, the whole answer within `requestTimeout`
//     from its first byte; at most
//     `bodyLimit` bytes of body are received (counted on the wire, chunked or not: see
//     limitCurrentRequestBody), then the connection is answered 413 and closed;
//   - keep-alive: at most `keepAliveMax` requests and `keepAliveLifetime` per connection; between
//     requests the connection goes back to the gate (an idle keep-alive client holds no worker);
//   - at most `maxConnections` open connections; one more is answered 503 and closed;
//   - stop() wakes the workers (their sockets are shut down), answers the queued connections
//     503 and returns within about a second whatever the clients do.
//
// TLS is not handled here: cpp-httplib's SSL stream is internal to its SSLServer and cannot be
// driven from outside, so an HTTPS server keeps httplib's own thread per connection (with the
// timeouts and keep-alive bounds set) — see docs/reliability.md.
//
// Owned by RestServer, which calls install() before the server listens. Thread-safety: the
// gate and the workers are internal threads; stats() from any thread.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace ibfabric::api {

struct HttpLimits {
  std::size_t workers = 16;       ///< threads of the main pool
  std::size_t healthWorkers = 2;  ///< threads reserved for /api/v1/health/{live,ready}
  std::size_t maxQueued = 64;     ///< complete requests waiting for a main worker (then 503)
  std::size_t maxHealthQueued = 32;
  std::size_t maxConnections = 2048;             ///< open connections (then 503)
  std::chrono::milliseconds idleTimeout{5'000};  ///< no byte of a (next) request: close
  /// First byte of a request to the end of its header.
  std::chrono::milliseconds headerTimeout{10'000};
  std::chrono::milliseconds readTimeout{5'000};      ///< one read of a body
  std::chrono::milliseconds writeTimeout{10'000};    ///< one write of an answer
  std::chrono::milliseconds requestTimeout{60'000};  ///< the whole request, header and body
  std::size_t keepAliveMax = 100;                    ///< requests per connection
  int listenBacklog = 1024;                          ///< connections not yet accepted
  std::chrono::milliseconds keepAliveLifetime{120'000};
};

/// What the front did since it started (for tests and the access log).
struct HttpFrontStats {
  std::uint64_t accepted = 0;
  std::uint64_t refusedBusy = 0;            ///< 503: a queue or the connection limit was full
  std::uint64_t closedIdle = 0;             ///< no request within idleTimeout
  std::uint64_t closedSlowHeader = 0;       ///< header not complete within headerTimeout
  std::uint64_t refusedTooLarge = 0;        ///< 413 on bytes received
  std::uint64_t refusedHeaderTooLarge = 0;  ///< 431: no end of header in the first 16 KiB
  std::uint64_t requests = 0;
  std::uint64_t open = 0;     ///< connections open now
  std::uint64_t serving = 0;  ///< connections on a worker now
  std::uint64_t queued = 0;   ///< connections waiting for a worker now
};

/// Within a request served by an HttpFront (on its worker thread): the body of this request may
/// have at most `bytes` bytes on the wire (chunk framing included); more ends the request with
/// 413. Does nothing on other threads (an HTTPS server). Called by the router's pre-routing
/// handler once it knows the route.
void limitCurrentRequestBody(std::size_t bytes);
/// Within a request served by an HttpFront: the request declared no body (neither
/// Content-Length nor Transfer-Encoding), so its body is empty (RFC 9112 6.3) and is not
/// waited for. Does nothing on other threads.
void currentRequestHasNoBody();
/// true when the current request (an HttpFront worker thread) was cut at its body limit.
bool currentRequestTooLarge();
/// The current request's body is left unread (refused before reading it): the connection is
/// closed after the answer. Does nothing on other threads.
void closeCurrentConnection();

class HttpFront;

/// A cpp-httplib server whose connections are handled by an HttpFront.
class FrontedServer : public httplib::Server {
 public:
  explicit FrontedServer(HttpLimits limits);
  ~FrontedServer() override;
  HttpFrontStats stats() const;
  /// After a bind: the listening socket's accept backlog (httplib listens with 5, so a burst of
  /// connections beyond 5 waits a SYN retransmission, 1 s, for each overflow).
  void setListenBacklog(int backlog);

 private:
  friend class HttpFront;
  /// Called by httplib's accept loop for each accepted socket: hands it to the gate.
  bool process_and_close_socket(socket_t sock) override;
  /// One request on `strm` (httplib's parser, router and writer).
  bool serveOne(httplib::Stream& strm, bool closeConnection, bool& connectionClosed,
                const std::string& remoteAddr, int remotePort);

  std::unique_ptr<HttpFront> front_;
};

}  // namespace ibfabric::api
