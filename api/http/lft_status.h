// Per-switch freshness of the forwarding tables (routing/forwarding.h SwitchTableStatus) as
// JSON, as GET /api/v1/routing/tables serves it (api/http/routes/routing_table_routes.cpp) and
// /api/v1/routing/validation embeds it. Tables from a source that keeps no per-switch status
// (OpenSM dump, shortest-path tables) count a switch with a table as ok and one without as
// missing. Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "api/service/fabric_service.h"
#include "routing/forwarding.h"

namespace ibfabric::api {

/// Counts by state ("ok", "stale", "missing", "direct_route") and the refresh that produced the
/// tables; `switches` lists every switch in `only` (all when nullopt), or, with `problemsOnly`,
/// the switches not ok or read by directed route.
nlohmann::json tableStatusJson(const Topology& topology, const routing::ForwardingTables& tables,
                               std::optional<routing::TableState> only, bool problemsOnly);

}  // namespace ibfabric::api
