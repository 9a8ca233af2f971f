// Synthetic forwarding tables: shortest-path LFTs computed from a topology alone, for fabrics
// without a subnet manager to read from (tests, benchmarks, the daemon's fake sources).
//
// For every destination LID (CA ports and switch port 0), each switch forwards on a shortest
// path over active switch-to-switch links; among equal-cost ports it picks by destination LID
// modulo their count, which spreads destinations over up-ports the way ftree/minhop do.
// Pure function; thread-safe.
#pragma once

#include "discovery/netfile.h"
#include "routing/forwarding.h"

namespace ibfabric::routing {

/// Source "memory".
ForwardingTablesPtr computeShortestPathTables(TopologyPtr topology);

/// Gives every switch (port 0) and every cabled CA port a LID, 1, 2, ... in file order, where the
/// file gives none (generated fabrics have no LIDs; a subnet manager would assign them).
void assignSequentialLids(NetFabric& fabric);

}  // namespace ibfabric::routing
