// kube-scheduler extender: the filter and prioritize verbs of the HTTP extender protocol
// (k8s.io/kube-scheduler/extender/v1), as pure handler functions of a request body and a fabric
// context. The daemon serves them at POST /scheduler/filter and /scheduler/prioritize
// (api/http/routes/extender_routes.cpp); tests call them directly with JSON exactly as
// kube-scheduler sends it (docs/scheduler.md).
//
// Wire format: the Go types carry no json tags, so kube-scheduler writes the field names as
// declared — ExtenderArgs {"Pod", "Nodes" (a v1.NodeList, when nodeCacheCapable is false),
// "NodeNames" (when true)}; it reads ExtenderFilterResult {"Nodes" | "NodeNames", "FailedNodes",
// "FailedAndUnresolvableNodes", "Error"} and HostPriorityList [{"Host", "Score"}] with Go's
// case-insensitive matching. Requests are read case-insensitively too; answers use the exact
// names. The answer mirrors the request's form: NodeNames in, NodeNames out; Nodes in, the same
// Node objects out.
//
// Pod annotations (metadata.annotations):
//   ibfabric.io/allow-degraded  "true": keep nodes whose HCA links are degraded (never down or
//                               faulty ones). Default false.
//   ibfabric.io/job-group       the job the pod belongs to; hosts already placed for it come from
//                               ExtenderContext::jobGroupHosts (the daemon's plug-in point).
//   ibfabric.io/peer-hosts      Slurm hostlist of the hosts the job's other pods run on
//                               ("dgx[0001-0004]"), for schedulers that know them.
//   ibfabric.io/pattern         ring_allreduce | alltoall | none (for the placement engine).
//
// filter drops nodes unknown to the fabric and nodes whose HCA links are down or faulty
// (degraded too unless allowed); each dropped node is in FailedNodes and in
// FailedAndUnresolvableNodes (preempting pods cannot fix a cable). prioritize scores 0..10 by
// extender_scores.h: a peer's own node on top, then its leaf set (SU), then the rest, each band
// ordered by what the placement engine predicts for the job with that node added.
//
// Thread-safe: pure functions of their arguments (the context's callbacks must be thread-safe).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "routing/placement.h"
#include "scheduler_hooks/export_layout.h"

namespace ibfabric::scheduler_hooks {

inline constexpr const char* kAnnotationAllowDegraded = "ibfabric.io/allow-degraded";
inline constexpr const char* kAnnotationJobGroup = "ibfabric.io/job-group";
inline constexpr const char* kAnnotationPeerHosts = "ibfabric.io/peer-hosts";
inline constexpr const char* kAnnotationPattern = "ibfabric.io/pattern";

struct ExtenderContext {
  /// The fabric; null while the first crawl has not completed (answers carry an Error).
  TopologyPtr topology;
  /// Hosts whose HCA links are not ok.
  HostHealthMap health;
  /// buildExportLayout(topology) with the K8sNodeNameMap, when the caller keeps one (else built
  /// per request, without a map).
  std::shared_ptr<const ExportLayout> layout;
  /// Utilization in [0, 1] of a leaf switch's up-links (the busier direction, averaged over its
  /// up ports); nullopt when unknown. Optional.
  std::function<std::optional<double>(NodeIndex leaf)> uplinkUtilization;
  /// Hosts already running pods of a job group. Optional.
  std::function<std::vector<std::string>(const std::string& group)> jobGroupHosts;
  /// The placement engine. Optional.
  std::optional<routing::Placer> placer;
};

struct ExtenderReply {
  int status = 200;
  nlohmann::json body;
};

/// POST /scheduler/filter: body = ExtenderArgs, reply = ExtenderFilterResult.
ExtenderReply extenderFilter(std::string_view body, const ExtenderContext& context);
/// POST /scheduler/prioritize: body = ExtenderArgs, reply = HostPriorityList.
ExtenderReply extenderPrioritize(std::string_view body, const ExtenderContext& context);

/// The fabric host a Kubernetes node name stands for, by the name policy of k8s_names.h (the
/// layout's node names: kubelet's lower-cased host name or the K8sNodeNameMap): the node name,
/// else its first DNS label ("dgx0001.cluster.local"), else a fabric host of exactly that name
/// (peer hostlists may list hosts); nullopt when none matches.
std::optional<std::string> fabricHostOf(const ExportLayout& layout, std::string_view nodeName);

}  // namespace ibfabric::scheduler_hooks
