// PoolService: the GPU pool allocator (scheduler_hooks/pool.h) inside the daemon. It loads the
// inventory, replays the journal, places allocations through the daemon's one PlacementService
// (leaf packing until routes and a sweep exist), and runs a follower thread that feeds the pool
// the service's topology snapshots and events (link down, degraded, ...) so allocations on
// failing hosts turn degraded; those are appended to the service's EventLog as
// `pool_allocation_degraded`. It times every allocation (PoolStats, read by the metrics room).
// Its REST face is api/http/routes/pool_routes.cpp, its /metrics families
// api/metrics/pool_collector.cpp.
//
// The follower reads FabricService::state() and EventLog::query()/waitForNewer(): it never
// blocks a crawl or a sweep.
//
// Owned by the daemon's main (the FabricService and PlacementService outlive it).
// Thread-safety: start()/stop() from one thread; allocate(), pool() and stats() from any.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "api/service/fabric_service.h"
#include "api/service/placement_service.h"
#include "api/service/pool_config.h"
#include "scheduler_hooks/pool.h"

namespace ibfabric::api {

/// Allocation request durations; a plain value.
struct PoolStats {
  static constexpr std::array<double, 11> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,   0.1,   0.25,   0.5,   1.0};
  std::array<std::uint64_t, kBuckets.size() + 1> buckets{};  ///< per bucket, last = +Inf
  double sumSeconds = 0.0;
};

class PoolService {
 public:
  /// Loads the inventory file and replays the journal; throws scheduler_hooks::PoolError or
  /// scheduler_hooks::InventoryError. An empty `placer` gets the daemon's placer: `placement`,
  /// with leaf packing while it is not ready.
  PoolService(FabricService& service, PlacementService& placement, const PoolConfig& config,
              routing::Placer placer = {},
              std::function<std::chrono::system_clock::time_point()> clock = {});
  ~PoolService();
  PoolService(const PoolService&) = delete;
  PoolService& operator=(const PoolService&) = delete;

  void start();
  void stop();

  scheduler_hooks::Pool& pool() { return *pool_; }
  const scheduler_hooks::Pool& pool() const { return *pool_; }
  /// Pool::allocate, timed into stats().
  scheduler_hooks::AllocationResult allocate(const scheduler_hooks::AllocationRequest& request);
  PoolStats stats() const;

 private:
  void follow();

  FabricService& service_;
  std::unique_ptr<scheduler_hooks::Pool> pool_;
  mutable std::mutex statsMu_;
  PoolStats stats_;
  std::atomic<bool> stop_{false};
  std::thread follower_;
};

}  // namespace ibfabric::api
