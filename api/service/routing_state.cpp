#include "api/service/routing_state.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ibfabric::api {

std::shared_ptr<const RoutingAnalysis> analyzeRoutes(const routing::ForwardingTables& tables) {
  const auto t0 = std::chrono::steady_clock::now();
  auto a = std::make_shared<RoutingAnalysis>();
  if (tables.topology()) {
    a->validation = routing::validateRoutes(*tables.topology(), tables, kMaxListedRouteProblems);
    a->balance = routing::routeBalance(*tables.topology(), tables);
  }
  for (const auto& b : a->balance) a->maxImbalance = std::max(a->maxImbalance, b.imbalance);
  a->analysisTime =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
  a->tablesReadAt = std::chrono::system_clock::now();
  return a;
}

RoutesUpdate updateRoutes(CounterSource& source, const TopologyPtr& topology,
                          const routing::ForwardingTablesPtr& previous,
                          const std::shared_ptr<const RoutingAnalysis>& previousAnalysis) {
  RoutesUpdate u;
  u.attempt = std::chrono::system_clock::now();
  if (!topology) return u;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    u.forwarding = source.readForwardingTables(topology, previous, &u.reason);
  } catch (const std::exception& e) {
    u.attempted = true;
    u.error = std::string("reading forwarding tables: ") + e.what();
    spdlog::warn("routes: {}", u.error);
    return u;
  }
  if (!u.forwarding) return u;
  u.attempted = true;
  if (u.forwarding == previous && previousAnalysis) {
    u.analysis = previousAnalysis;
  } else if (previous && previousAnalysis && previous->topology() == u.forwarding->topology() &&
             routing::tableDifferences(*previous, *u.forwarding, 1).empty()) {
    u.analysis = previousAnalysis;  // only the per-switch read status changed
  } else {
    u.analysis = analyzeRoutes(*u.forwarding);
    const auto& v = u.analysis->validation;
    spdlog::info(
        "routes: tables from {} ({}): {} switches, {} unread, {} by directed route; {} pairs, {} "
        "loops, {} black holes, {} missing tables; max leaf imbalance {:.2f}; validated in {:.3f} "
        "s",
        u.forwarding->source(), u.reason, u.forwarding->switchesWithTables(),
        u.forwarding->failures.size(), u.forwarding->switchesReadByDirectRoute(), v.pairsChecked,
        v.loops, v.blackHoles, v.missingTables, u.analysis->maxImbalance,
        std::chrono::duration<double>(u.analysis->analysisTime).count());
  }
  u.took =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
  return u;
}

void applyRoutesUpdate(ServiceState& s, const RoutesUpdate& u) {
  if (!u.attempted) return;
  s.routes.lastAttempt = u.attempt;
  if (!u.error.empty()) {
    s.routes.failures++;
    s.routes.consecutiveFailures++;
    s.routes.lastError = u.error;
    return;
  }
  s.forwarding = u.forwarding;
  s.routeAnalysis = u.analysis;
  s.routes.runs++;
  s.routes.consecutiveFailures = 0;
  s.routes.lastSuccess = std::chrono::system_clock::now();
  s.routes.lastDuration = u.took;
  s.routes.lastError.clear();
}

}  // namespace ibfabric::api
