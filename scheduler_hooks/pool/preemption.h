// Allocation planning with preemption: the grants a request gets as the pool stands, or else the
// preemptible allocations of strictly lower priority to evict for it — lowest priority first,
// among equals the youngest first — with the victims that turn out not to be needed spared.
// Evictions are tried on a what-if copy of the usage; the caller applies the plan.
//
// Not thread-safe: runs with the pool's mutex held.
#pragma once

#include <vector>

#include "scheduler_hooks/pool.h"
#include "scheduler_hooks/pool/pool_state.h"

namespace ibfabric::scheduler_hooks::pool_impl {

struct AllocationPlan {
  std::vector<HostGrant> grants;
  std::vector<const Allocation*> victims;  ///< in eviction order; point into PoolState
};

/// Throws PoolError(kQuota) when the class quota blocks the request, PoolError(kCapacity) when
/// there is no room, even after preempting every candidate (and what choose() throws).
AllocationPlan planAllocation(const PoolState& s, const AllocationRequest& r);

}  // namespace ibfabric::scheduler_hooks::pool_impl
