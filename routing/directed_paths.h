// Directed routes to every switch of a topology snapshot, from our own CA port: the fallback
// path for SMPs to switches LID routing cannot reach (no LID yet, or a LID path through a dead
// cable the SM has not routed around).
//
// A breadth-first walk from our port over cables whose ends are both up (PortState not Down):
// the first hop leaves by our CA port, then by the egress port of each switch; only switches
// forward SMPs, so CAs other than ours are never crossed. Shortest paths in hops; among equal
// ones the lowest port numbers first (deterministic). Paths longer than 63 hops are dropped.
// Pure function of the snapshot; thread-safe.
#pragma once

#include <optional>
#include <vector>

#include "discovery/topology.h"
#include "telemetry/smp_attributes.h"

namespace ibfabric::routing {

/// `paths[i]` is the route to node i (set for every reachable switch; our own node gets an
/// empty path; CAs other than ours and unreachable nodes get none). Empty vector when
/// `localPort` (a port GUID) is not in `topology`.
std::vector<std::optional<mad::DirectedPath>> directedPaths(const Topology& topology,
                                                            Guid localPort);

}  // namespace ibfabric::routing
