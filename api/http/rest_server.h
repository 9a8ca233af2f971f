// RestServer: the HTTP surface of the daemon — the REST API under /api/v1 (docs/api.md,
// api/http/openapi.json), the kube-scheduler extender verbs and /metrics — on one cpp-httplib
// server. Its routes are registered through one Router (api/http/router.h), one routes file per
// resource (api/http/routes/routes.h).
//
// Every handler reads one ServiceState snapshot (FabricService::state()) and renders from it, so
// it never blocks a sweep. Errors are JSON: {"error": {"code": <status>, "message": "..."}}.
// Writes (POST, PUT, DELETE that change something) need "Authorization: Bearer <token>" with the
// configured token; without a configured token they are refused (403).
//
// Thread-safety: bind() then run() on one thread; stop() and setToken() from any other.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "api/http/auth.h"
#include "api/http/http_front.h"
#include "api/metrics/metrics_page.h"
#include "api/service/daemon_services.h"
#include "scheduler_hooks/k8s_node_name_map.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace ibfabric::api {

class Router;

struct RestOptions {
  std::string token;  ///< Bearer token of the write routes (Access::kToken); empty = writes off.
  /// Worker threads of the main pool (HttpLimits::workers is taken from here).
  std::size_t threads = 16;
  /// Timeouts, keep-alive bounds, queue and connection limits (api/http/http_front.h).
  HttpLimits http;
  /// Body limit of every route that declares none (413 above it); the extender verbs declare
  /// kSchedulerMaxBodyBytes (api/http/routes/routes.h).
  std::size_t maxBodyBytes = 64 * 1024;
  /// Longest long-poll wait a client may ask for (/events?wait=).
  std::chrono::seconds maxWait{60};
  /// Kubernetes node names of the exports and the extender (config k8s_node_name_map); null =
  /// the lower-cased host names.
  std::shared_ptr<const scheduler_hooks::K8sNodeNameMap> k8sNodeNames;
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
  /// The same routes on a server the caller made (the REST fuzz targets feed theirs requests
  /// from memory: tests/fuzz/memory_server.h); bind() and run() are then the caller's business.
  RestServer(DaemonServices services, RestOptions options, std::unique_ptr<httplib::Server> server);
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
  /// JSON answers for exceptions and httplib's own errors (404, 413, ...); the access log.
  void errorHandlers();
  /// Every route of the daemon, resource by resource.
  void routes();

  DaemonServices services_;
  RestOptions options_;
  BearerAuth auth_;
  std::unique_ptr<MetricsPage> metrics_;  // /metrics
  // The server's handlers use the router and the members above: the server goes first.
  std::unique_ptr<Router> router_;
  std::atomic<bool> stopRequested_{false};  // stop() was called: run() returns at once
  std::atomic<bool> running_{false};        // inside run()
  std::unique_ptr<httplib::Server> server_;
};

/// An HTTP server whose connections an HttpFront handles, or an HTTPS one (cpp-httplib's own
/// thread per connection, with the timeouts and keep-alive bounds of `limits`) when `cert` and
/// `key` (PEM files) are given; throws std::runtime_error when they cannot be loaded.
std::unique_ptr<httplib::Server> makeHttpServer(const std::string& cert, const std::string& key,
                                                const HttpLimits& limits);

/// The OpenAPI document (api/http/openapi.json, embedded at build time).
const std::string& openApiDocument();

}  // namespace ibfabric::api
