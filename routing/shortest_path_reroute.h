// Shortest-path rerouting: the shortest-path entries routing/synthetic_tables.h computes for a
// whole fabric, given for a few destinations only, on a fabric with switches and cables taken out
// of service (the drained model of a what-if, routing/drained_model.h); every other entry is
// copied. Implemented beside computeShortestPathTables (synthetic_tables.cpp): the same search
// and the same tie-break (destination LID modulo the equal-cost ports).
// Pure function; thread-safe.
#pragma once

#include <vector>

#include "routing/drain_impact.h"
#include "routing/forwarding.h"

namespace ibfabric::routing {

/// `tables` with every switch's entry for each of `destinations` (LIDs of `tables.topology()`)
/// replaced by the shortest-path choice over the switch-to-switch cables that are up and not in
/// `out` (neither the cable nor a switch at either end): a switch that can no longer reach the
/// destination gets none (kNoPort), and so does a switch in `out`. Every other entry is copied;
/// switches without a table keep none. LIDs the topology does not have are skipped. Throws
/// std::invalid_argument when the tables have no topology.
ForwardingTablesPtr rerouteShortestPaths(const ForwardingTables& tables,
                                         const std::vector<Lid>& destinations, const DrainSet& out);

}  // namespace ibfabric::routing
