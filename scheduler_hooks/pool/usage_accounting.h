// Usage accounting: which GPUs (and MIG slices) the allocations hold, the GPU-equivalents each
// class holds, and the pool-wide usage summary (Pool::usage()).
//
// Not thread-safe: the PoolState functions run with the pool's mutex held.
#pragma once

#include <cstddef>
#include <string>

#include "scheduler_hooks/pool.h"
#include "scheduler_hooks/pool/pool_state.h"

namespace ibfabric::scheduler_hooks::pool_impl {

/// Whole GPUs ("exclusive"), not MIG instances.
bool isExclusive(const AllocationRequest& r);
/// GPU-equivalents a request asks for: whole GPUs count 1, a MIG instance its compute slices / 7.
double requestEquivalents(const AllocationRequest& r);

/// Adds (sign +1) or removes (-1) an allocation's GPUs to/from `use` (nullptr: only counts);
/// returns its GPU-equivalents.
double applyGrant(const PoolState& s, const Allocation& a, int sign, GpuUsage* use);
/// Takes `a` into the state: its GPUs, its class's share, the next sequence number.
void addAllocation(PoolState& s, Allocation a);
/// Gives the allocation's GPUs back and forgets it; nothing when there is none.
void removeAllocation(PoolState& s, const std::string& job);

/// Whole GPUs of host `h` nobody uses.
int freeGpus(std::size_t h, const GpuUsage& use);
/// Every GPU of host `h` is free.
bool hostFree(std::size_t h, const GpuUsage& use);

/// Pool::usage(): GPUs in the pool and in use, by class, quota states, journal counters.
PoolUsage summarizeUsage(const PoolState& s);

}  // namespace ibfabric::scheduler_hooks::pool_impl
