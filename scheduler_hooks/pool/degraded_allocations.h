// Degraded allocations: an allocation with a host that turned unhealthy becomes `degraded`, with
// a suggested replacement host; the change is journaled and a PoolEvent queued.
//
// The replacement: among the free healthy hosts that can take the failing host's GPUs, the one
// the pool's placer (PoolOptions::placer: the daemon's placement engine on the live routes and
// link load) ranks best: per candidate, one request of the allocation's size and ring_allreduce
// (the pattern the pool places training with and the job attribution uses for pool allocations)
// whose only candidates are the allocation's other hosts and that one, so the engine scores
// exactly that host set; the highest objective wins (ties: the tightest fit, then the name). The
// note gives the engine's explanation of the winner (leaves, predicted bottleneck, hops), the
// runner-up and the placer's first warning (the daemon's placer says so when it had to place by
// leaf packing: no routes read yet). One request per candidate: milliseconds each at 10,240
// HCAs, run only when an allocation turns degraded.
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
