// Per-switch forwarding-table freshness for /metrics (see api/service/routing_state.h).
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "api/service/routing_state.h"

namespace ibfabric::api {

void addLftStatusMetrics(prometheus::Registry& registry, const routing::ForwardingTables& f) {
  if (f.switchStatus.empty()) return;  // a source that keeps no per-switch status
  using routing::TableState;
  auto& switches = prometheus::BuildGauge()
                       .Name("ibfabric_lft_switches")
                       .Help(
                           "Switches by the freshness of the forwarding table held: ok (read or "
                           "confirmed by the latest refresh), stale (the latest read failed, an "
                           "older table is kept), missing (never read)")
                       .Register(registry);
  for (TableState st : {TableState::kOk, TableState::kStale, TableState::kMissing}) {
    switches.Add({{"state", routing::toString(st)}}).Set(static_cast<double>(f.switchesIn(st)));
  }
  prometheus::BuildGauge()
      .Name("ibfabric_lft_switches_direct_route")
      .Help(
          "Switches whose forwarding table held was read with directed-route SMPs because "
          "LID-routed ones did not reach them")
      .Register(registry)
      .Add({})
      .Set(static_cast<double>(f.switchesReadByDirectRoute()));
  prometheus::BuildGauge()
      .Name("ibfabric_lft_refresh_duration_seconds")
      .Help("Duration of the latest forwarding-table refresh (probe and re-reads, or a full read)")
      .Register(registry)
      .Add({})
      .Set(std::chrono::duration<double>(f.refreshTime).count());
}

}  // namespace ibfabric::api
