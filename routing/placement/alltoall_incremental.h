// Incremental alltoall scoring: a host set scored from the difference to the last one scored in
// full.
//
// The flows of the last alltoall evaluated in full stay in JobFlows (the base, set S). Another
// host set T = K + U (K = S minus the hosts X it drops, U = the hosts it adds) differs from S by
// the pairs that involve X or U, per rail:
//   flows(T) - flows(S) = [K -> U] + [U -> K] + [U -> U] - [K -> X] - [X -> K] - [X -> X]
// [X -> K] + [X -> X] is, per destination of S, the merged tree from X's source leaves only;
// [K -> X] is, per destination in X, the tree from K's source leaves (the same for U and T).
// These few trees go into a separate delta; the bottleneck, hop count and hottest links are then
// read from base + delta: exactly the numbers of a full evaluation, for a fraction of its walks
// when X and U are small (a local-search swap: one host each). The Evaluator picks whichever is
// cheaper (PlacementLimits::incrementalAllToAll).
//
// IncrementalAllToAll reads the base's flows from the request's JobFlows without changing them.
// Owned by the request's Evaluator; not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "routing/placement/alltoall_rails.h"
#include "routing/placement/alltoall_scoring.h"
#include "routing/placement/alltoall_trees.h"
#include "routing/placement/epoch_marks.h"
#include "routing/placement/job_flows.h"
#include "routing/placement/objective.h"
#include "routing/placement/scoring_context.h"

namespace ibfabric::routing::placement {

class IncrementalAllToAll {
 public:
  IncrementalAllToAll(const ScoringContext& ctx, JobFlows& flows, DestinationTrees& trees)
      : ctx_(ctx), flows_(flows), trees_(trees) {}

  /// Keeps the evaluation now in JobFlows (of `order`, evaluated as `e` by `full` at a cost of
  /// `fullWork`) as the base when it can serve as one.
  void keep(const Order& order, const Eval& e, std::uint64_t fullWork, const AllToAllScorer& full);
  /// True while a base is in place.
  bool valid() const { return base_.valid; }
  /// The flows in JobFlows are no longer the base's.
  void invalidate() { base_.valid = false; }
  /// The work of the base's full evaluation.
  std::uint64_t baseWork() const { return base_.work; }
  /// True when `order` is the host set whose alltoall flows are in place (scored last in full).
  bool isBase(const Order& order) const;
  /// Scores `order` from the base into `e` (hop count, bottleneck, hottest links), or false when
  /// a full evaluation is cheaper or needed (a flow without a route, an HCA without a cable).
  bool score(const Order& order, Eval& e);

 private:
  struct Base {
    bool valid = false;
    std::vector<char> in;  // per host: in S
    Order hosts;           // S
    HopHistogram hopFlows{};
    std::uint64_t work = 0;  // of its full evaluation
  };
  struct RailDelta {
    int id = 0;
    Members kept, dropped, added;
    Leaves keptLeaves, droppedLeaves, addedLeaves;
    // Net change of the source leaves a kept destination sees (signed counts).
    std::vector<std::pair<Column, std::int64_t>> netFrom;
  };
  // The base's links with the smallest shares and the hottest ones, best first (a change rarely
  // touches them all: then the full lists are scanned).
  static constexpr std::size_t kBaseTop = 64;

  /// Rails of S and T, split into kept, dropped and added HCAs (inOrder_ marks T). False when an
  /// added HCA has no cable.
  bool splitRails(const Order& order);
  RailDelta& railOf(int id);
  /// Source leaves of every rail's parts; true when the delta costs at most 0.6 of a full
  /// evaluation, in walked switches.
  bool cheaperThanFull();
  /// The delta's flows; false when one of them has no route.
  bool addDeltas();
  /// Each HCA's own link carries one flow per other member of its rail.
  void addHcaLinkDeltas(const RailDelta& rd);
  /// The tree to `dst` from the source leaves `from`, times `sign`, into the delta.
  template <typename LeafList>
  void deltaTree(const Hca& dst, const LeafList& from, bool dstIsSource, std::int64_t sign);
  void addDelta(DirectedLinkId d, std::int64_t count);
  std::int64_t flowsAfter(DirectedLinkId d) const {
    return static_cast<std::int64_t>(flows_.count[d]) + (deltaSeen_.marked(d) ? delta_[d] : 0);
  }
  void readBottleneck(Eval& e) const;
  void readMaxHops(Eval& e) const;
  void readHottest(Eval& e);
  /// Walks of the merged trees to `destinations`: (switches per walk ~ 2 per source leaf + 3).
  static double treeCost(std::size_t destinations, std::size_t sourceLeaves) {
    return sourceLeaves == 0 ? 0.0
                             : static_cast<double>(destinations) *
                                   (2.0 * static_cast<double>(sourceLeaves) + 3.0);
  }

  ScoringContext ctx_;
  JobFlows& flows_;
  DestinationTrees& trees_;
  Base base_;
  std::vector<DirectedLinkId> baseByShare_, baseByHeat_;
  std::vector<char> inOrder_;  // per host: in the order being evaluated
  std::vector<int> railIds_;   // of railDelta_, ascending
  std::vector<RailDelta> railDelta_;
  LeafCounter leafCounter_;
  std::vector<std::int64_t> netLeaf_;  // per switch column, scratch
  std::vector<std::int64_t> delta_;    // per directed link, valid where deltaSeen_ is marked
  EpochMarks deltaSeen_;
  std::vector<DirectedLinkId> deltaTouched_;
  std::array<std::int64_t, PlacementIndex::kMaxSwitchHops + 1> deltaHops_{};
  bool unrouted_ = false;  // a flow of the delta has no route
  std::vector<DirectedLinkId> hot_;
};

}  // namespace ibfabric::routing::placement
