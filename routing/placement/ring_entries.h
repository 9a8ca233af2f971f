// Ring entry hosts: the host that receives at each block boundary of a ring, chosen on the routes.
//
// In a ring, only the edges between blocks cross the fabric: from the last host of one block's
// run to the first host of the next (within a block every host hangs off the same leaves). The
// sender's leaves are the block's whichever host sends, but LID routing picks the path by
// destination: each host that could receive at a boundary (its "entry") takes other up-links and
// spines. Per boundary, with every other boundary's flows fixed, takes the block's host (one of
// the ring's, or an eligible one not in it) whose routes leave the largest share on their worst
// link; passes until nothing changes. The result is kept only when the exact evaluation says it
// is better.
//
// RingEntries borrows the request's Evaluator, whose flows it edits by hand between two
// evaluations. Owned by the local search of one request; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "routing/placement/epoch_marks.h"
#include "routing/placement/evaluator.h"
#include "routing/placement/host_order.h"
#include "routing/placement/objective.h"

namespace ibfabric::routing::placement {

class RingEntries {
 public:
  explicit RingEntries(Evaluator& evaluator) : ev_(evaluator) {}

  /// Improves the entry host of each block boundary of the ring `order` (evaluated as `e`);
  /// `eligibleByBlock` are the hosts that may join. Stops passing once the work meter reaches
  /// `workLimit`. True when `order` and `e` changed.
  bool refine(Order& order, Eval& e, const std::vector<std::vector<HostId>>& eligibleByBlock,
              std::uint64_t workLimit);

 private:
  /// The best entry found so far for one boundary.
  struct Best {
    double share = 0.0;
    HostId host = 0;
  };

  /// Starts of the ring's block runs (positions where the block changes, and 0).
  std::vector<std::size_t> blockRuns(const Order& order) const;
  /// The boundary into the run trial[s, end): its best entry put in place. True when it changed.
  bool refineBoundary(Order& trial, std::size_t s, std::size_t end,
                      const std::vector<std::vector<HostId>>& eligibleByBlock);
  /// Takes `candidate` as the entry after `from` when its routes leave a larger share.
  void considerEntry(HostId from, HostId candidate, Best& best);
  /// Links of the flows from host `from` to host `to`, rail by rail (without `from`'s own HCA
  /// links: they are the same for every candidate `to`). False when a flow has no route.
  bool boundaryLinks(HostId from, HostId to, std::vector<DirectedLinkId>& out);
  /// The smallest share of the links in `links` (sorted in place) if their flows were added to
  /// the flows in place.
  double shareWith(std::vector<DirectedLinkId>& links) const;

  Evaluator& ev_;
  EpochMarks inRing_;
  std::vector<DirectedLinkId> path_, candidatePath_, bestPath_;
};

}  // namespace ibfabric::routing::placement
