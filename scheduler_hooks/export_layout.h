// ExportLayout: the fabric as schedulers see it — hosts grouped into leaf sets, leaf sets into
// spine groups, with names every export (Slurm topology.conf, Kubernetes labels, Kueue Topology,
// Volcano HyperNodes) shares, and the hosts left out because their HCA links are unhealthy.
//
// Concepts (docs/scheduler.md):
//   - leaf set: the hosts whose HCAs attach to the same set of leaf switches. On a classic fat
//     tree it is one leaf switch; on a rail-optimized fabric (HCA i of every host of a scalable
//     unit on the rail-i leaf) it is a scalable unit (SU): 8 leaves shared by 32 hosts. A host
//     that lost an HCA link joins the leaf set whose leaves contain its remaining ones. Named
//     after its leaf switch (one leaf) or "su01", "su02", ... (several leaves, by first host).
//   - spine group: the leaf sets whose leaves share the same level-2 switches (Topology's leaf
//     groups): a pod of a three-level tree, all leaves of a two-level tree. Named "sg01", ...
//   - switch names: the switch part of NVIDIA-style descriptions ("MF0;leaf-01:MQM8790/U1" gives
//     "leaf-01"), lower-cased, reduced to [a-z0-9._-], at most 63 characters (a Kubernetes label
//     value; Slurm allows 64). Every switch whose name is shared by several switches (the
//     default description "Quantum Mellanox Technologies" of unconfigured switches) gets "-" and
//     its GUID's last 6 hex digits (all 16 when those collide too), so a switch's name derives
//     from what does not change when another switch is replaced; a node-name map
//     (discovery/node_name_map.h) gives them real names instead.
//
// Pure functions over an immutable snapshot; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "discovery/topology.h"
#include "scheduler_hooks/k8s_names.h"

namespace ibfabric::scheduler_hooks {

/// Health of a host's HCA links, the worst of its links.
enum class HostHealth : std::uint8_t { kOk, kDegraded, kFaulty, kDown };
std::string_view toString(HostHealth h);  // "ok", "degraded", "faulty", "down"

struct HostStatus {
  HostHealth health = HostHealth::kOk;
  std::string reason;  ///< "dgx0007 mlx5_2 port 1: link down"
  /// An HCA of the host is down or missing: it runs on fewer rails (degraded while another HCA
  /// is up, down when none is).
  bool hcaDown = false;
};
/// Hosts whose HCA links are not all ok, by host name.
using HostHealthMap = std::map<std::string, HostStatus>;

/// Raises `map[host]` to `status` when it is worse than what is there (reasons of equal severity
/// are joined with "; ").
void mergeHostStatus(HostHealthMap& map, const std::string& host, const HostStatus& status);

/// Host health judged from the snapshot alone: an HCA that is missing (discovery/fabric_memory.h),
/// not cabled or without an Active port makes its host degraded (hcaDown, the reason naming the
/// HCA and its rail) while another HCA is up, down when none is; a CA link with a link-health
/// finding (below enabled rate, ends disagree, ...) makes it degraded. The daemon adds
/// counter-based health (faulty, flapping) on top.
HostHealthMap hostHealthFromTopology(const Topology& topology);

struct ExportOptions {
  /// Leave out hosts that are down or faulty or miss an HCA (hcaDown); hosts degraded by a slow
  /// or erroring link with every HCA up stay.
  bool excludeUnhealthy = false;
  HostHealthMap health;
  /// Kubernetes node names that differ from what kubelet makes of the host names; null = none.
  std::shared_ptr<const K8sNodeNameMap> k8sNodeNames;
};

struct LeafSet {
  std::string name;
  std::vector<NodeIndex> leaves;   ///< by node index
  std::vector<std::string> hosts;  ///< sorted
  int group = -1;                  ///< index into ExportLayout::groups
};

struct SpineGroup {
  std::string name;
  std::vector<std::size_t> leafSets;  ///< indexes into ExportLayout::leafSets, in order
};

struct HostPlace {
  std::size_t leafSet = 0;
  /// Leaf switch of each HCA with a cabled port, in HCA order: (rail or HCA index, leaf).
  std::vector<std::pair<int, NodeIndex>> leaves;
};

struct ExportLayout {
  TopologyPtr topology;
  /// Rail-optimized: some leaf set has more than one leaf.
  bool railOptimized = false;
  /// Export name of every switch, by NodeIndex (empty for CAs and routers).
  std::vector<std::string> switchNames;
  std::vector<LeafSet> leafSets;  ///< ordered by group, then first host
  std::vector<SpineGroup> groups;
  std::map<std::string, HostPlace> hosts;  ///< hosts kept, by name
  /// Hosts left out and why ("dgx0007: down (dgx0007 mlx5_2 port 1: link down)").
  std::vector<std::string> excluded;
  /// The Kubernetes node name of every host of the snapshot (kept or not; k8s_names.h).
  K8sNodeNames k8sNames;

  const std::string& switchName(NodeIndex n) const { return switchNames.at(n); }
  const LeafSet* leafSetOf(std::string_view host) const;
};

/// Groups the snapshot's hosts. Never throws on odd fabrics: hosts without a cabled HCA are
/// listed in `excluded`; switches without a name get "sw-<guid>".
ExportLayout buildExportLayout(TopologyPtr topology, const ExportOptions& options = {});

/// The export name of every switch of `t`, by NodeIndex ("" for CAs and routers): exportName()
/// of its description, "sw-<guid>" when nothing is left, GUID digits for shared names (above).
std::vector<std::string> uniqueSwitchNames(const Topology& t);

/// "leaf-01" from "MF0;leaf-01:MQM8790-HS2F/U1"; any text to [a-z0-9._-], at most 63 characters,
/// starting and ending with a letter or digit; "" when nothing is left.
std::string exportName(std::string_view description);

/// A host name usable as a Slurm node / Kubernetes node name: non-empty, [A-Za-z0-9._-] only.
bool isPlainHostName(std::string_view name);

}  // namespace ibfabric::scheduler_hooks
