// Evaluator: scores host sets of one placement request on the routes.
//
// The exact evaluation of a host set under a pattern (ring allreduce, alltoall, or only the
// hosts' own HCA links for `none`): the flows on every link, the bottleneck (smallest share of a
// link's residual capacity among the job's flows on it, ties to the smaller link id), the longest
// route, the leaves spanned, the hottest links and the objective. The flows of the last
// evaluation stay in place, so that the next one can be scored from the difference (incremental
// ring and alltoall); the upper bounds that let the search skip exact evaluations are here too.
// Every evaluation charges its work (link visits) to one meter that budgets the search.
//
// One per request (PlacementEngine::place or score builds it, over the engine's ScoringContext);
// the search steps share it in turn. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "routing/placement.h"
#include "routing/placement/alltoall_bounds.h"
#include "routing/placement/alltoall_incremental.h"
#include "routing/placement/alltoall_scoring.h"
#include "routing/placement/alltoall_trees.h"
#include "routing/placement/host_order.h"
#include "routing/placement/job_flows.h"
#include "routing/placement/leaf_span.h"
#include "routing/placement/objective.h"
#include "routing/placement/ring_scoring.h"
#include "routing/placement/scoring_context.h"

namespace ibfabric::routing::placement {

class Evaluator {
 public:
  explicit Evaluator(const ScoringContext& ctx);
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  /// Scores `order`; leaves the flow counts in place (call reset()). The hottest links are listed
  /// when `withHottest`, and always for alltoall (few, costly evaluations: listing them is cheaper
  /// than evaluating the answer again).
  Eval evaluate(const Order& order, CommPattern pattern, bool withHottest = false);
  /// No flows in place (and so no incremental state).
  void reset();
  /// The full score of `order` (evaluated with its hottest links, then reset()).
  PlacementScore score(const Order& order, CommPattern pattern);

  /// An upper bound of evaluate(order, pattern).objective (+infinity when none is cheap).
  double upperBound(const Order& order, CommPattern pattern);
  /// A tighter, costlier upper bound of an alltoall's objective (+infinity when none).
  double firstHopBound(const Order& order) { return bounds_.firstHop(order); }

  /// The alltoall host set whose flows are in place (the incremental scoring's base).
  const IncrementalAllToAll& allToAllBase() const { return incremental_; }

  /// Link visits so far: the search's work budget is counted in these.
  std::uint64_t work() const { return flows_.work; }
  const ScoringContext& context() const { return ctx_; }
  /// The flows in place, for a step that edits them by hand between two evaluations (it then
  /// invalidates the ring state with ring().invalidate()).
  JobFlows& flows() { return flows_; }
  RingScorer& ring() { return ring_; }

 private:
  /// `order` from the alltoall base when that is possible and cheaper: true when `e` is set.
  bool fromAllToAllBase(const Order& order, Eval& e);
  /// The flows of `order` into JobFlows, from the ring state or in full.
  void addFlows(const Order& order, CommPattern pattern, Eval& e);
  void addHostLinks(const Order& order);
  /// The smallest share over the links in place (ties: the smaller link id).
  void readBottleneck(Eval& e) const;
  /// The hottest links: highest utilization, then smallest share, then id.
  void listHottest(Eval& e);
  /// Leaves and groups spanned, and the objective.
  void finish(const Order& order, Eval& e);

  ScoringContext ctx_;
  JobFlows flows_;
  DestinationTrees trees_;
  RingScorer ring_;
  AllToAllScorer allToAll_;
  IncrementalAllToAll incremental_;
  AllToAllBounds bounds_;
  LeafSpan span_;
  std::vector<DirectedLinkId> hot_;
};

}  // namespace ibfabric::routing::placement
