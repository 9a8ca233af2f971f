// Candidate generation: the host sets a request's search starts from (docs/placement.md, Search,
// step 2), in this order:
//   (0) the topology-only best fit, as a scheduler places without the load: the tightest block
//       that holds the job, else the blocks with the most free hosts first; hosts in the block's
//       order. First, so that it is marked as the baseline even when another order finds the same
//       set: it is never skipped on a near tie;
//   (a) one block when one is big enough: the best 4 by quality, then the tightest fit;
//   (b) block fills, in each of the best 3 leaf groups that can hold the job and fabric-wide, in
//       three orders (load-aware, best fit, bucketed quality);
//   (c) for small pools, greedy construction on the exact objective from the best few seeds.
//
// CandidateGenerator borrows the request's pools, Evaluator and CandidateSet; one per request,
// not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "routing/placement/block_pools.h"
#include "routing/placement/candidate_set.h"
#include "routing/placement/eligibility.h"
#include "routing/placement/evaluator.h"

namespace ibfabric::routing::placement {

class CandidateGenerator {
 public:
  /// Candidates of `hosts` hosts among `eligible` (pooled by block in `pools`) into `candidates`.
  CandidateGenerator(Evaluator& evaluator, const BlockPools& pools, const EligibleHosts& eligible,
                     std::size_t hosts, CommPattern pattern, CandidateSet& candidates);

  /// All of them, (0) to (c).
  void generate();

 private:
  void topologyBestFit();
  void singleBlocks();
  void blockFills();
  void greedyConstruction();
  /// The blocks a multi-block fill draws from: each of the best 3 leaf groups (by free-weighted
  /// block quality) that holds the job, then every usable block.
  std::vector<std::vector<int>> fillScopes() const;
  /// Takes whole blocks in `sequence` until n hosts; the last block gives its best hosts.
  void fill(const std::vector<int>& sequence);
  /// The greedy construction from `seed`: the host that scores best added, one at a time, while
  /// the work meter is below `budget`.
  void growFrom(HostId seed, const std::vector<HostId>& pool, std::uint64_t budget);

  Evaluator& ev_;
  const PlacementIndex& ix_;
  const BlockPools& pools_;
  const EligibleHosts& eligible_;
  std::size_t n_;
  CommPattern pattern_;
  CandidateSet& candidates_;
};

}  // namespace ibfabric::routing::placement
