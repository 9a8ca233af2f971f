#include "scheduler_hooks/export_volcano.h"

#include <algorithm>
#include <map>
#include <set>

#include "scheduler_hooks/k8s_names.h"

namespace ibfabric::scheduler_hooks {
namespace {

constexpr const char* kRootName = "ibfabric-root";

/// The tiers with the layout's names (switch, leaf-set and group names; hosts).
std::vector<HyperNode> rawHyperNodes(const ExportLayout& layout) {
  std::vector<HyperNode> out;
  std::vector<std::vector<std::string>> current(layout.groups.size());  // top names per group
  // Tier 1: leaf switches with their hosts.
  for (const LeafSet& ls : layout.leafSets) {
    std::vector<std::string> leafNames;
    for (NodeIndex leaf : ls.leaves) {
      HyperNode hn{layout.switchName(leaf), 1, "leaf", true, {}};
      for (const auto& host : ls.hosts) {
        const HostPlace& place = layout.hosts.at(host);
        for (const auto& [rail, l] : place.leaves)
          if (l == leaf) hn.members.push_back(host);
      }
      std::sort(hn.members.begin(), hn.members.end());
      hn.members.erase(std::unique(hn.members.begin(), hn.members.end()), hn.members.end());
      if (hn.members.empty()) continue;
      leafNames.push_back(hn.name);
      out.push_back(std::move(hn));
    }
    auto& top = current.at(static_cast<std::size_t>(ls.group));
    if (layout.railOptimized && leafNames.size() > 1) continue;  // grouped at tier 2 below
    top.insert(top.end(), leafNames.begin(), leafNames.end());
  }
  int tier = 1;
  // Tier 2 on rail-optimized fabrics: one per scalable unit, its rail leaves as members.
  if (layout.railOptimized) {
    ++tier;
    for (const LeafSet& ls : layout.leafSets) {
      if (ls.leaves.size() < 2) continue;
      HyperNode hn{ls.name, tier, "su", false, {}};
      for (NodeIndex leaf : ls.leaves) hn.members.push_back(layout.switchName(leaf));
      std::sort(hn.members.begin(), hn.members.end());
      current.at(static_cast<std::size_t>(ls.group)).push_back(hn.name);
      out.push_back(std::move(hn));
    }
  }
  // Spine groups, when some group holds more than one unit.
  bool anyMulti = std::any_of(current.begin(), current.end(),
                              [](const auto& names) { return names.size() > 1; });
  std::vector<std::string> top;
  if (anyMulti) {
    ++tier;
    for (std::size_t g = 0; g < layout.groups.size(); ++g) {
      if (current[g].empty()) continue;
      HyperNode hn{layout.groups[g].name, tier, "spine-group", false, current[g]};
      std::sort(hn.members.begin(), hn.members.end());
      top.push_back(hn.name);
      out.push_back(std::move(hn));
    }
  } else {
    for (const auto& names : current) top.insert(top.end(), names.begin(), names.end());
  }
  if (top.size() > 1) {
    HyperNode root{kRootName, tier + 1, "fabric", false, top};
    std::sort(root.members.begin(), root.members.end());
    out.push_back(std::move(root));
  }
  return out;
}

/// Members as Kubernetes names; a HyperNode whose members all went is skipped (and so are its
/// parents when nothing is left under them), then every HyperNode gets its object name.
HyperNodes named(const ExportLayout& layout, std::vector<HyperNode> raw) {
  HyperNodes out;
  out.skipped = layout.k8sNames.skipped;
  std::vector<std::string> rawNames;
  for (const HyperNode& hn : raw) rawNames.push_back(hn.name);
  const std::map<std::string, std::string> objectName = k8sObjectNames(rawNames);
  std::set<std::string> kept;  // raw names of the HyperNodes emitted so far
  for (HyperNode& hn : raw) {
    std::vector<std::string> members;
    for (const auto& m : hn.members) {
      if (hn.nodeMembers) {
        if (const std::string* node = layout.k8sNames.nodeOf(m)) members.push_back(*node);
      } else if (kept.count(m)) {
        members.push_back(objectName.at(m));
      }
    }
    auto name = objectName.find(hn.name);
    if (name == objectName.end() || members.empty()) {
      out.skipped.push_back("HyperNode " + hn.name + ": " +
                            (members.empty() ? std::string("no member left with a valid name")
                                             : std::string("no valid object name")));
      continue;
    }
    std::sort(members.begin(), members.end());
    kept.insert(hn.name);
    out.items.push_back({name->second, hn.tier, hn.tierName, hn.nodeMembers, std::move(members)});
  }
  return out;
}

}  // namespace

HyperNodes volcanoHyperNodes(const ExportLayout& layout) {
  return named(layout, rawHyperNodes(layout));
}

std::string volcanoHyperNodesYaml(const ExportLayout& layout) {
  const HyperNodes hns = volcanoHyperNodes(layout);
  std::string out = "# Volcano HyperNodes from the InfiniBand fabric (ibfabric export volcano)\n";
  for (const auto& e : layout.excluded) out += "# left out: " + e + "\n";
  if (!hns.skipped.empty())
    out += "# skipped " + std::to_string(hns.skipped.size()) +
           " name(s) Kubernetes would reject (docs/scheduler.md \"Node and object names\"):\n";
  for (const auto& e : hns.skipped) out += "# skipped: " + e + "\n";
  for (const HyperNode& hn : hns.items) {
    out += "---\napiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata:\n  name: " +
           hn.name + "\n  labels:\n    ibfabric.io/generated: \"true\"\nspec:\n  tier: " +
           std::to_string(hn.tier) + "\n  tierName: " + hn.tierName + "\n  members:\n";
    for (const auto& m : hn.members) {
      out += std::string("  - type: ") + (hn.nodeMembers ? "Node" : "HyperNode") +
             "\n    selector:\n      exactMatch:\n        name: \"" + m + "\"\n";
    }
  }
  return out;
}

}  // namespace ibfabric::scheduler_hooks
