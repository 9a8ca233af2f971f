// Upper bounds of an alltoall host set's objective, far cheaper than its exact evaluation.
//
// cheap(): O(HCAs). Every flow between two leaves leaves its source leaf and enters its
// destination leaf through switch-facing ports, so some such port of leaf L carries a share of at
// most (their residual) / (flows crossing them); each HCA link carries m - 1 flows of its rail.
// firstHop(): a flow leaves its source leaf on the port the leaf's table gives for its
// destination, so the job's flows on every leaf's switch-facing links are known exactly from one
// table byte per (source leaf, destination), without walking the routes; the bottleneck is at
// most their smallest share. Sharper than cheap() when routes load a leaf's up-links unevenly
// against their residuals (a hot up-link carries its share of the destinations whatever its
// load). Both charge their cost to JobFlows::work like the link visits of an evaluation.
//
// AllToAllBounds keeps scratch and a per-leaf residual cache between calls. Owned by the
// request's Evaluator; not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "routing/placement/alltoall_rails.h"
#include "routing/placement/job_flows.h"
#include "routing/placement/leaf_span.h"
#include "routing/placement/scoring_context.h"

namespace ibfabric::routing::placement {

class AllToAllBounds {
 public:
  AllToAllBounds(const ScoringContext& ctx, JobFlows& flows)
      : ctx_(ctx), flows_(flows), span_(ctx.ix) {}

  /// An upper bound of the alltoall objective of `order` (at least 2 hosts), in O(HCAs).
  double cheap(const Order& order);
  /// A tighter upper bound, for the candidates cheap() cannot rule out (+infinity without the LFT
  /// copy's rows).
  double firstHop(const Order& order);

 private:
  /// Residual capacity of a leaf's switch-facing ports, out of the leaf and into it.
  struct LeafResidual {
    bool known = false;
    double out = 0.0;
    double in = 0.0;
  };
  /// The smallest share bound over the HCA links and the leaves' switch-facing ports (+infinity
  /// when nothing bounds it); `anyFlow` set when some rail has two members.
  double shareBound(bool& anyFlow);
  const LeafResidual& residualOf(Column leaf);
  /// The most switches of two traced flows per rail (first rank's leaf to the last rank and
  /// back: they usually cross the most), or -1 when one has no route.
  int sampledHops() const;

  ScoringContext ctx_;
  JobFlows& flows_;
  LeafSpan span_;
  RailGroups rails_;
  LeafCounter leafCounter_;
  Leaves srcLeaves_;
  std::vector<Column> leaves_;  // scratch: leaves with flows
  std::vector<LeafResidual> leafResidual_;
  std::vector<double> leafFlows_;
  std::vector<std::uint32_t> firstHopFlows_;  // per directed link
  std::vector<DirectedLinkId> firstHopTouched_;
};

}  // namespace ibfabric::routing::placement
