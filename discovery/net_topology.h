// Conversions between the net-file model (NetFabric: ibnetdiscover / ibsim text) and Topology
// snapshots.
//
// topologyFromNetFabric() is the fake discovery source of unit tests and the "expected" side of
// comparisons: a generated or hand-written fabric seen as if it had been crawled (every cabled
// port Active/LinkUp at the file's rate). netFabricFromTopology() turns a crawl into the text
// `ibnetdiscover` prints, which ibsim loads back. Pure functions; thread-safe.
#pragma once

#include "discovery/netfile.h"
#include "discovery/topology.h"

namespace ibfabric {

/// GUIDs the file does not give are synthesised the way ibsim assigns them (switches from
/// 0x200000, CAs from 0x100000; a CA's port GUID is its node GUID + port). Throws
/// std::invalid_argument on inconsistent cabling.
TopologyPtr topologyFromNetFabric(const NetFabric& fabric, std::string source = "netfile");

/// Node ids as ibnetdiscover writes them ("S-<16 hex>", "H-<16 hex>", "R-<16 hex>").
std::string netNodeId(const Node& node);

/// Every node with its cabled ports, rates on port lines; reindexed, ready for formatNetFile().
NetFabric netFabricFromTopology(const Topology& topology);

}  // namespace ibfabric
