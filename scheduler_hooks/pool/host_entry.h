// HostEntry: one inventory host as the pool sees it — its GPUs, whether the fabric knows it, the
// leaf switches and rails its HCAs attach to, and the faults (by HCA) that make it unhealthy.
//
// Owner: PoolState (scheduler_hooks/pool/pool_state.h). Not thread-safe: used under the pool's
// mutex.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "discovery/types.h"
#include "scheduler_hooks/export_layout.h"
#include "scheduler_hooks/pool/inventory.h"

namespace ibfabric::scheduler_hooks::pool_impl {

/// Why a host is unhealthy, for one HCA (or the whole host).
struct Fault {
  HostHealth health = HostHealth::kOk;
  std::string reason;
  bool fromTopology = false;  ///< set by a topology join (else by a fabric event)
};

struct HostEntry {
  PoolHost inv;
  bool known = false;  ///< seen in a fabric snapshot at least once
  std::set<std::string> seenHcas;
  std::map<std::string, Fault> faults;  ///< by HCA name ("mlx5_1") or "host"
  std::vector<Guid> leaves;
  int group = -1;
  std::vector<int> rails;  ///< per GPU position

  /// The worst fault's health (kOk without faults).
  HostHealth health() const {
    HostHealth h = HostHealth::kOk;
    for (const auto& [k, f] : faults) h = std::max(h, f.health);
    return h;
  }
  /// The reason of the (first) worst fault; empty without faults.
  std::string reason() const {
    const HostHealth h = health();
    for (const auto& [k, f] : faults)
      if (f.health == h) return f.reason;
    return "";
  }
  /// Position in inv.gpus of the GPU with this index; -1 when the host has none.
  int position(int gpuIndex) const {
    for (std::size_t i = 0; i < inv.gpus.size(); ++i)
      if (inv.gpus[i].index == gpuIndex) return static_cast<int>(i);
    return -1;
  }
};

}  // namespace ibfabric::scheduler_hooks::pool_impl
