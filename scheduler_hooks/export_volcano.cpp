#include "scheduler_hooks/export_volcano.h"

#include <algorithm>
#include <map>
#include <set>

#include "scheduler_hooks/k8s_names.h"

namespace ibfabric::scheduler_hooks {
namespace {

constexpr const char* kRootName = "ibfabric-root";
constexpr const char* kTierLeaf = "leaf";
constexpr const char* kTierSu = "su";
constexpr const char* kTierSpineGroup = "spine-group";
constexpr const char* kTierFabric = "fabric";

/// The tiers with the layout's names (leaf-set and group names; hosts): tier 1 the leaf sets
/// (each host in exactly one), then the spine groups when some group holds several leaf sets,
/// then a root when more than one HyperNode is left on top.
std::vector<HyperNode> rawHyperNodes(const ExportLayout& layout) {
  std::vector<HyperNode> out;
  const std::string unit = layout.railOptimized ? kTierSu : kTierLeaf;
  std::vector<std::vector<std::string>> byGroup(layout.groups.size());
  for (const LeafSet& ls : layout.leafSets) {
    out.push_back({ls.name, 1, unit, true, ls.hosts});
    byGroup.at(static_cast<std::size_t>(ls.group)).push_back(ls.name);
  }
  int tier = 1;
  std::vector<std::string> top;
  const bool groupTier = std::any_of(byGroup.begin(), byGroup.end(),
                                     [](const auto& names) { return names.size() > 1; });
  if (groupTier) ++tier;
  for (std::size_t g = 0; g < layout.groups.size(); ++g) {
    if (!groupTier) {
      top.insert(top.end(), byGroup[g].begin(), byGroup[g].end());
      continue;
    }
    if (byGroup[g].empty()) continue;
    out.push_back({layout.groups[g].name, tier, kTierSpineGroup, false, byGroup[g]});
    top.push_back(layout.groups[g].name);
  }
  if (top.size() > 1) out.push_back({kRootName, tier + 1, kTierFabric, false, top});
  for (HyperNode& hn : out) std::sort(hn.members.begin(), hn.members.end());
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
