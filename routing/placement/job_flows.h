// JobFlows: the job's flows per directed link for the host set being scored, and the work meter.
//
// Every scorer of a request (ring, alltoall, the host links of `none`) adds its flows here, and
// the bottleneck and hottest links are read from here. `work` counts link and switch visits (and
// what the bounds charge in their stead): the deterministic cost that
// PlacementLimits::improvementWork budgets. Owned by the request's Evaluator, lent to its
// scorers; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "routing/link_load.h"

namespace ibfabric::routing::placement {

struct JobFlows {
  explicit JobFlows(std::size_t links) : count(links, 0) {}

  std::vector<std::uint32_t> count;     ///< per directed link
  std::vector<DirectedLinkId> touched;  ///< the links given flows since the last clear()
  std::uint64_t work = 0;               ///< link visits so far in this request

  /// Puts `flows` more flows on `d`.
  void add(DirectedLinkId d, std::uint32_t flows) {
    if (count[d] == 0) touched.push_back(d);
    count[d] += flows;
    ++work;
  }
  /// Takes one flow off `d` (it stays in `touched`).
  void take(DirectedLinkId d) {
    --count[d];
    ++work;
  }
  /// No flows on any link (the work meter goes on).
  void clear() {
    for (DirectedLinkId d : touched) count[d] = 0;
    touched.clear();
  }
};

}  // namespace ibfabric::routing::placement
