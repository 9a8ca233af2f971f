// The pool's host list: adding or replacing an inventory host (its GPU usage rebuilt from the
// allocations that hold it, joined with the fabric when there is a topology), and the views of
// the hosts that Pool::hosts() answers.
//
// Not thread-safe: runs with the pool's mutex held.
#pragma once

#include <vector>

#include "scheduler_hooks/pool.h"
#include "scheduler_hooks/pool/pool_state.h"

namespace ibfabric::scheduler_hooks::pool_impl {

/// Throws PoolError(kConflict) when `host` would change the GPUs of a host with allocations.
void checkHostChange(const PoolState& s, const PoolHost& host);
/// Adds the host, or replaces the one of that name (no journal record; the caller writes it).
void installHost(PoolState& s, PoolHost host);
/// Every host, by name.
std::vector<PoolHostView> hostViews(const PoolState& s);

}  // namespace ibfabric::scheduler_hooks::pool_impl
