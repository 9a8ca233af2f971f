// Kubernetes exports of an ExportLayout (docs/scheduler.md):
//   - node labels per host: ibfabric.io/leaf (leaf switch of the host's first HCA),
//     ibfabric.io/su (scalable unit: the leaf set on a rail-optimized fabric, the spine group's
//     unit otherwise), ibfabric.io/spine-group, and ibfabric.io/rail-<i> (leaf of rail i) on
//     rail-optimized fabrics. The first three nest (leaf within su within spine-group) so they
//     are usable as Kueue Topology-Aware-Scheduling levels;
//   - a Kueue `Topology` listing those levels, coarsest first, then kubernetes.io/hostname.
// Nodes are named by the policy of k8s_names.h (kubelet's lower-cased host name, or the
// K8sNodeNameMap); hosts without a valid node name and invalid label values are skipped and
// listed with the reason (comments, "skipped" in JSON). Volcano HyperNodes: export_volcano.h.
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler_hooks/export_layout.h"
#include "scheduler_hooks/k8s_names.h"

namespace ibfabric::scheduler_hooks {

inline constexpr const char* kLabelLeaf = "ibfabric.io/leaf";
inline constexpr const char* kLabelSu = "ibfabric.io/su";
inline constexpr const char* kLabelSpineGroup = "ibfabric.io/spine-group";
inline constexpr const char* kLabelRailPrefix = "ibfabric.io/rail-";

/// Labels of every exported host, by Kubernetes node name. Hosts without a valid node name and
/// label values the API server would reject are left out and listed in `skipped`.
struct NodeLabels {
  std::map<std::string, std::map<std::string, std::string>> labels;  ///< node -> key -> value
  std::map<std::string, std::string> hostOf;                         ///< node -> fabric host
  std::vector<std::string> skipped;
};
NodeLabels nodeLabels(const ExportLayout& layout);

/// `kubectl label node <node> k=v ... --overwrite`, one line per node, comments for left-out
/// hosts and skipped names (with their count).
std::string formatKubectlLabels(const ExportLayout& layout);
/// {"schema": "ibfabric.k8s-labels/1", "levels": [...], "rail_optimized", "nodes": {"<node>":
///  {labels}}, "fabric_hosts": {"<node>": "<host>"} (nodes named otherwise than their host),
///  "excluded": [...], "skipped": [...], "skipped_count": n}
nlohmann::json labelsJson(const ExportLayout& layout);
/// The same labels as a YAML map (node: {label: value}).
std::string formatLabelsYaml(const ExportLayout& layout);

/// Kueue TAS level labels, coarsest first, ending with kubernetes.io/hostname.
std::vector<std::string> kueueLevels();
/// The API versions in which Kueue serves `Topology`, newest first: v1beta2 (the storage
/// version of current releases: the default), v1beta1 (deprecated), v1alpha1 (the only one of
/// Kueue <= v0.13).
const std::vector<std::string>& kueueTopologyApiVersions();
inline constexpr const char* kKueueDefaultApiVersion = "kueue.x-k8s.io/v1beta2";
/// Why a Topology named `name` in `apiVersion` would be rejected (one line naming the field);
/// nullopt when it would not.
std::optional<std::string> kueueTopologyProblem(std::string_view name, std::string_view apiVersion);
/// A Kueue Topology object; the caller checks kueueTopologyProblem() first.
std::string kueueTopologyYaml(const std::string& name = "ibfabric",
                              const std::string& apiVersion = kKueueDefaultApiVersion);

}  // namespace ibfabric::scheduler_hooks
