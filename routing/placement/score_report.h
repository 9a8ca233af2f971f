// The PlacementScore of an evaluated host set: its numbers, its hottest links and the one-line
// explanation of placement.h. A pure function of its arguments: usable from any thread.
#pragma once

#include "routing/placement.h"
#include "routing/placement/host_order.h"
#include "routing/placement/objective.h"
#include "routing/placement/scoring_context.h"

namespace ibfabric::routing::placement {

/// The score of `order` under `pattern` from its evaluation `e` (with its hottest links listed).
PlacementScore scoreReport(const ScoringContext& ctx, const Order& order, CommPattern pattern,
                           const Eval& e);

}  // namespace ibfabric::routing::placement
