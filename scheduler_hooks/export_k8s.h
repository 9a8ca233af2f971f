// Kubernetes exports of an ExportLayout (docs/scheduler.md):
//   - node labels per host: ibfabric.io/leaf (leaf switch of the host's first HCA),
//     ibfabric.io/su (scalable unit: the leaf set on a rail-optimized fabric, the spine group's
//     unit otherwise), ibfabric.io/spine-group, and ibfabric.io/rail-<i> (leaf of rail i) on
//     rail-optimized fabrics. The first three nest (leaf within su within spine-group) so they
//     are usable as Kueue Topology-Aware-Scheduling levels;
//   - a Kueue `Topology` listing those levels, coarsest first, then kubernetes.io/hostname;
//   - Volcano `HyperNode` objects (topology.volcano.sh/v1alpha1): tier 1 one per leaf switch
//     with its hosts as Node members; on a rail-optimized fabric tier 2 one per scalable unit
//     whose members are its rail leaves' HyperNodes (grouped, not collapsed into one); then one
//     per spine group when a group holds more than one unit; a root over the top tier when there
//     is more than one top HyperNode.
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler_hooks/export_layout.h"

namespace ibfabric::scheduler_hooks {

inline constexpr const char* kLabelLeaf = "ibfabric.io/leaf";
inline constexpr const char* kLabelSu = "ibfabric.io/su";
inline constexpr const char* kLabelSpineGroup = "ibfabric.io/spine-group";
inline constexpr const char* kLabelRailPrefix = "ibfabric.io/rail-";

/// Labels of every exported host (hosts whose names are not valid node names are skipped and
/// reported in `skipped`).
struct NodeLabels {
  std::map<std::string, std::map<std::string, std::string>> labels;  ///< host -> key -> value
  std::vector<std::string> skipped;
};
NodeLabels nodeLabels(const ExportLayout& layout);

/// `kubectl label node <host> k=v ... --overwrite`, one line per host, comments for left-out
/// hosts.
std::string formatKubectlLabels(const ExportLayout& layout);
/// {"schema": "ibfabric.k8s-labels/1", "levels": [...], "nodes": {"<host>": {labels}},
///  "excluded": [...]}
nlohmann::json labelsJson(const ExportLayout& layout);
/// The same labels as a YAML map (host: {label: value}).
std::string formatLabelsYaml(const ExportLayout& layout);

/// Kueue TAS level labels, coarsest first, ending with kubernetes.io/hostname.
std::vector<std::string> kueueLevels();
/// The API versions in which Kueue serves `Topology`, newest first: v1beta2 (the storage
/// version of current releases: the default), v1beta1 (deprecated), v1alpha1 (the only one of
/// Kueue <= v0.13).
const std::vector<std::string>& kueueTopologyApiVersions();
inline constexpr const char* kKueueDefaultApiVersion = "kueue.x-k8s.io/v1beta2";
/// A Kubernetes object name as the API server checks it (RFC 1123 DNS subdomain: at most 253
/// lower-case letters, digits, '-' and '.', starting and ending with a letter or digit).
bool isDnsSubdomain(std::string_view name);
/// Why a Topology named `name` in `apiVersion` would be rejected (one line naming the field);
/// nullopt when it would not.
std::optional<std::string> kueueTopologyProblem(std::string_view name, std::string_view apiVersion);
/// A Kueue Topology object; the caller checks kueueTopologyProblem() first.
std::string kueueTopologyYaml(const std::string& name = "ibfabric",
                              const std::string& apiVersion = kKueueDefaultApiVersion);

struct HyperNode {
  std::string name;
  int tier = 1;
  bool nodeMembers = false;          ///< members are Nodes (tier 1) or HyperNodes
  std::vector<std::string> members;  ///< sorted
};
/// The HyperNodes, lowest tier first.
std::vector<HyperNode> volcanoHyperNodes(const ExportLayout& layout);
/// Multi-document YAML of the HyperNodes (kubectl apply -f ready).
std::string volcanoHyperNodesYaml(const ExportLayout& layout);

}  // namespace ibfabric::scheduler_hooks
