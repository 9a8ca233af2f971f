// ScoringContext: what every scorer of one placement request reads.
//
// The index, the link load, the limits, and the per-directed-link residual capacity and
// utilization that PlacementEngine precomputes from the load. Borrowed references: the
// PlacementEngine answering the request owns them and outlives every scorer. Read-only, so one
// context is shared by all the scorers of a request (the scorers themselves are not thread-safe).
#pragma once

#include <vector>

#include "routing/link_load.h"
#include "routing/placement_engine.h"

namespace ibfabric::routing::placement {

struct ScoringContext {
  const PlacementIndex& ix;
  const LinkLoadModel& load;
  const PlacementLimits& limits;
  const std::vector<double>& residual;     ///< per directed link, bytes/s
  const std::vector<double>& utilization;  ///< per directed link, [0, 1]
};

}  // namespace ibfabric::routing::placement
