#include "api/http/host_layout_cache.h"

namespace ibfabric::api {

namespace sh = scheduler_hooks;

std::shared_ptr<const HostLayout> HostLayoutCache::get(const ServiceStatePtr& state) {
  std::lock_guard lock(mu_);
  if (prepared_ && state_.lock() == state) return prepared_;
  auto p = std::make_shared<HostLayout>();
  p->health = hostHealthOf(*state);
  // A host whose every HCA lost its cable vanishes from the crawl: remember it as down.
  for (const Host& h : state->topology->hosts()) seen_.insert(h.name);
  for (const auto& name : seen_)
    if (!state->topology->findHost(name))
      sh::mergeHostStatus(
          p->health, name,
          {sh::HostHealth::kDown, "no longer seen by the crawls (earlier crawls saw it)"});
  p->layout = std::make_shared<const sh::ExportLayout>(sh::buildExportLayout(state->topology));
  prepared_ = std::move(p);
  state_ = state;
  return prepared_;
}
}  // namespace ibfabric::api
