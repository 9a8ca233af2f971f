// RestServer: the HTTP surface of the daemon — the REST API under /api/v1 (docs/api.md,
// api/openapi.json) and /metrics — on one cpp-httplib server.
//
// Every handler reads one ServiceState snapshot (FabricService::state()) and renders from it, so
// it never blocks a sweep. Errors are JSON: {"error": {"code": <status>, "message": "..."}}.
// Writes (POST) need "Authorization: Bearer <token>" with the configured token; without a
// configured token they are refused (403).
//
// Thread-safety: bind() then run() on one thread; stop() and setToken() from any other.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "api/fabric_service.h"

namespace httplib {
class Server;
}

namespace ibfabric::api {

struct SchedulerHooks;  // api/export_endpoints.h

struct RestOptions {
  std::string token;  ///< Bearer token for POST endpoints; empty = writes disabled.
  std::size_t threads = 16;
  std::size_t maxBodyBytes = 64 * 1024;
  /// Longest long-poll wait a client may ask for (/events?wait=).
  std::chrono::seconds maxWait{60};
  /// Placement engine / job-group hosts for the kube-scheduler extender; null = none.
  std::shared_ptr<const SchedulerHooks> scheduler;
};

class RestServer {
 public:
  RestServer(FabricService& service, RestOptions options);
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
  std::string token() const;

  /// /metrics text of one state, rendered once however many scrapers ask.
  std::shared_ptr<const std::string> metricsFor(const ServiceStatePtr& state);

  FabricService& service_;
  RestOptions options_;
  mutable std::mutex tokenMu_;
  std::mutex metricsMu_;  // held while rendering: concurrent scrapes of one state wait for it
  std::weak_ptr<const ServiceState> metricsState_;
  std::uint64_t metricsEvents_ = 0;
  std::shared_ptr<const std::string> metricsText_;
  std::unique_ptr<httplib::Server> server_;
};

/// The OpenAPI document (api/openapi.json, embedded at build time).
const std::string& openApiDocument();

}  // namespace ibfabric::api
