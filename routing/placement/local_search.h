// Local search: bounded improvement of the best candidates, moving the hosts behind the
// bottleneck link.
//
// From each of the best 4 candidates (one work budget for all, best first): the hosts whose flows
// or HCA links meet the bottleneck link are swapped with another host of the same block (a ring:
// another destination LID takes another up-port of the leaf) or replaced by the best unused hosts
// of the blocks in use and of the best unused blocks; the first improvement is kept, until none
// helps or the budget is spent. Small pools also try two replacements at once. A ring then gets
// its entry hosts chosen (ring_entries.h). The improved sets go back into the CandidateSet.
//
// LocalSearch borrows the request's Evaluator, CandidateSet and BlockPools; one per request, not
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "routing/placement/block_pools.h"
#include "routing/placement/candidate_set.h"
#include "routing/placement/evaluator.h"
#include "routing/placement/host_order.h"

namespace ibfabric::routing::placement {

class LocalSearch {
 public:
  /// `eligibleCount`: the request's eligible hosts (at most kSmallPool: a small pool).
  LocalSearch(Evaluator& evaluator, CandidateSet& candidates, const BlockPools& pools,
              CommPattern pattern, std::size_t eligibleCount);

  /// Improves the best candidates and merges the results into the CandidateSet.
  void run();

 private:
  /// True when the start at `start` is not worth improving (see run()).
  bool skipStart(std::size_t start) const;
  /// Improves `best` until no move helps, the budget runs out or no link is the bottleneck.
  void improve(Candidate& best, std::uint64_t budget);
  /// One round of moves on `best`: true when one improved it.
  bool improveOnce(Candidate& best, std::uint64_t budget);
  /// Rank positions of the hosts whose flows or HCA links meet the bottleneck link: its two ends'
  /// hosts, and for a ring the two hosts of every edge that crosses it.
  std::vector<std::size_t> criticalPositions(const Candidate& best) const;
  void addRingCrossings(const Candidate& best, DirectedLinkId hot,
                        std::vector<std::size_t>& critical) const;
  /// The best unchosen hosts of the blocks in use and of the best unused blocks.
  std::vector<HostId> replacementPool(const Candidate& best);
  /// Swaps rank `i` with another host of its block in `best` (ring only).
  bool trySameBlockSwaps(Candidate& best, std::size_t i, std::uint64_t budget);
  /// Replaces rank `i` of `best` by a host of `pool`.
  bool tryReplacements(Candidate& best, std::size_t i, const std::vector<HostId>& pool,
                       std::uint64_t budget);
  /// Replaces two ranks at once (an alltoall's bottleneck often sits on a plateau of links whose
  /// flows change only when two hosts move).
  bool tryPairReplacements(Candidate& best, const std::vector<HostId>& pool, std::uint64_t budget);
  /// Takes `order` as `best` when it scores better; `reorder` puts it in rank order first.
  bool tryOrder(Candidate& best, Order order, bool reorder);

  Evaluator& ev_;
  CandidateSet& candidates_;
  const BlockPools& pools_;
  const PlacementIndex& ix_;
  const PlacementLimits& limits_;
  CommPattern pattern_;
  bool small_;
  std::vector<char> chosen_;  // per host: in the candidate being improved
};

}  // namespace ibfabric::routing::placement
