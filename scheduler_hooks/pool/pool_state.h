// PoolState: everything the pool knows, as plain data — the inventory hosts joined with the
// fabric, what each GPU is used for, the allocations, the journal and the counters — plus the
// lookups every part of the pool shares (the wall clock, which hosts are usable, pool size).
// The operations on it live one concept per file next to this one (scheduler_hooks/pool/).
//
// Owner: Pool (scheduler_hooks/pool.cpp) holds one. Not thread-safe: every function of
// scheduler_hooks/pool/ that takes a PoolState runs with the pool's mutex held.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "discovery/topology.h"
#include "scheduler_hooks/pool.h"
#include "scheduler_hooks/pool/host_entry.h"
#include "scheduler_hooks/pool/journal_file.h"

namespace ibfabric::scheduler_hooks::pool_impl {

using SysClock = std::chrono::system_clock;

/// What one GPU is used for: a whole-GPU allocation, or MIG slices.
struct GpuUse {
  bool exclusive = false;
  int compute = 0;  ///< MIG compute slices in use
  int memory = 0;   ///< MIG memory slices in use
  bool free() const { return !exclusive && compute == 0; }
};
using GpuUsage = std::vector<std::vector<GpuUse>>;  ///< [host][gpu position]

struct PoolState {
  PoolOptions options;
  std::vector<HostEntry> hosts;
  std::unordered_map<std::string, std::size_t> byName;         ///< host name -> index into hosts
  GpuUsage gpuUse;                                             ///< of the allocations below
  std::map<std::string, Allocation, std::less<>> allocations;  ///< by job id
  std::map<JobClass, double> usedByClass;                      ///< GPU-equivalents held
  std::uint64_t nextSequence = 1;
  std::uint64_t journalSeq = 0;  ///< of the last journal record written or replayed
  std::uint64_t preemptions = 0;
  std::uint64_t tornBytes = 0;  ///< cut off the journal at start
  std::unique_ptr<PoolJournal> journal;
  TopologyPtr topology;
  std::unordered_map<Guid, std::pair<std::size_t, std::string>> hcaOwner;  ///< -> host, "mlx5_n"
  std::vector<PoolEvent> pending;  ///< emitted by the Pool after its mutex is released

  SysClock::time_point now() const;
  /// Known to the fabric and healthy.
  bool usable(std::size_t h) const;
  /// GPUs of the hosts the fabric knows.
  int totalGpus() const;
};

}  // namespace ibfabric::scheduler_hooks::pool_impl
