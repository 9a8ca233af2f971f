// The health of a fabric's hosts as the daemon's state shows it, for the scheduler exports, the
// kube-scheduler extender (api/http) and anyone else who decides where jobs may run: the
// topology's own view (scheduler_hooks::hostHealthFromTopology: HCA ports down or uncabled, link
// health issues) joined with the counter-based link health of the last sweep; and the load of a
// leaf's up-links. Pure functions of one ServiceState snapshot.
#pragma once

#include <optional>

#include "api/service/service_state.h"
#include "scheduler_hooks/export_layout.h"

namespace ibfabric::api {

/// Host health of a state: hostHealthFromTopology(newest topology), plus every host with a CA link
/// whose counter-based health is degraded/faulty/down, plus hosts of the last swept topology that
/// the newest crawl no longer sees (down: "not seen by the last crawl").
scheduler_hooks::HostHealthMap hostHealthOf(const ServiceState& state);

/// Average over a leaf's up ports (of `state.topology`) of the busier direction's utilization;
/// nullopt when no rate is known.
std::optional<double> leafUplinkUtilization(const ServiceState& state, NodeIndex leaf);

}  // namespace ibfabric::api
