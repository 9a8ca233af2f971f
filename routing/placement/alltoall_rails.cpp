// The rails of an alltoall host set and the source leaves of a rail (alltoall_rails.h).
#include "routing/placement/alltoall_rails.h"

#include <algorithm>

namespace ibfabric::routing::placement {

void RailGroups::group(const PlacementIndex& ix, const Order& order) {
  ids.clear();
  for (HostId h : order) {
    for (const auto& hca : ix.hosts()[h].hcas) {
      if (std::find(ids.begin(), ids.end(), hca.hcaIndex) == ids.end()) ids.push_back(hca.hcaIndex);
    }
  }
  std::sort(ids.begin(), ids.end());
  if (members.size() < ids.size()) members.resize(ids.size());
  for (auto& m : members) m.clear();
  uncabled.assign(ids.size(), 0);
  for (HostId h : order) {
    for (const auto& hca : ix.hosts()[h].hcas) {
      auto r = static_cast<std::size_t>(std::lower_bound(ids.begin(), ids.end(), hca.hcaIndex) -
                                        ids.begin());
      if (hca.cabled && hca.leafColumn != PlacementIndex::kNoColumn) {
        members[r].push_back(&hca);
      } else {
        ++uncabled[r];
      }
    }
  }
}

void LeafCounter::count(const PlacementIndex& ix, const Members& members, Leaves& out) {
  if (perLeaf_.empty()) perLeaf_.assign(ix.switchCount(), 0);
  seen_.clear(ix.switchCount());
  out.clear();
  for (const auto* hca : members) {
    Column c = hca->leafColumn;
    if (seen_.mark(c)) {
      perLeaf_[c] = 0;
      out.emplace_back(c, 0);
    }
    ++perLeaf_[c];
  }
  for (auto& [c, n] : out) n = perLeaf_[c];
}

}  // namespace ibfabric::routing::placement
