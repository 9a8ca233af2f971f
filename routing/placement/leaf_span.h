// LeafSpan: the leaf switches, rails and leaf groups a host set spans (the objective's leaf term).
//
// Owned by the scorer that uses it (marks over the fabric's nodes, reused between host sets); not
// thread-safe.
#pragma once

#include <algorithm>

#include "routing/placement/epoch_marks.h"
#include "routing/placement/host_order.h"
#include "routing/placement_engine.h"

namespace ibfabric::routing::placement {

class LeafSpan {
 public:
  struct Span {
    int leafSwitches = 0;  ///< distinct leaves of the hosts' cabled HCAs
    int rails = 1;         ///< HCAs per host (the most of any host, at least 1)
    int leafGroups = 0;    ///< distinct leaf groups of those leaves (when asked for)
    /// Leaf switches spanned / HCAs per host.
    double leafSets() const { return static_cast<double>(leafSwitches) / std::max(1, rails); }
  };

  explicit LeafSpan(const PlacementIndex& ix) : ix_(ix) {}
  /// The span of `order`; leafGroups only `withGroups`.
  Span of(const Order& order, bool withGroups);

 private:
  const PlacementIndex& ix_;
  EpochMarks leafSeen_;  // per node
};

}  // namespace ibfabric::routing::placement
