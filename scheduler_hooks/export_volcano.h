// Volcano HyperNode objects (topology.volcano.sh/v1alpha1, cluster-scoped) of an ExportLayout
// (docs/scheduler.md "Volcano HyperNodes"):
//   tier 1  one per leaf set, its hosts as Node members: a scalable unit on a rail-optimized
//           fabric (all rail leaves of the SU: the hosts that share them), a leaf switch
//           elsewhere; so each node is in exactly one tier-1 HyperNode (tierName su | leaf);
//   tier 2  one per spine group, its leaf sets as members, when some group holds more than one
//           (tierName spine-group);
//   top     ibfabric-root over the top tier when more than one HyperNode is left there
//           (tierName fabric).
//
// Names follow k8s_names.h: Node members are Kubernetes node names (hosts without one are left
// out), HyperNode names are RFC 1123 object names (sanitized, with a stable hash suffix when
// sanitizing collides); a HyperNode left without members (the CRD wants at least one) is skipped.
// Every skip is listed with its reason. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "scheduler_hooks/export_layout.h"

namespace ibfabric::scheduler_hooks {

struct HyperNode {
  std::string name;
  int tier = 1;
  std::string tierName;
  bool nodeMembers = false;          ///< members are Nodes (tier 1) or HyperNodes
  std::vector<std::string> members;  ///< sorted
};

struct HyperNodes {
  std::vector<HyperNode> items;      ///< lowest tier first
  std::vector<std::string> skipped;  ///< hosts and HyperNodes left out, with the reason
};
HyperNodes volcanoHyperNodes(const ExportLayout& layout);
/// Multi-document YAML of the HyperNodes (kubectl apply -f ready), skips in comments.
std::string volcanoHyperNodesYaml(const ExportLayout& layout);

}  // namespace ibfabric::scheduler_hooks
