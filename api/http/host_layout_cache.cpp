#include "api/http/host_layout_cache.h"

namespace ibfabric::api {

namespace sh = scheduler_hooks;

std::shared_ptr<const HostLayout> HostLayoutCache::get(const ServiceStatePtr& state) {
  std::lock_guard lock(mu_);
  if (prepared_ && state_.lock() == state) return prepared_;
  auto p = std::make_shared<HostLayout>();
  // A host whose every HCA lost its cable stays in the model with its HCAs missing
  // (discovery/fabric_memory.h): down, like any host without an HCA up.
  p->health = hostHealthOf(*state);
  sh::ExportOptions o;
  o.k8sNodeNames = k8sNodeNames_;
  p->layout = std::make_shared<const sh::ExportLayout>(sh::buildExportLayout(state->topology, o));
  prepared_ = std::move(p);
  state_ = state;
  return prepared_;
}
}  // namespace ibfabric::api
