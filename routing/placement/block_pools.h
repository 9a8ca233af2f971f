// BlockPools: each block's eligible hosts, best first, with the qualities the search orders by.
//
// A host's quality is the free fraction of its HCA links (worst HCA, worst direction; 0 for an
// uncabled one); a block's is the free fraction of its leaves' up-link capacity (worst leaf,
// worst direction). Built once per request and read by the candidate generation and the local
// search; immutable once built, so shareable.
#pragma once

#include <cstddef>
#include <vector>

#include "routing/placement/host_order.h"
#include "routing/placement/scoring_context.h"

namespace ibfabric::routing::placement {

/// A pool of at most this many eligible hosts is small: the search tries more moves on it.
constexpr std::size_t kSmallPool = 64;

struct BlockPools {
  std::vector<double> hostQ;              ///< per host (0 for hosts not eligible)
  std::vector<std::vector<HostId>> free;  ///< per block: its eligible hosts, best quality first
  std::vector<double> blockQ;             ///< per block (0 without eligible hosts)
  std::vector<int> usable;                ///< the blocks with an eligible host, ascending
};

/// The pools of the hosts marked in `eligible` (per host of ctx.ix).
BlockPools blockPools(const ScoringContext& ctx, const std::vector<char>& eligible);

}  // namespace ibfabric::routing::placement
