// The fabric map (GET /api/v1/fabric/map, docs/api.md#fabric-map): the compact summary the web
// view (/ui/, docs/ui.md) draws the fat tree from. Its size follows the switches, not the
// counters: every switch with its level, leaf group and rail and a state; the switch-to-switch
// cables folded into one trunk per switch pair (cable count, cables by state and how many are
// missing, the busiest cable's utilization and congestion, the trunk's error rate, each cable's
// ports and state); every host with its group, leaves and health; one host block per leaf group
// with its hosts counted by health; the counts of the whole fabric. Details (ports, counters,
// history) are fetched per element on drill-down.
//
// Rendered once per ServiceState (api/http/document_cache.h, Kind::kFabricMap). Pure function
// of its inputs; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "api/http/host_layout_cache.h"
#include "api/http/list_index.h"
#include "api/service/service_state.h"

namespace ibfabric::api {

/// The map of `state` (which has a topology); `hosts`: the host health of the same state,
/// `index`: its list index (link states and health reports); `pool`: whether the daemon has a
/// GPU pool (the page then lists its allocations).
nlohmann::json fabricMapJson(const ServiceState& state, const HostLayout& hosts,
                             const ListIndex& index, bool pool);

}  // namespace ibfabric::api
