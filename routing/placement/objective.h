// The placement objective (placement_engine.h) and the evaluation it is computed from.
//
// objectiveOf() turns a host set's predicted bottleneck, leaf sets spanned and longest route into
// the number the search maximizes; Eval is one host set's exact evaluation. The comparisons the
// search makes between objectives and upper bounds (the improvement margin, the bound slack, the
// near tie of PlacementLimits::nearTie) live here too, so that every step compares alike. Pure
// functions and plain values: usable from any thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "routing/placement_engine.h"

namespace ibfabric::routing::placement {

// The bandwidth term scaled down by at most ~5% for leaves and hops, so they only decide between
// near-equal bandwidths, at every bandwidth scale (a 512-host alltoall's per-flow share is ~1e-4
// of a link).
constexpr double kLeafWeight = 0.02;  ///< all hosts on separate leaf sets
constexpr double kHopWeight = 0.001;  ///< per switch hop of the longest route

/// `fraction` = bottleneck / reference rate, in [0, 1]; `leafSets` = leaf switches spanned / HCAs
/// per host.
inline double objectiveOf(double fraction, double leafSets, std::size_t hosts, int maxHops) {
  const double spread =
      std::max(0.0, leafSets - 1.0) / static_cast<double>(std::max<std::size_t>(1, hosts - 1));
  return fraction * (1.0 - kLeafWeight * std::min(1.0, spread) - kHopWeight * maxHops);
}

/// One host set's evaluation on the routes.
struct Eval {
  double bottleneck = 0.0;  // bytes/s per flow
  DirectedLinkId bottleneckLink = PlacementIndex::kNoLink;
  int maxHops = 0;
  int leafSwitches = 0;
  int leafGroups = 0;
  int rails = 1;
  std::uint64_t unroutedFlows = 0;
  double objective = -1e9;
  std::uint32_t bottleneckFlows = 0;
  /// The hottest links (PlacementLimits::hottestLinks) with the job's flows on them, when
  /// hasHottest.
  std::vector<std::pair<DirectedLinkId, std::uint32_t>> hottest;
  bool hasHottest = false;
};

/// Margin for comparing an upper bound with exact objectives (rounding of two different sums).
constexpr double kBoundSlack = 1e-9;
/// An objective counts as better than another only when it exceeds it by more than this.
constexpr double kImprovement = 1e-12;

/// True when `objective` is better than `than` (by more than kImprovement).
inline bool improves(double objective, double than) { return objective > than + kImprovement; }

/// True when a candidate whose objective is at most `bound` cannot beat the exact objective
/// `bestExact` it must beat by more than the near tie `tie` (a fraction of it; 0 = exact).
inline bool ruledOutByBound(double bound, double bestExact, double tie) {
  return bound + kBoundSlack < bestExact * (1.0 + tie);
}

/// True when a move whose objective is at most `bound` cannot improve on `current`.
inline bool cannotImprove(double bound, double current) {
  return bound + kBoundSlack <= current + kImprovement;
}

}  // namespace ibfabric::routing::placement
