// Fat-tree analysis of a set of cabled nodes: switch levels, hosts, rails and leaf groups.
//
// Used by TopologyBuilder::build(); exposed for tests and for tools that need the same rules
// (e.g. comparing an expected fabric). Pure functions; thread-safe.
//
// Rules:
//   - level: CA 0; leaf 1 = a switch with a CA cabled to it; other switches 1 + hop distance to
//     the nearest leaf over switch-to-switch cables; unknown for routers and unreachable switches.
//   - hosts: CAs whose description is "<host> <device>_<n>" (e.g. "gpu017 mlx5_3") are grouped by
//     <host> with HCA index <n>; other CAs by system image GUID, indexed in node-GUID order. A
//     host whose indices collide is re-indexed in node-GUID order.
//   - rails: a leaf's rail is the most common HCA index among the CAs cabled to it (ties: the
//     lowest); a CA takes the rail of the leaf it hangs off. Rail r lists its leaves and CAs.
//   - groups: leaves with the same set of level-2 neighbours form a group (scalable unit); a
//     level-2 switch joins the group when all its leaf neighbours are in that one group.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "discovery/topology.h"

namespace ibfabric {

struct FatTreeAnalysis {
  // Per node, indexed like the input:
  std::vector<int> level;
  std::vector<std::optional<std::uint32_t>> host;
  std::vector<int> hcaIndex;
  std::vector<int> rail;
  std::vector<int> group;
  // Whole fabric:
  std::vector<Host> hosts;
  std::vector<Rail> rails;
  std::vector<LeafGroup> groups;
  int maxLevel = 0;
};

/// `nodes[i].index` must equal i and `remote` must be set on both ends of each cable.
FatTreeAnalysis analyzeFatTree(const std::vector<Node>& nodes);

/// "<host> <device>_<n>" -> (host, n); nullopt for any other shape.
struct HcaName {
  std::string host;
  int index = -1;
};
std::optional<HcaName> parseHcaDescription(std::string_view description);

}  // namespace ibfabric
