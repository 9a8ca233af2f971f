#include "api/service/pool_service.h"

#include <spdlog/spdlog.h>

#include "scheduler_hooks/pool/inventory.h"
#include "scheduler_hooks/pool_placer.h"

namespace ibfabric::api {
namespace {

using scheduler_hooks::PoolError;

/// The placer the daemon gives the pool: the placement engine on the live routes and link load
/// (api/service/placement_service.h). Until the first forwarding tables are read (or when the
/// counter source has none), the leaf-packing placer answers instead, so the pool never waits on
/// routing.
routing::Placer makeDaemonPlacer(FabricService& service, PlacementService& engine) {
  auto fallback =
      scheduler_hooks::makeLeafPackingPlacer([&service] { return service.state()->topology; });
  return [&engine, fallback](const routing::PlacementRequest& request) {
    try {
      return engine.place(request);
    } catch (const routing::PlacementError& e) {
      if (e.kind() != routing::PlacementError::Kind::kNotReady) throw;
      spdlog::debug("pool: placement engine not ready ({}); leaf packing instead", e.what());
      auto answer = fallback(request);
      answer.warnings.push_back(std::string("placed by leaf packing: ") + e.what());
      return answer;
    }
  };
}

}  // namespace

PoolService::PoolService(FabricService& service, PlacementService& placement,
                         const PoolConfig& config, routing::Placer placer,
                         std::function<std::chrono::system_clock::time_point()> clock)
    : service_(service) {
  scheduler_hooks::PoolOptions o;
  o.placer = placer ? std::move(placer) : makeDaemonPlacer(service, placement);
  o.clock = std::move(clock);
  o.journalDir = config.journal;
  o.compactEvery = config.compactEvery;
  o.quotas = config.quotas;
  o.onEvent = [&service](const scheduler_hooks::PoolEvent& e) {
    service.events().append(telemetry::EventType::kPoolAllocationDegraded,
                            telemetry::EventEnd{Guid(0), e.host, PortNum(0)}, std::nullopt,
                            e.message);
  };
  pool_ = std::make_unique<scheduler_hooks::Pool>(std::move(o));
  if (!config.inventory.empty()) {
    auto hosts = scheduler_hooks::loadInventoryFile(config.inventory);
    int added = 0;
    for (auto& h : hosts) {
      try {
        added += pool_->putHost(std::move(h)) ? 1 : 0;
      } catch (const PoolError& e) {
        spdlog::warn("pool: inventory: {}", e.what());
      }
    }
    spdlog::info("pool: inventory {}: {} hosts ({} new)", config.inventory, hosts.size(), added);
  }
}

PoolService::~PoolService() { stop(); }

void PoolService::start() {
  stop_ = false;
  follower_ = std::thread([this] { follow(); });
}

void PoolService::stop() {
  stop_ = true;
  if (follower_.joinable()) follower_.join();
}

void PoolService::follow() {
  TopologyPtr seen;
  std::uint64_t last = 0;
  while (!stop_) {
    // A failure to take in one snapshot or event is logged; the follower never dies of it.
    auto state = service_.state();
    if (state->topology && state->topology != seen) {
      try {
        pool_->setTopology(state->topology);
        seen = state->topology;
      } catch (const std::exception& e) {
        spdlog::error("pool: cannot take in the new topology (retried): {}", e.what());
      }
    }
    telemetry::EventQuery q;
    q.sinceId = last;
    for (const auto& e : service_.events().query(q)) {
      last = e.id;
      if (e.type == telemetry::EventType::kPoolAllocationDegraded) continue;
      try {
        pool_->observeEvent(e);
      } catch (const std::exception& ex) {
        spdlog::error("pool: event {} not taken in: {}", e.id, ex.what());
      }
    }
    service_.events().waitForNewer(last, std::chrono::milliseconds(200));
  }
}

scheduler_hooks::AllocationResult PoolService::allocate(
    const scheduler_hooks::AllocationRequest& request) {
  const auto t0 = std::chrono::steady_clock::now();
  auto result = pool_->allocate(request);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::lock_guard lock(statsMu_);
  std::size_t b = 0;
  while (b < PoolStats::kBuckets.size() && seconds > PoolStats::kBuckets[b]) ++b;
  ++stats_.buckets[b];
  stats_.sumSeconds += seconds;
  return result;
}

PoolStats PoolService::stats() const {
  std::lock_guard lock(statsMu_);
  return stats_;
}

}  // namespace ibfabric::api
