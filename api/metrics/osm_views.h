// The OpenSM plugin link as the REST API (/api/v1/health "osm") and /metrics show it.
// Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>

#include "api/osm/osm_status.h"

namespace prometheus {
class Registry;
}

namespace ibfabric::api {

/// {"enabled": false} when --osm-events is off; else the link's status and counters.
nlohmann::json osmJson(const OsmState& osm, std::chrono::system_clock::time_point now);

/// ibfabric_osm_connected, ibfabric_osm_events_total{type}, ibfabric_osm_plugin_dropped_total,
/// ibfabric_osm_malformed_lines_total, ibfabric_osm_port_probes_total{result},
/// ibfabric_route_refresh_requests_total. Nothing when the link is off.
void addOsmMetrics(prometheus::Registry& registry, const OsmState& osm);

}  // namespace ibfabric::api
