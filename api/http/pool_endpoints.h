// PoolService: the GPU pool allocator (scheduler_hooks/pool.h) inside the daemon — its REST face
// under /api/v1/pool (docs/pool.md, api/http/openapi.json), its /metrics families, and a follower
// thread that feeds the pool the service's topology snapshots and events (link down, degraded,
// ...) so allocations on failing hosts turn degraded. Degraded allocations are appended to the
// service's EventLog as `pool_allocation_degraded`.
//
// The follower reads FabricService::state() and EventLog::query()/waitForNewer(): it never
// blocks a crawl or a sweep.
//
// Thread-safety: start()/stop() from one thread; the routes and renderMetrics() from any.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "api/service/fabric_service.h"
#include "api/service/pool_config.h"
#include "api/http/rest_server.h"
#include "scheduler_hooks/pool.h"

namespace prometheus {
class Registry;
class Histogram;
}  // namespace prometheus

namespace ibfabric::api {

class PoolService {
 public:
  /// Loads the inventory file and replays the journal; throws scheduler_hooks::PoolError or
  /// scheduler_hooks::InventoryError. An empty `placer` gets the daemon's placer (see
  /// makeDaemonPlacer in pool_endpoints.cpp).
  PoolService(FabricService& service, const PoolConfig& config, routing::Placer placer = {},
              std::function<std::chrono::system_clock::time_point()> clock = {});
  ~PoolService();
  PoolService(const PoolService&) = delete;
  PoolService& operator=(const PoolService&) = delete;

  void start();
  void stop();

  scheduler_hooks::Pool& pool() { return *pool_; }
  /// Registers the routes and the metrics on `server`.
  void attach(RestServer& server);
  std::string renderMetrics() const;

 private:
  void follow();
  void routes(httplib::Server& svr, const RestServer::Authorizer& authorize);

  FabricService& service_;
  std::unique_ptr<scheduler_hooks::Pool> pool_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Histogram* duration_ = nullptr;
  std::atomic<bool> stop_{false};
  std::thread follower_;
};

}  // namespace ibfabric::api
