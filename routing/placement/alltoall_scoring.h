// Alltoall scoring in full: every rank sends to every other rank of its rail.
//
// Per rail, each HCA's own link carries one flow per other member, and the flows to each
// destination are one merged tree (alltoall_trees.h) from the rail's source leaves. Also kept
// per evaluation: a histogram of the routed flows by hop count, which the incremental scoring
// starts from. AllToAllScorer puts its flows into the request's JobFlows; owned by the request's
// Evaluator; not thread-safe.
#pragma once

#include <array>
#include <cstdint>

#include "routing/placement/alltoall_rails.h"
#include "routing/placement/alltoall_trees.h"
#include "routing/placement/job_flows.h"
#include "routing/placement/objective.h"
#include "routing/placement/scoring_context.h"

namespace ibfabric::routing::placement {

/// Per hop count (switches crossed), a number of flows.
using HopHistogram = std::array<std::uint64_t, PlacementIndex::kMaxSwitchHops + 1>;

class AllToAllScorer {
 public:
  AllToAllScorer(const ScoringContext& ctx, JobFlows& flows, DestinationTrees& trees)
      : ctx_(ctx), flows_(flows), trees_(trees) {}

  /// Adds the alltoall flows of `order` (to clear JobFlows); sets the unrouted flows and the hop
  /// count of `e`.
  void addFull(const Order& order, Eval& e);

  /// The rails of the order last added.
  const RailGroups& rails() const { return rails_; }
  /// The routed flows of the order last added, by hop count.
  const HopHistogram& hopFlows() const { return hopFlows_; }

 private:
  /// Flows from the source leaves (minus the destination itself) to `dst`, merged per switch.
  void routeToDestination(const Hca& dst, Eval& e);

  ScoringContext ctx_;
  JobFlows& flows_;
  DestinationTrees& trees_;
  RailGroups rails_;
  LeafCounter leafCounter_;
  Leaves srcLeaves_;
  HopHistogram hopFlows_{};
};

}  // namespace ibfabric::routing::placement
