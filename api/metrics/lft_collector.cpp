// The forwarding-table collector: per-switch freshness of the tables held
// (api/service/routing_state.h).
#include <chrono>

#include "api/metrics/collectors.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kSwitches{"ibfabric_lft_switches",
                                 "Switches by the freshness of the forwarding table held: ok "
                                 "(read or confirmed by the latest refresh), stale (the latest "
                                 "read failed, an older table is kept), missing (never read)",
                                 "gauge"};
constexpr MetricFamily kDirectRoute{"ibfabric_lft_switches_direct_route",
                                    "Switches whose forwarding table held was read with "
                                    "directed-route SMPs because LID-routed ones did not reach "
                                    "them",
                                    "gauge"};
constexpr MetricFamily kRefresh{
    "ibfabric_lft_refresh_duration_seconds",
    "Duration of the latest forwarding-table refresh (probe and re-reads, or a full read)",
    "gauge"};

class LftCollector final : public Collector {
 public:
  std::string_view name() const override { return "lft"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    const ServiceState& s = c.state;
    // Shown with the routes they were validated with (routing_collector.cpp).
    if (!s.routes.lastAttempt || !s.forwarding || !s.routeAnalysis || !s.forwarding->topology())
      return;
    writeLftStatus(out, *s.forwarding);
  }
};

}  // namespace

void writeLftStatus(MetricWriter& out, const routing::ForwardingTables& f) {
  if (f.switchStatus.empty()) return;  // a source that keeps no per-switch status
  using routing::TableState;
  out.family(kSwitches);
  for (TableState st : {TableState::kOk, TableState::kStale, TableState::kMissing})
    out.sampleU(kSwitches.name, Labels("state", routing::toString(st)), f.switchesIn(st));
  out.family(kDirectRoute);
  out.sampleU(kDirectRoute.name, "", f.switchesReadByDirectRoute());
  out.family(kRefresh);
  out.sample(kRefresh.name, "", std::chrono::duration<double>(f.refreshTime).count());
}

CollectorPtr lftCollector() { return std::make_unique<LftCollector>(); }

}  // namespace ibfabric::api
