// Routing metrics for /metrics (see api/service/routing_state.h).
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "api/service/routing_state.h"
#include "discovery/formats.h"

namespace ibfabric::api {

void addRoutingMetrics(prometheus::Registry& registry, const ServiceState& s,
                       prometheus::Family<prometheus::Gauge>& collectorSuccess) {
  if (!s.routes.lastAttempt) return;  // a source without forwarding tables
  collectorSuccess.Add({{"collector", "routes"}})
      .Set(s.routes.lastSuccess && s.routes.lastError.empty() ? 1 : 0);
  if (!s.forwarding || !s.routeAnalysis || !s.forwarding->topology()) return;
  const Topology& t = *s.forwarding->topology();
  const auto& v = s.routeAnalysis->validation;

  auto& problems = prometheus::BuildGauge()
                       .Name("ibfabric_route_problems")
                       .Help(
                           "CA-to-CA routes (source, destination LID pairs) with a problem on the "
                           "forwarding tables, by kind")
                       .Register(registry);
  problems.Add({{"kind", "loop"}}).Set(static_cast<double>(v.loops));
  problems.Add({{"kind", "black_hole"}}).Set(static_cast<double>(v.blackHoles));
  problems.Add({{"kind", "no_table"}}).Set(static_cast<double>(v.missingTables));

  auto& pairs = prometheus::BuildGauge()
                    .Name("ibfabric_route_pairs")
                    .Help("CA-to-CA routes validated (state=checked) and found working (state=ok)")
                    .Register(registry);
  pairs.Add({{"state", "checked"}}).Set(static_cast<double>(v.pairsChecked));
  pairs.Add({{"state", "ok"}}).Set(static_cast<double>(v.pairsOk));

  auto& imbalance = prometheus::BuildGauge()
                        .Name("ibfabric_uplink_route_imbalance_ratio")
                        .Help(
                            "Per leaf: destinations on the busiest up-port over the mean per "
                            "up-port (1 = perfectly balanced)")
                        .Register(registry);
  for (const auto& b : s.routeAnalysis->balance) {
    const Node& leaf = t.node(b.leaf);
    imbalance
        .Add({{"leaf", leaf.description},
              {"guid", toString(leaf.guid)},
              {"rail", leaf.rail >= 0 ? std::to_string(leaf.rail) : ""}})
        .Set(b.imbalance);
  }
  prometheus::BuildGauge()
      .Name("ibfabric_lft_read_duration_seconds")
      .Help("Duration of the last full read of every switch's forwarding table")
      .Register(registry)
      .Add({})
      .Set(std::chrono::duration<double>(s.forwarding->readTime).count());
  prometheus::BuildGauge()
      .Name("ibfabric_lft_switches_unread")
      .Help("Switches whose forwarding table could not be read")
      .Register(registry)
      .Add({})
      .Set(static_cast<double>(s.forwarding->failures.size()));
  addLftStatusMetrics(registry, *s.forwarding);
}

}  // namespace ibfabric::api
