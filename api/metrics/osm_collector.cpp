// The OpenSM collector: the link to the OpenSM event plugin (api/osm/osm_status.h). Nothing when
// the link is off (--osm-events).
#include "api/metrics/collectors.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kConnected{"ibfabric_osm_connected",
                                  "1 while the OpenSM event plugin is connected", "gauge"};
constexpr MetricFamily kEvents{"ibfabric_osm_events_total",
                               "Events received from the OpenSM event plugin, by type", "counter"};
constexpr MetricFamily kDropped{
    "ibfabric_osm_plugin_dropped_total",
    "Events the OpenSM plugin dropped (queue full or daemon away), as it last reported", "counter"};
constexpr MetricFamily kMalformed{"ibfabric_osm_malformed_lines_total",
                                  "Lines from the OpenSM plugin that were not valid events",
                                  "counter"};
constexpr MetricFamily kProbes{"ibfabric_osm_port_probes_total",
                               "Switch re-probes after traps; result=crawl when a crawl was needed",
                               "counter"};
constexpr MetricFamily kRefreshRequests{
    "ibfabric_route_refresh_requests_total",
    "Forwarding-table refreshes requested after the SM changed routes", "counter"};

constexpr MetricFamily kBursts{
    "ibfabric_osm_event_bursts_total",
    "Bursts of OpenSM events or SM traps asking for the same probe, crawl or route refresh that "
    "were coalesced (api/osm/request_coalescer.h)",
    "counter"};
constexpr MetricFamily kCoalesced{
    "ibfabric_osm_events_coalesced_total",
    "OpenSM events and SM traps merged into another one's probe, crawl or route refresh",
    "counter"};

class OsmCollector final : public Collector {
 public:
  std::string_view name() const override { return "osm"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    const OsmState& osm = c.state.osm;
    const OsmLinkStatus& l = osm.link;
    if (!l.enabled) return;
    out.family(kConnected);
    out.sampleU(kConnected.name, "", l.connected ? 1 : 0);
    out.family(kEvents);
    for (const auto& [type, n] : l.eventsByType) out.sampleU(kEvents.name, Labels("type", type), n);
    out.family(kDropped);
    out.sampleU(kDropped.name, "", l.pluginDropped);
    out.family(kMalformed);
    out.sampleU(kMalformed.name, "", l.malformed);
    out.family(kProbes);
    out.sampleU(kProbes.name, Labels("result", "probed"), osm.portProbes);
    out.sampleU(kProbes.name, Labels("result", "crawl"), osm.portProbeFailures);
    out.family(kRefreshRequests);
    out.sampleU(kRefreshRequests.name, "", osm.routeRefreshRequests);
    out.family(kBursts);
    out.sampleU(kBursts.name, "", osm.coalescing.bursts);
    out.family(kCoalesced);
    out.sampleU(kCoalesced.name, "", osm.coalescing.coalesced());
  }
};

}  // namespace

CollectorPtr osmCollector() { return std::make_unique<OsmCollector>(); }

}  // namespace ibfabric::api
