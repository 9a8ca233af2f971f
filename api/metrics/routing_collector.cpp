// The routing collector: the validation of every CA-to-CA route on the forwarding tables and the
// up-link balance per leaf (api/service/routing_state.h). The per-leaf series keep the leaves of
// the page's shard; the route counts are fabric-wide, in every shard.
#include <chrono>

#include "api/metrics/collectors.h"
#include "api/service/routing_state.h"
#include "discovery/formats.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kProblems{"ibfabric_route_problems",
                                 "CA-to-CA routes (source, destination LID pairs) with a problem "
                                 "on the forwarding tables, by kind",
                                 "gauge"};
constexpr MetricFamily kPairs{
    "ibfabric_route_pairs",
    "CA-to-CA routes validated (state=checked) and found working (state=ok)", "gauge"};
constexpr MetricFamily kImbalance{"ibfabric_uplink_route_imbalance_ratio",
                                  "Per leaf: destinations on the busiest up-port over the mean "
                                  "per up-port (1 = perfectly balanced)",
                                  "gauge"};
constexpr MetricFamily kReadDuration{
    "ibfabric_lft_read_duration_seconds",
    "Duration of the last full read of every switch's forwarding table", "gauge"};
constexpr MetricFamily kUnread{"ibfabric_lft_switches_unread",
                               "Switches whose forwarding table could not be read", "gauge"};

class RoutingCollector final : public Collector {
 public:
  std::string_view name() const override { return "routing"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    const ServiceState& s = c.state;
    if (!s.routes.lastAttempt) return;  // a source without forwarding tables
    if (!s.forwarding || !s.routeAnalysis || !s.forwarding->topology()) return;
    const Topology& t = *s.forwarding->topology();
    const auto& v = s.routeAnalysis->validation;
    out.family(kProblems);
    out.sampleU(kProblems.name, Labels("kind", "loop"), v.loops);
    out.sampleU(kProblems.name, Labels("kind", "black_hole"), v.blackHoles);
    out.sampleU(kProblems.name, Labels("kind", "no_table"), v.missingTables);
    out.family(kPairs);
    out.sampleU(kPairs.name, Labels("state", "checked"), v.pairsChecked);
    out.sampleU(kPairs.name, Labels("state", "ok"), v.pairsOk);
    out.family(kImbalance);
    for (const auto& b : s.routeAnalysis->balance) {
      const Node& leaf = t.node(b.leaf);
      if (!c.shard.keeps(leaf.guid)) continue;
      Labels l;  // in name order
      l.add("guid", toString(leaf.guid))
          .add("leaf", leaf.description)
          .add("rail", leaf.rail >= 0 ? std::to_string(leaf.rail) : "");
      out.sample(kImbalance.name, l, b.imbalance);
    }
    out.family(kReadDuration);
    out.sample(kReadDuration.name, "",
               std::chrono::duration<double>(s.forwarding->readTime).count());
    out.family(kUnread);
    out.sampleU(kUnread.name, "", s.forwarding->failures.size());
  }
};

}  // namespace

CollectorPtr routingCollector() { return std::make_unique<RoutingCollector>(); }

}  // namespace ibfabric::api
