// JSON renderings of a ServiceState for the REST API (docs/api.md). Pure functions of their
// inputs; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/service/service_state.h"
#include "telemetry/counter_history.h"
#include "telemetry/event_log.h"

namespace ibfabric::api {

/// {"status": "ready"|"starting"|"degraded", "ready": bool, "crawl": {...}, "sweep": {...}}.
nlohmann::json healthJson(const ServiceState& state, std::chrono::system_clock::time_point now);
nlohmann::json topologySummaryJson(const ServiceState& state,
                                   std::chrono::system_clock::time_point now);
/// A node with its ports (and each port's remote end).
nlohmann::json nodeJson(const Topology& topology, const Node& node, const ServiceState& state);
/// A brief entry for lists.
nlohmann::json nodeBriefJson(const Topology& topology, const Node& node, const ServiceState& state);
nlohmann::json hostJson(const Topology& topology, const Host& host, const ServiceState& state);
/// A link's state: "down" while an end has no physical link, "init" while both are linked but
/// not both Active (whatever the last sweep's report said: a probe or a crawl may have seen it
/// change since), else the health report's state, else "degraded" below its enabled rate, else
/// "ok".
std::string_view linkStateName(const Link& link, LinkActivity activity,
                               const telemetry::LinkHealthReport* health);
/// One link, joined with its health report and its ends' rates when the state has them.
nlohmann::json linkJson(const Topology& topology, std::uint32_t linkIndex,
                        const ServiceState& state);
/// The same with the link's health report given (findHealth(state, a end), or nullptr: none), for
/// lists that look reports up in an index.
nlohmann::json linkJson(const Topology& topology, std::uint32_t linkIndex,
                        const ServiceState& state, const telemetry::LinkHealthReport* health);
/// An entry of /hosts: {name, hcas: [guid]}.
nlohmann::json hostBriefJson(const Topology& topology, const Host& host, const ServiceState& state);
/// Everything about one port: topology, raw counters, rates, health, recent history.
nlohmann::json portJson(const Topology& topology, PortRef ref, const ServiceState& state,
                        const telemetry::CounterHistory& history);
nlohmann::json eventJson(const telemetry::Event& event);

/// The OpenSM plugin link (/api/v1/health "osm"): {"enabled": false} when --osm-events is off;
/// else the link's status and counters.
nlohmann::json osmJson(const OsmState& osm, std::chrono::system_clock::time_point now);
/// The SM trap subscription for /health ("sm_traps"): {"enabled": false} when it is off.
nlohmann::json trapsJson(const std::optional<mad::TrapSubscriptionStatus>& traps);

/// Seconds since the epoch with millisecond precision.
double epochSeconds(std::chrono::system_clock::time_point t);

/// The health report for a link of `state.counters->topology`, found by its ends' GUIDs.
const telemetry::LinkHealthReport* findHealth(const ServiceState& state, Guid a, PortNum pa);

}  // namespace ibfabric::api
