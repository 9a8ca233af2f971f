// In-memory forwarding tables for unit tests and benches: a generated fabric gets LIDs (as a
// subnet manager would assign them) and min-hop up/down LFTs with destinations spread over the
// equal-cost ports by LID (ftree-like on a fat tree). Not the real routes: those come from the
// switches (routing/lft_reader) or OpenSM's dump. Pure functions; thread-safe.
#pragma once

#include "discovery/netfile.h"
#include "discovery/topology.h"
#include "routing/forwarding.h"

namespace ibfabric::testing {

/// Switch LIDs 1..S in node order, then one LID per cabled CA port.
void assignLids(NetFabric& fabric);

/// topologyFromNetFabric after assignLids.
TopologyPtr topologyWithLids(NetFabric fabric);

/// Min-hop LFTs of every switch towards every CA LID (and its own LID via port 0). Among the
/// ports that bring a packet one hop closer, destination LID L takes candidate L mod count.
routing::ForwardingTablesPtr minHopTables(const TopologyPtr& topology);

}  // namespace ibfabric::testing
