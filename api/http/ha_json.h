// JSON renderings of the active/standby role and the subnet's identity (api/service/ha_status.h)
// for GET /api/v1/health ("role", "ha", "snapshot_age_seconds", "subnet") and the topology
// summary ("subnet", "role"). Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>

#include "api/service/service_state.h"

namespace ibfabric::api {

/// {"mode", "role", "reason", "decided", "since", "role_changes", "port_guid", "peers": [...]}.
nlohmann::json haJson(const ServiceState& state);
/// {"name", "prefix", "sm_guid"}: null for what is not known yet.
nlohmann::json subnetIdentityJson(const ServiceState& state);
/// The `subnet` every host, node and link object carries: the operator's name (`subnet_name`),
/// else the GID prefix, else null (before the local port was read). The federation's objects
/// carry the same field, with the member's name.
nlohmann::json subnetTagJson(const ServiceState& state);
/// Seconds since the served topology snapshot was last confirmed by a crawl; null before one.
nlohmann::json snapshotAgeJson(const ServiceState& state,
                               std::chrono::system_clock::time_point now);
/// A standby with a snapshot to serve and whose last crawl succeeded: it answers reads (health
/// and readiness 200), though it has no counters of its own.
bool warmStandby(const ServiceState& state);

}  // namespace ibfabric::api
