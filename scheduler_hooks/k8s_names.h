// The one name policy of every Kubernetes-facing export (node labels, Volcano HyperNodes, the
// Kueue Topology) and of the kube-scheduler extender (docs/scheduler.md "Node and object names"):
//   - node names: a fabric host is the node kubelet registers for it, its lower-cased host name
//     (kubelet lower-cases the hostname), unless the K8sNodeNameMap names it otherwise. A node
//     name must be an RFC 1123 DNS subdomain; a host whose node name is not one ("gpu_node01"),
//     or that shares its node name with another host ("DGX01" and "dgx01"), is skipped with the
//     reason (never emitted invalid, never dropped silently);
//   - object names (HyperNode metadata.name and the members naming them): names that are
//     already DNS subdomains are kept; others are lower-cased with every other character turned
//     into '-'; a sanitized name that collides with another name gets "-" and 8 hex digits of a
//     hash of the original name, so it does not depend on what else the fabric holds;
//   - label values: at most 63 characters of [A-Za-z0-9._-], starting and ending with a letter
//     or digit (empty allowed).
// Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler_hooks/k8s_node_name_map.h"

namespace ibfabric::scheduler_hooks {

inline constexpr std::string_view kDnsSubdomainRule =
    "lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most "
    "253";

/// A Kubernetes object or node name as the API server checks it (RFC 1123 DNS subdomain: at most
/// 253 characters; dot-separated parts of lower-case letters, digits and '-' that start and end
/// with a letter or digit).
bool isDnsSubdomain(std::string_view name);
/// A label value as the API server checks it.
bool isLabelValue(std::string_view value);

/// The node name kubelet registers for a host: the host name lower-cased.
std::string kubeletNodeName(std::string_view host);

/// Fabric hosts and their Kubernetes node names, both ways.
struct K8sNodeNames {
  std::map<std::string, std::string> nodeOfHost;  ///< host -> node name (valid ones only)
  std::map<std::string, std::string> hostOfNode;  ///< node name -> host
  /// Hosts without a usable node name, with the reason: "gpu_node01: node name 'gpu_node01' is
  /// not valid (...)". Sorted by host.
  std::vector<std::string> skipped;

  /// The node name of a host, or null when it has none.
  const std::string* nodeOf(const std::string& host) const;
};
/// The node names of `hosts` by the policy above; `map` may be null.
K8sNodeNames resolveK8sNodeNames(const std::vector<std::string>& hosts, const K8sNodeNameMap* map);

/// `name` as an object name: itself when valid, else sanitized ("" when nothing is left).
std::string sanitizedObjectName(std::string_view name);
/// The object name of each of `names` (distinct raw names): valid names unchanged; sanitized
/// names that collide with another name get a stable hash suffix. Names that leave nothing after
/// sanitizing are absent from the answer (the caller skips them with a warning).
std::map<std::string, std::string> k8sObjectNames(const std::vector<std::string>& names);

}  // namespace ibfabric::scheduler_hooks
