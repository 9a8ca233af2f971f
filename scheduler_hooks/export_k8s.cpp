#include "scheduler_hooks/export_k8s.h"

#include <algorithm>
#include <set>

namespace ibfabric::scheduler_hooks {
namespace {

constexpr const char* kRootName = "ibfabric-root";

/// SU of a host: its leaf set on a rail-optimized fabric, else named after its spine group.
std::string suName(const ExportLayout& layout, const LeafSet& ls) {
  if (layout.railOptimized) return ls.name;
  const std::string& g = layout.groups.at(static_cast<std::size_t>(ls.group)).name;
  return "su" + g.substr(2);  // "sg01" -> "su01"
}

}  // namespace

NodeLabels nodeLabels(const ExportLayout& layout) {
  NodeLabels out;
  for (const auto& [host, place] : layout.hosts) {
    if (!isPlainHostName(host)) {
      out.skipped.push_back(host + ": not a valid node name");
      continue;
    }
    const LeafSet& ls = layout.leafSets.at(place.leafSet);
    auto& labels = out.labels[host];
    auto first = std::min_element(place.leaves.begin(), place.leaves.end());
    labels[kLabelLeaf] = layout.switchName(first->second);
    labels[kLabelSu] = suName(layout, ls);
    labels[kLabelSpineGroup] = layout.groups.at(static_cast<std::size_t>(ls.group)).name;
    if (layout.railOptimized) {
      for (const auto& [rail, leaf] : place.leaves)
        if (rail >= 0) labels[kLabelRailPrefix + std::to_string(rail)] = layout.switchName(leaf);
    }
  }
  return out;
}

std::string formatKubectlLabels(const ExportLayout& layout) {
  NodeLabels nl = nodeLabels(layout);
  std::string out =
      "# Kubernetes node labels from the InfiniBand fabric (ibfabric export k8s-labels)\n";
  for (const auto& e : layout.excluded) out += "# left out: " + e + "\n";
  for (const auto& e : nl.skipped) out += "# skipped: " + e + "\n";
  for (const auto& [host, labels] : nl.labels) {
    out += "kubectl label node " + host;
    for (const auto& [k, v] : labels) out += " " + k + "=" + v;
    out += " --overwrite\n";
  }
  return out;
}

nlohmann::json labelsJson(const ExportLayout& layout) {
  NodeLabels nl = nodeLabels(layout);
  nlohmann::json nodes = nlohmann::json::object();
  for (const auto& [host, labels] : nl.labels) nodes[host] = labels;
  std::vector<std::string> excluded = layout.excluded;
  excluded.insert(excluded.end(), nl.skipped.begin(), nl.skipped.end());
  return {{"schema", "ibfabric.k8s-labels/1"},
          {"levels", kueueLevels()},
          {"rail_optimized", layout.railOptimized},
          {"nodes", nodes},
          {"excluded", excluded}};
}

std::string formatLabelsYaml(const ExportLayout& layout) {
  NodeLabels nl = nodeLabels(layout);
  std::string out = "# Kubernetes node labels from the InfiniBand fabric, by node\n";
  for (const auto& e : layout.excluded) out += "# left out: " + e + "\n";
  for (const auto& [host, labels] : nl.labels) {
    out += host + ":\n";
    for (const auto& [k, v] : labels) out += "  " + k + ": \"" + v + "\"\n";
  }
  return out;
}

std::vector<std::string> kueueLevels() {
  return {kLabelSpineGroup, kLabelSu, kLabelLeaf, "kubernetes.io/hostname"};
}

const std::vector<std::string>& kueueTopologyApiVersions() {
  static const std::vector<std::string> versions = {
      "kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1alpha1"};
  return versions;
}

bool isDnsSubdomain(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  // Every dot-separated part is a DNS label: alphanumeric at both ends, '-' inside.
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = name.find('.', start);
    const std::string_view part =
        name.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (part.empty() || part.size() > 63 || !alnum(part.front()) || !alnum(part.back()))
      return false;
    for (char c : part)
      if (!alnum(c) && c != '-') return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::optional<std::string> kueueTopologyProblem(std::string_view name,
                                                std::string_view apiVersion) {
  if (!isDnsSubdomain(name))
    return "name: '" + std::string(name) +
           "' is not a Kubernetes object name (lower-case letters, digits, '-' and '.', "
           "starting and ending with a letter or digit, at most 253)";
  const auto& known = kueueTopologyApiVersions();
  if (std::find(known.begin(), known.end(), apiVersion) == known.end()) {
    std::string list;
    for (const auto& v : known) list += (list.empty() ? "" : ", ") + v;
    return "api_version: '" + std::string(apiVersion) + "' is not one Kueue serves Topology in (" +
           list + ")";
  }
  return std::nullopt;
}

std::string kueueTopologyYaml(const std::string& name, const std::string& apiVersion) {
  std::string out = "apiVersion: " + apiVersion + "\nkind: Topology\nmetadata:\n  name: \"" + name +
                    "\"\nspec:\n  levels:\n";
  for (const auto& l : kueueLevels()) out += "  - nodeLabel: \"" + l + "\"\n";
  return out;
}

std::vector<HyperNode> volcanoHyperNodes(const ExportLayout& layout) {
  std::vector<HyperNode> out;
  std::vector<std::vector<std::string>> current(layout.groups.size());  // top names per group
  // Tier 1: leaf switches with their hosts.
  for (const LeafSet& ls : layout.leafSets) {
    std::vector<std::string> leafNames;
    for (NodeIndex leaf : ls.leaves) {
      HyperNode hn{layout.switchName(leaf), 1, true, {}};
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
      HyperNode hn{ls.name, tier, false, {}};
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
      HyperNode hn{layout.groups[g].name, tier, false, current[g]};
      std::sort(hn.members.begin(), hn.members.end());
      top.push_back(hn.name);
      out.push_back(std::move(hn));
    }
  } else {
    for (const auto& names : current) top.insert(top.end(), names.begin(), names.end());
  }
  if (top.size() > 1) {
    HyperNode root{kRootName, tier + 1, false, top};
    std::sort(root.members.begin(), root.members.end());
    out.push_back(std::move(root));
  }
  return out;
}

std::string volcanoHyperNodesYaml(const ExportLayout& layout) {
  std::string out = "# Volcano HyperNodes from the InfiniBand fabric (ibfabric export volcano)\n";
  for (const auto& e : layout.excluded) out += "# left out: " + e + "\n";
  for (const HyperNode& hn : volcanoHyperNodes(layout)) {
    out += "---\napiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata:\n  name: " +
           hn.name + "\n  labels:\n    ibfabric.io/generated: \"true\"\nspec:\n  tier: " +
           std::to_string(hn.tier) + "\n  members:\n";
    for (const auto& m : hn.members) {
      out += std::string("  - type: ") + (hn.nodeMembers ? "Node" : "HyperNode") +
             "\n    selector:\n      exactMatch:\n        name: \"" + m + "\"\n";
    }
  }
  return out;
}

}  // namespace ibfabric::scheduler_hooks
