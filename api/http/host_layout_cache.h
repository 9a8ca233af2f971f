// HostLayoutCache: the host health and the export layout of one ServiceState, computed once and
// shared by the requests that read the same snapshot (the scheduler exports and the
// kube-scheduler extender, api/http/routes/): hostHealthOf(state) (api/service/host_health.h);
// hosts whose HCAs all went are still in the model, missing (discovery/fabric_memory.h).
//
// Owned by the Router. Thread-safe (get() locks).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "api/service/host_health.h"
#include "api/service/service_state.h"
#include "scheduler_hooks/export_layout.h"

namespace ibfabric::api {

/// Layout and health of one state.
struct HostLayout {
  scheduler_hooks::HostHealthMap health;
  std::shared_ptr<const scheduler_hooks::ExportLayout> layout;  // all hosts (no exclusion)
};

class HostLayoutCache {
 public:
  /// `k8sNodeNames`: the Kubernetes node names of every layout (null = lower-cased host names).
  explicit HostLayoutCache(std::shared_ptr<const scheduler_hooks::K8sNodeNameMap> k8sNodeNames = {})
      : k8sNodeNames_(std::move(k8sNodeNames)) {}

  /// The layout of `state` (which has a topology), computed on the first call for it.
  std::shared_ptr<const HostLayout> get(const ServiceStatePtr& state);
  const std::shared_ptr<const scheduler_hooks::K8sNodeNameMap>& k8sNodeNames() const {
    return k8sNodeNames_;
  }

 private:
  const std::shared_ptr<const scheduler_hooks::K8sNodeNameMap> k8sNodeNames_;
  std::mutex mu_;
  std::weak_ptr<const ServiceState> state_;
  std::shared_ptr<const HostLayout> prepared_;
};

}  // namespace ibfabric::api
