// A job's predicted bottleneck: the one figure GET /api/v1/jobs/{id}/fabric (now and at the job's
// start) and the what-if (now and after a drain, on routing/drained_model.h) report for a host
// set. It is PlacementEngine::score() of the hosts in rank order under the job's pattern
// (docs/placement.md "Predicted bottleneck"): every flow of the pattern routed on the engine's
// forwarding tables, each link's residual capacity shared among the job's flows on it, the
// minimum over the links used (bytes/s per flow; 0 when a flow has no usable route).
// Pure function; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "routing/placement_engine.h"

namespace ibfabric::routing {

/// nullopt when a host is unknown to the engine's topology.
std::optional<double> predictedBottleneck(const PlacementEngine& engine,
                                          const std::vector<std::string>& hostsInRankOrder,
                                          CommPattern pattern);

}  // namespace ibfabric::routing
