#include "scheduler_hooks/export_k8s.h"

#include <algorithm>
#include <set>

namespace ibfabric::scheduler_hooks {
namespace {

/// SU of a host: its leaf set on a rail-optimized fabric, else named after its spine group.
std::string suName(const ExportLayout& layout, const LeafSet& ls) {
  if (layout.railOptimized) return ls.name;
  const std::string& g = layout.groups.at(static_cast<std::size_t>(ls.group)).name;
  return "su" + g.substr(2);  // "sg01" -> "su01"
}

}  // namespace

NodeLabels nodeLabels(const ExportLayout& layout) {
  NodeLabels out;
  out.skipped = layout.k8sNames.skipped;
  for (const auto& [host, place] : layout.hosts) {
    const std::string* node = layout.k8sNames.nodeOf(host);
    if (!node) continue;  // in k8sNames.skipped, with the reason
    const LeafSet& ls = layout.leafSets.at(place.leafSet);
    std::map<std::string, std::string> labels;
    auto first = std::min_element(place.leaves.begin(), place.leaves.end());
    labels[kLabelLeaf] = layout.switchName(first->second);
    labels[kLabelSu] = suName(layout, ls);
    labels[kLabelSpineGroup] = layout.groups.at(static_cast<std::size_t>(ls.group)).name;
    if (layout.railOptimized) {
      for (const auto& [rail, leaf] : place.leaves)
        if (rail >= 0) labels[kLabelRailPrefix + std::to_string(rail)] = layout.switchName(leaf);
    }
    for (auto it = labels.begin(); it != labels.end();) {
      if (isLabelValue(it->second)) {
        ++it;
        continue;
      }
      out.skipped.push_back(host + ": label " + it->first + "=" + it->second +
                            " is not a valid label value");
      it = labels.erase(it);
    }
    out.labels[*node] = std::move(labels);
    out.hostOf[*node] = host;
  }
  return out;
}

namespace {

/// "# left out: ..." and "# skipped: ..." lines, with the count of skipped names.
std::string commentLines(const ExportLayout& layout, const std::vector<std::string>& skipped) {
  std::string out;
  for (const auto& e : layout.excluded) out += "# left out: " + e + "\n";
  if (!skipped.empty())
    out += "# skipped " + std::to_string(skipped.size()) +
           " name(s) Kubernetes would reject (docs/scheduler.md \"Node and object names\"):\n";
  for (const auto& e : skipped) out += "# skipped: " + e + "\n";
  return out;
}

}  // namespace

std::string formatKubectlLabels(const ExportLayout& layout) {
  NodeLabels nl = nodeLabels(layout);
  std::string out =
      "# Kubernetes node labels from the InfiniBand fabric (ibfabric export k8s-labels)\n";
  out += commentLines(layout, nl.skipped);
  for (const auto& [node, labels] : nl.labels) {
    out += "kubectl label node " + node;
    for (const auto& [k, v] : labels) out += " " + k + "=" + v;
    out += " --overwrite\n";
  }
  return out;
}

nlohmann::json labelsJson(const ExportLayout& layout) {
  NodeLabels nl = nodeLabels(layout);
  nlohmann::json nodes = nlohmann::json::object();
  nlohmann::json renamed = nlohmann::json::object();
  for (const auto& [node, labels] : nl.labels) {
    nodes[node] = labels;
    if (const std::string& host = nl.hostOf.at(node); host != node) renamed[node] = host;
  }
  return {{"schema", "ibfabric.k8s-labels/1"},
          {"levels", kueueLevels()},
          {"rail_optimized", layout.railOptimized},
          {"nodes", nodes},
          {"fabric_hosts", renamed},
          {"excluded", layout.excluded},
          {"skipped", nl.skipped},
          {"skipped_count", nl.skipped.size()}};
}

std::string formatLabelsYaml(const ExportLayout& layout) {
  NodeLabels nl = nodeLabels(layout);
  std::string out = "# Kubernetes node labels from the InfiniBand fabric, by node\n";
  out += commentLines(layout, nl.skipped);
  for (const auto& [node, labels] : nl.labels) {
    out += node + ":\n";
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

std::optional<std::string> kueueTopologyProblem(std::string_view name,
                                                std::string_view apiVersion) {
  if (!isDnsSubdomain(name))
    return "name: '" + std::string(name) + "' is not a Kubernetes object name (" +
           std::string(kDnsSubdomainRule) + ")";
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

}  // namespace ibfabric::scheduler_hooks
