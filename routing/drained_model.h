// The drained model: the fabric as the placement engine would see it once a drain (a set of
// switches and cables taken out of service, drain_impact.h) is done, so that a job's predicted
// bottleneck after a maintenance is the same figure as now — PlacementEngine::score()
// (placement_engine.h, docs/placement.md "Predicted bottleneck") — only on other inputs:
//   - topology: the same snapshot (node, link and directed link ids unchanged);
//   - forwarding tables: the SM's tables as read, except for the destinations whose routes cross
//     the drained parts (DrainImpact::reroute): every switch's entry for those is replaced by a
//     shortest path over the cables that stay (routing/synthetic_tables.h rerouteShortestPaths),
//     as an SM's min-hop (or ftree's fallback to it) would route them; destinations lost with
//     the drain keep their entries (their routes end on a drained cable);
//   - link load: the current model (utilization, congestion, health per directed link) with every
//     cable out of service down, so its residual capacity is 0. Load measured on the drained
//     parts is not moved onto the new routes (what others send there after the drain is not
//     known); the job's own flows are counted by the score, on their new routes.
// So a flow that still needs a drained cable (to or from an HCA lost with the drain) makes the
// job's bottleneck 0, and a host with such an HCA is not eligible for placement on the model.
//
// Pure function of its inputs; the result is immutable and thread-safe to use.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "routing/drain_impact.h"
#include "routing/placement_engine.h"

namespace ibfabric::routing {

struct DrainedModel {
  /// The engine on the drained tables and load (its index is of the same topology as now's).
  std::shared_ptr<const PlacementEngine> engine;
  /// Per Topology::links() index: out of service with the drain.
  std::vector<char> linkOut;
  /// Destinations given new routes (DrainImpact::reroute).
  std::size_t destinationsRerouted = 0;
};

/// `impact` must be drainImpact() of `now`'s topology and tables with `drain` (same indices).
/// Cost: a copy of the tables, one shortest-path search per switch the rerouted destinations hang
/// off, and a PlacementIndex build (tens of ms at 10,240 HCAs). Throws PlacementError(kNotReady)
/// as PlacementIndex does.
DrainedModel drainedModel(const PlacementEngine& now, const DrainSet& drain,
                          const DrainImpact& impact, PlacementLimits limits = {});

}  // namespace ibfabric::routing
