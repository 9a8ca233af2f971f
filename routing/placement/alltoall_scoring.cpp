// Alltoall scoring in full (alltoall_scoring.h).
#include "routing/placement/alltoall_scoring.h"

#include <algorithm>

namespace ibfabric::routing::placement {

void AllToAllScorer::addFull(const Order& order, Eval& e) {
  hopFlows_.fill(0);
  rails_.group(ctx_.ix, order);
  for (std::size_t r = 0; r < rails_.ids.size(); ++r) {
    const auto& members = rails_.members[r];
    const auto m = static_cast<std::uint32_t>(members.size());
    const std::uint32_t uncabled = rails_.uncabled[r];
    if (m + uncabled >= 2) e.unroutedFlows += 2ull * uncabled * (m + uncabled - 1);
    if (m < 2) continue;
    for (const auto* hca : members) flows_.add(hca->tx, m - 1);
    leafCounter_.count(ctx_.ix, members, srcLeaves_);
    trees_.forEachInRowOrder(members, [&](const Hca& dst) { routeToDestination(dst, e); });
  }
}

void AllToAllScorer::routeToDestination(const Hca& dst, Eval& e) {
  trees_.route(
      dst, srcLeaves_, true,
      [&](DirectedLinkId d, std::int64_t count) {
        flows_.add(d, static_cast<std::uint32_t>(count));
      },
      [&](std::int64_t count, int height, bool routed) {
        if (routed) {
          e.maxHops = std::max(e.maxHops, height);
          hopFlows_[static_cast<std::size_t>(height)] += static_cast<std::uint64_t>(count);
        } else {
          e.unroutedFlows += static_cast<std::uint64_t>(count);
        }
      });
}

}  // namespace ibfabric::routing::placement
