#include "api/metrics/osm_views.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

namespace ibfabric::api {
namespace {

double epochSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace

nlohmann::json osmJson(const OsmState& osm, std::chrono::system_clock::time_point now) {
  const OsmLinkStatus& l = osm.link;
  if (!l.enabled) return {{"enabled", false}};
  nlohmann::json j = {{"enabled", true},
                      {"socket", l.socketPath},
                      {"connected", l.connected},
                      {"connections", l.connections},
                      {"events", l.eventsByType},
                      {"malformed_lines", l.malformed},
                      {"plugin_dropped", l.pluginDropped},
                      {"last_seq", l.lastSeq},
                      {"osm_version", l.osmVersion},
                      {"sm_state", l.smState},
                      {"port_probes", osm.portProbes},
                      {"port_probe_fallbacks", osm.portProbeFailures},
                      {"route_refresh_requests", osm.routeRefreshRequests},
                      {"last_route_refresh_reason", osm.lastRouteRefreshReason},
                      {"last_error", l.lastError}};
  j["connected_since"] =
      l.connectedSince ? nlohmann::json(epochSeconds(*l.connectedSince)) : nullptr;
  j["last_event_age_seconds"] =
      l.lastEvent ? nlohmann::json(std::chrono::duration<double>(now - *l.lastEvent).count())
                  : nullptr;
  return j;
}

void addOsmMetrics(prometheus::Registry& registry, const OsmState& osm) {
  const OsmLinkStatus& l = osm.link;
  if (!l.enabled) return;
  using prometheus::BuildCounter;
  using prometheus::BuildGauge;
  BuildGauge()
      .Name("ibfabric_osm_connected")
      .Help("1 while the OpenSM event plugin is connected")
      .Register(registry)
      .Add({})
      .Set(l.connected ? 1 : 0);
  auto& events = BuildCounter()
                     .Name("ibfabric_osm_events_total")
                     .Help("Events received from the OpenSM event plugin, by type")
                     .Register(registry);
  for (const auto& [type, n] : l.eventsByType)
    events.Add({{"type", type}}).Increment(static_cast<double>(n));
  BuildCounter()
      .Name("ibfabric_osm_plugin_dropped_total")
      .Help("Events the OpenSM plugin dropped (queue full or daemon away), as it last reported")
      .Register(registry)
      .Add({})
      .Increment(static_cast<double>(l.pluginDropped));
  BuildCounter()
      .Name("ibfabric_osm_malformed_lines_total")
      .Help("Lines from the OpenSM plugin that were not valid events")
      .Register(registry)
      .Add({})
      .Increment(static_cast<double>(l.malformed));
  auto& probes = BuildCounter()
                     .Name("ibfabric_osm_port_probes_total")
                     .Help("Switch re-probes after traps; result=crawl when a crawl was needed")
                     .Register(registry);
  probes.Add({{"result", "probed"}}).Increment(static_cast<double>(osm.portProbes));
  probes.Add({{"result", "crawl"}}).Increment(static_cast<double>(osm.portProbeFailures));
  BuildCounter()
      .Name("ibfabric_route_refresh_requests_total")
      .Help("Forwarding-table refreshes requested after the SM changed routes")
      .Register(registry)
      .Add({})
      .Increment(static_cast<double>(osm.routeRefreshRequests));
}

}  // namespace ibfabric::api
