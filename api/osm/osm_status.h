// OsmState: what the daemon knows about the OpenSM event plugin link, as ServiceState carries
// it (GET /api/v1/health "osm", /metrics ibfabric_osm_*).
//
// `link` is written by the OsmEventListener (api/osm/osm_events.h); the counters below it by
// FabricService when it acts on the events (port re-probes, forwarding-table refresh requests).
// Plain value type.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace ibfabric::api {

struct OsmLinkStatus {
  bool enabled = false;  ///< --osm-events given.
  std::string socketPath;
  bool connected = false;         ///< A plugin is connected now.
  std::uint64_t connections = 0;  ///< Plugin connections accepted, all time.
  std::optional<std::chrono::system_clock::time_point> connectedSince;
  std::optional<std::chrono::system_clock::time_point> lastEvent;
  /// Events received, by type name ("trap", "subnet_up", ...).
  std::map<std::string, std::uint64_t> eventsByType;
  std::uint64_t malformed = 0;  ///< Lines that did not parse.
  std::string lastError;        ///< Of the last malformed line or socket failure.
  /// Events the plugin dropped because its queue was full (as its last message said).
  std::uint64_t pluginDropped = 0;
  std::uint64_t lastSeq = 0;
  std::string osmVersion;  ///< From the plugin's hello.
  std::string smState;     ///< From the last state_change (or hello): "master", "standby", ...
};

/// How RequestCoalescer (api/osm/request_coalescer.h) merged trap-driven requests.
struct CoalescingCounts {
  std::uint64_t events = 0;  ///< offered
  std::uint64_t runs = 0;    ///< of the work (events - runs were coalesced)
  std::uint64_t bursts = 0;  ///< runs of events for one key that coalesced at least one
  std::uint64_t coalesced() const { return events - runs; }
  bool operator==(const CoalescingCounts&) const = default;
};

struct OsmState {
  OsmLinkStatus link;
  std::uint64_t portProbes = 0;         ///< Switches re-probed after a trap.
  std::uint64_t portProbeFailures = 0;  ///< Re-probes that fell back to a crawl.
  std::uint64_t routeRefreshRequests = 0;
  std::string lastRouteRefreshReason;
  CoalescingCounts coalescing;  ///< trap-driven requests (api/osm/request_coalescer.h)
};

}  // namespace ibfabric::api
