// BlockPools (block_pools.h): eligible hosts per block, by quality.
#include "routing/placement/block_pools.h"

#include <algorithm>

namespace ibfabric::routing::placement {

namespace {

double hostQuality(const ScoringContext& ctx, HostId h) {
  double q = 1.0;
  for (const auto& hca : ctx.ix.hosts()[h].hcas) {
    if (!hca.cabled) return 0.0;
    q = std::min({q, ctx.residual[hca.tx] / ctx.ix.referenceBytesPerSecond(),
                  ctx.residual[hca.rx] / ctx.ix.referenceBytesPerSecond()});
  }
  return q;
}

/// Fraction of the leaves' up-link capacity still free, worst leaf and worst direction.
double blockQuality(const ScoringContext& ctx, int block) {
  double q = 1.0;
  for (NodeIndex leaf : ctx.ix.blocks()[block].leaves) {
    double capUp = 0, freeUp = 0, capDown = 0, freeDown = 0;
    for (int p : ctx.ix.upPorts(leaf)) {
      DirectedLinkId tx = ctx.ix.slot(leaf, p).tx;
      capUp += ctx.load.at(tx).capacityBytesPerSecond;
      freeUp += ctx.residual[tx];
      capDown += ctx.load.at(tx ^ 1u).capacityBytesPerSecond;
      freeDown += ctx.residual[tx ^ 1u];
    }
    if (capUp > 0) q = std::min(q, freeUp / capUp);
    if (capDown > 0) q = std::min(q, freeDown / capDown);
  }
  return q;
}

}  // namespace

BlockPools blockPools(const ScoringContext& ctx, const std::vector<char>& eligible) {
  const PlacementIndex& ix = ctx.ix;
  const auto& blocks = ix.blocks();
  BlockPools pools;
  pools.hostQ.assign(ix.hosts().size(), 0.0);
  pools.free.resize(blocks.size());
  pools.blockQ.assign(blocks.size(), 0.0);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    auto& free = pools.free[b];
    for (HostId h : blocks[b].hosts) {
      if (!eligible[h]) continue;
      pools.hostQ[h] = hostQuality(ctx, h);
      free.push_back(h);
    }
    std::stable_sort(free.begin(), free.end(), [&](HostId x, HostId y) {
      if (pools.hostQ[x] != pools.hostQ[y]) return pools.hostQ[x] > pools.hostQ[y];
      return ix.hosts()[x].name < ix.hosts()[y].name;
    });
    if (!free.empty()) pools.blockQ[b] = blockQuality(ctx, static_cast<int>(b));
  }
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (!pools.free[b].empty()) pools.usable.push_back(static_cast<int>(b));
  }
  return pools;
}

}  // namespace ibfabric::routing::placement
