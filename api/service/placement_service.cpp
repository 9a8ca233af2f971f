#include "api/service/placement_service.h"

#include "api/service/link_load_fold.h"

namespace ibfabric::api {

using routing::PlacementError;
using Kind = routing::PlacementError::Kind;

std::string_view placementResultOf(Kind kind) {
  switch (kind) {
    case Kind::kInvalidRequest:
      return "invalid";
    case Kind::kUnsatisfiable:
      return "unsatisfiable";
    case Kind::kNotReady:
      return "not_ready";
  }
  return "error";
}

PlacementService::PlacementService(FabricService& service) : service_(service) {}

std::shared_ptr<const routing::PlacementEngine> PlacementService::engine() {
  // The state is read under the lock, so the cached engine only ever moves to newer states.
  std::lock_guard lock(mu_);
  ServiceStatePtr state = service_.state();
  if (engine_ && state_.lock() == state) return engine_;
  if (!state->topology) throw PlacementError(Kind::kNotReady, "no topology yet (first crawl)");
  if (!state->counters || !state->linkLoad)
    throw PlacementError(Kind::kNotReady, "no counter sweep yet");
  if (!state->forwarding) throw PlacementError(Kind::kNotReady, "no forwarding tables yet");
  TopologyPtr topology =
      state->forwarding->topology() ? state->forwarding->topology() : state->topology;
  if (!index_ || index_->topologyPtr() != topology || index_->tablesPtr() != state->forwarding)
    index_ = std::make_shared<const routing::PlacementIndex>(topology, state->forwarding);
  engine_ = std::make_shared<const routing::PlacementEngine>(
      index_, linkLoadOn(topology, state->linkLoad, *state));
  state_ = state;
  return engine_;
}

routing::PlacementAnswer PlacementService::place(const routing::PlacementRequest& request) {
  return engine()->place(request);
}

void PlacementService::record(std::string_view result, double seconds) {
  std::lock_guard lock(statsMu_);
  for (std::size_t i = 0; i < PlacementStats::kResults.size(); ++i)
    if (PlacementStats::kResults[i] == result) ++stats_.requests[i];
  for (std::size_t i = 0; i < PlacementStats::kBuckets.size(); ++i)
    if (seconds <= PlacementStats::kBuckets[i]) ++stats_.buckets[i];
  ++stats_.count;
  stats_.sumSeconds += seconds;
}

PlacementStats PlacementService::stats() const {
  std::lock_guard lock(statsMu_);
  return stats_;
}

}  // namespace ibfabric::api
