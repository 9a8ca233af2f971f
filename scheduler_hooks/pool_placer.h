// A simple, deterministic routing::Placer over a topology: hosts grouped by the set of leaf
// switches their HCAs attach to; a job goes into the smallest group that holds it whole, else
// the largest groups first — so it spans as few leaves as it can. It ignores link load and
// routes: it stands in for the placement engine (routing/placement.h) in unit tests, in the
// benchmark, and in the daemon while the engine is not ready (api/service/pool_service.cpp).
// Thread-safe when `topology` is.
#pragma once

#include <functional>

#include "discovery/topology.h"
#include "routing/placement.h"

namespace ibfabric::scheduler_hooks {

routing::Placer makeLeafPackingPlacer(std::function<TopologyPtr()> topology);

}  // namespace ibfabric::scheduler_hooks
