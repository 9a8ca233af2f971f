// LeafSpan (leaf_span.h): leaves, rails and leaf groups of a host set.
#include "routing/placement/leaf_span.h"

#include <set>

namespace ibfabric::routing::placement {

LeafSpan::Span LeafSpan::of(const Order& order, bool withGroups) {
  leafSeen_.clear(ix_.topology().nodes().size());
  Span span;
  std::set<int> groups;
  for (HostId h : order) {
    const auto& info = ix_.hosts()[h];
    span.rails = std::max(span.rails, static_cast<int>(info.hcas.size()));
    for (const auto& hca : info.hcas) {
      if (!hca.cabled || !leafSeen_.mark(hca.leaf)) continue;
      ++span.leafSwitches;
      if (withGroups) groups.insert(ix_.topology().node(hca.leaf).group);
    }
  }
  span.leafGroups = static_cast<int>(groups.size());
  return span;
}

}  // namespace ibfabric::routing::placement
