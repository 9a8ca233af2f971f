// Degraded allocations: an allocation with a host that turned unhealthy becomes `degraded`, with
// a suggested replacement host (free, healthy, on the job's leaves when possible); the change is
// journaled and a PoolEvent queued.
//
// Not thread-safe: runs with the pool's mutex held.
#pragma once

#include <string>

#include "scheduler_hooks/pool/pool_state.h"

namespace ibfabric::scheduler_hooks::pool_impl {

/// Sets `a.replacement` (or clears it) and `a.replacementNote` for `bad`'s part of `a`.
void suggestReplacement(const PoolState& s, Allocation& a, const std::string& bad);
/// Marks allocations on unhealthy hosts degraded (journaled; events queued in `s.pending`).
void refreshDegraded(PoolState& s);

}  // namespace ibfabric::scheduler_hooks::pool_impl
