// The fabric join: each inventory host's health from the fabric — its HCAs in a topology
// snapshot (present, link Active, at the enabled rate), its leaf switches and rails, and the
// fabric events (link_down, link_degraded, error_threshold, ...) on its HCAs.
//
// Not thread-safe: runs with the pool's mutex held.
#pragma once

#include <cstddef>

#include "scheduler_hooks/pool/pool_state.h"
#include "telemetry/event_log.h"

namespace ibfabric::scheduler_hooks::pool_impl {

/// Joins host `idx` with `s.topology` (which must be set): known, leaves, rails, topology faults.
void joinHost(PoolState& s, std::size_t idx);
/// Records (or clears) the faults `event` puts on the hosts of its ends; true when any host's
/// faults changed.
bool applyFabricEvent(PoolState& s, const telemetry::Event& event);

}  // namespace ibfabric::scheduler_hooks::pool_impl
