// GPU choice: which hosts, GPUs and MIG slices a request gets from a given GPU usage —
// whole free hosts chosen by the placer (training), whole GPUs packed onto partly used hosts
// (exclusive inference), or MIG instances packed onto partitioned GPUs. Nothing is taken: the
// caller applies the answer.
//
// Not thread-safe: runs with the pool's mutex held; the placer must not call back into the pool.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "scheduler_hooks/pool.h"
#include "scheduler_hooks/pool/pool_state.h"

namespace ibfabric::scheduler_hooks::pool_impl {

/// GPUs per host of a training request: its gpus_per_host, else the most a usable host has
/// (at most the request's GPUs).
int trainingPerHost(const PoolState& s, const AllocationRequest& r);

/// The grants for `r` on `use`, or nullopt with `why` ("capacity: ..." / "placement: ...").
/// Throws PoolError when the placer fails other than by "unsatisfiable".
std::optional<std::vector<HostGrant>> choose(const PoolState& s, const AllocationRequest& r,
                                             const GpuUsage& use, std::string& why);

/// MIG instances for `r` (a MIG request), on `onlyHost` when given.
std::optional<std::vector<HostGrant>> chooseMig(const PoolState& s, const AllocationRequest& r,
                                                const GpuUsage& use, std::string& why,
                                                std::optional<std::size_t> onlyHost = std::nullopt);

}  // namespace ibfabric::scheduler_hooks::pool_impl
