// RestServer: the HTTP surface of the daemon — the REST API under /api/v1 (docs/api.md,
// api/http/openapi.json) and /metrics — on one cpp-httplib server.
//
// Every handler reads one ServiceState snapshot (FabricService::state()) and renders from it, so
// it never blocks a sweep. Errors are JSON: {"error": {"code": <status>, "message": "..."}}.
// Writes (POST) need "Authorization: Bearer <token>" with the configured token; without a
// configured token they are refused (403).
//
// Thread-safety: bind() then run() on one thread; stop() and setToken() from any other.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/http/auth.h"
#include "api/metrics/metrics_page.h"
#include "api/service/daemon_services.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace ibfabric::api {

struct RestOptions {
  std::string token;  ///< Bearer token for POST endpoints; empty = writes disabled.
  std::size_t threads = 16;
  std::size_t maxBodyBytes = 64 * 1024;
  /// Longest long-poll wait a client may ask for (/events?wait=).
  std::chrono::seconds maxWait{60};
  /// Long-polls waiting at once; further ones are answered at once (as with wait=0), so
  /// waiters never take every server thread.
  std::size_t maxWaiters = 8;
  /// How long POST .../clear-counters waits for the sweep thread (504 after).
  std::chrono::milliseconds clearTimeout{10'000};
  /// PEM certificate and key: serve HTTPS (cpp-httplib's SSLServer). Both or neither.
  std::string tlsCert;
  std::string tlsKey;
  MetricsOptions metrics;
};

class RestServer {
 public:
  /// Throws std::runtime_error when the TLS certificate or key cannot be loaded.
  RestServer(DaemonServices services, RestOptions options);
  ~RestServer();
  RestServer(const RestServer&) = delete;
  RestServer& operator=(const RestServer&) = delete;

  /// Binds; port 0 picks a free port. Returns the bound port, or -1 on failure.
  int bind(const std::string& host, int port);
  /// Serves until stop(). Returns false when the server failed.
  bool run();
  void stop();
  void setToken(std::string token);

 private:
  void routes();
  /// Operational endpoints (api/http/rest_server_ops.cpp): health/live, health/ready,
  /// ports/{guid}/{port}/clear-counters, topology/compare.
  void opsRoutes();

  DaemonServices services_;
  FabricService& service_;
  RestOptions options_;
  BearerAuth auth_;
  std::unique_ptr<MetricsPage> metrics_;  // /metrics
  std::atomic<std::size_t> waiters_{0};   // long-polls waiting now
  std::unique_ptr<httplib::Server> server_;
};

/// An HTTP server, or an HTTPS one when `cert` and `key` (PEM files) are given; throws
/// std::runtime_error when they cannot be loaded (api/http/rest_server_ops.cpp).
std::unique_ptr<httplib::Server> makeHttpServer(const std::string& cert, const std::string& key);

/// The OpenAPI document (api/http/openapi.json, embedded at build time).
const std::string& openApiDocument();

}  // namespace ibfabric::api
