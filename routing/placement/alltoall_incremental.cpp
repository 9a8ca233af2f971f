// Incremental alltoall scoring (alltoall_incremental.h).
#include "routing/placement/alltoall_incremental.h"

#include <algorithm>
#include <limits>

namespace ibfabric::routing::placement {

namespace {

/// `list` = the `k` first links of `from` by `less` (partially sorted).
template <typename Less>
void keepFirst(std::vector<DirectedLinkId>& list, const std::vector<DirectedLinkId>& from,
               std::size_t k, Less&& less) {
  list.assign(from.begin(), from.end());
  k = std::min(list.size(), k);
  auto mid = list.begin() + static_cast<std::ptrdiff_t>(k);
  std::partial_sort(list.begin(), mid, list.end(), less);
  list.resize(k);
}

}  // namespace

void IncrementalAllToAll::keep(const Order& order, const Eval& e, std::uint64_t fullWork,
                               const AllToAllScorer& full) {
  if (!ctx_.limits.incrementalAllToAll || e.unroutedFlows > 0) return;
  for (std::size_t r = 0; r < full.rails().ids.size(); ++r) {
    if (full.rails().uncabled[r] > 0) return;
  }
  base_.in.assign(ctx_.ix.hosts().size(), 0);
  for (HostId h : order) base_.in[h] = 1;
  base_.hosts = order;
  base_.hopFlows = full.hopFlows();
  base_.work = fullWork;
  base_.valid = true;
  const auto& residual = ctx_.residual;
  const auto& utilization = ctx_.utilization;
  const auto& flows = flows_.count;
  auto byShare = [&](DirectedLinkId a, DirectedLinkId b) {
    double sa = residual[a] / flows[a], sb = residual[b] / flows[b];
    if (sa != sb) return sa < sb;
    return a < b;
  };
  auto byHeat = [&](DirectedLinkId a, DirectedLinkId b) {
    double ua = utilization[a], ub = utilization[b];
    if (ua != ub) return ua > ub;
    return byShare(a, b);
  };
  keepFirst(baseByShare_, flows_.touched, kBaseTop, byShare);
  keepFirst(baseByHeat_, flows_.touched, kBaseTop, byHeat);
}

bool IncrementalAllToAll::isBase(const Order& order) const {
  if (!base_.valid || order.size() != base_.hosts.size()) return false;
  for (HostId h : order) {
    if (!base_.in[h]) return false;
  }
  return true;
}

bool IncrementalAllToAll::score(const Order& order, Eval& e) {
  if (inOrder_.size() != ctx_.ix.hosts().size()) inOrder_.assign(ctx_.ix.hosts().size(), 0);
  for (HostId h : order) inOrder_[h] = 1;
  const bool split = splitRails(order);
  for (HostId h : order) inOrder_[h] = 0;
  if (!split || !cheaperThanFull() || !addDeltas()) return false;
  readBottleneck(e);
  readMaxHops(e);
  readHottest(e);
  return true;
}

IncrementalAllToAll::RailDelta& IncrementalAllToAll::railOf(int id) {
  auto it = std::lower_bound(railIds_.begin(), railIds_.end(), id);
  auto r = static_cast<std::size_t>(it - railIds_.begin());
  if (it == railIds_.end() || *it != id) {
    railIds_.insert(it, id);
    railDelta_.insert(railDelta_.begin() + static_cast<std::ptrdiff_t>(r), RailDelta{});
    railDelta_[r].id = id;
  }
  return railDelta_[r];
}

bool IncrementalAllToAll::splitRails(const Order& order) {
  railIds_.clear();
  railDelta_.clear();
  for (HostId h : base_.hosts) {
    const bool kept = inOrder_[h] != 0;
    for (const auto& hca : ctx_.ix.hosts()[h].hcas) {
      RailDelta& rd = railOf(hca.hcaIndex);
      (kept ? rd.kept : rd.dropped).push_back(&hca);
    }
  }
  for (HostId h : order) {
    if (base_.in[h]) continue;
    for (const auto& hca : ctx_.ix.hosts()[h].hcas) {
      if (!hca.cabled || hca.leafColumn == PlacementIndex::kNoColumn) return false;
      railOf(hca.hcaIndex).added.push_back(&hca);
    }
  }
  return true;
}

bool IncrementalAllToAll::cheaperThanFull() {
  double deltaCost = 0, fullCost = 0;
  if (netLeaf_.empty()) netLeaf_.assign(ctx_.ix.switchCount(), 0);
  for (RailDelta& rd : railDelta_) {
    leafCounter_.count(ctx_.ix, rd.kept, rd.keptLeaves);
    leafCounter_.count(ctx_.ix, rd.dropped, rd.droppedLeaves);
    leafCounter_.count(ctx_.ix, rd.added, rd.addedLeaves);
    // A kept destination sees the added sources minus the dropped ones: only the leaves whose
    // count changes matter (none for a swap within one leaf).
    for (const auto& [c, n] : rd.addedLeaves) netLeaf_[c] += n;
    for (const auto& [c, n] : rd.droppedLeaves) netLeaf_[c] -= n;
    rd.netFrom.clear();
    for (const Leaves* list : {&rd.droppedLeaves, &rd.addedLeaves}) {
      for (const auto& [c, n] : *list) {
        if (netLeaf_[c] != 0) rd.netFrom.emplace_back(c, netLeaf_[c]);
        netLeaf_[c] = 0;
      }
    }
    const std::size_t t = rd.kept.size() + rd.added.size();
    deltaCost += treeCost(rd.kept.size(), rd.netFrom.size()) +
                 treeCost(rd.dropped.size(), rd.droppedLeaves.size() + rd.keptLeaves.size()) +
                 treeCost(rd.added.size(), rd.addedLeaves.size() + rd.keptLeaves.size());
    // A full evaluation walks T's leaves (at most the kept + added ones) for every destination.
    fullCost += treeCost(t, rd.keptLeaves.size() + rd.addedLeaves.size());
  }
  return !(deltaCost > 0.6 * fullCost);
}

bool IncrementalAllToAll::addDeltas() {
  if (delta_.empty()) delta_.assign(ctx_.load.size(), 0);
  deltaSeen_.clear(ctx_.load.size());
  deltaTouched_.clear();
  deltaHops_.fill(0);
  unrouted_ = false;
  for (const RailDelta& rd : railDelta_) {
    addHcaLinkDeltas(rd);
    for (const auto* d : rd.dropped) {
      deltaTree(*d, rd.droppedLeaves, true, -1);
      deltaTree(*d, rd.keptLeaves, false, -1);
    }
    for (const auto* d : rd.added) {
      deltaTree(*d, rd.addedLeaves, true, +1);
      deltaTree(*d, rd.keptLeaves, false, +1);
    }
    if (!rd.netFrom.empty()) {
      trees_.forEachInRowOrder(rd.kept,
                               [&](const Hca& dst) { deltaTree(dst, rd.netFrom, false, +1); });
    }
    if (unrouted_) break;
  }
  return !unrouted_;
}

void IncrementalAllToAll::addHcaLinkDeltas(const RailDelta& rd) {
  const auto s = static_cast<std::int64_t>(rd.kept.size() + rd.dropped.size());
  const auto t = static_cast<std::int64_t>(rd.kept.size() + rd.added.size());
  const std::int64_t perHcaS = s >= 2 ? s - 1 : 0, perHcaT = t >= 2 ? t - 1 : 0;
  if (perHcaS != perHcaT) {
    for (const auto* hca : rd.kept) addDelta(hca->tx, perHcaT - perHcaS);
  }
  for (const auto* hca : rd.dropped) {
    if (perHcaS) addDelta(hca->tx, -perHcaS);
  }
  for (const auto* hca : rd.added) {
    if (perHcaT) addDelta(hca->tx, perHcaT);
  }
}

template <typename LeafList>
void IncrementalAllToAll::deltaTree(const Hca& dst, const LeafList& from, bool dstIsSource,
                                    std::int64_t sign) {
  trees_.route(
      dst, from, dstIsSource,
      [&](DirectedLinkId d, std::int64_t count) { addDelta(d, sign * count); },
      [&](std::int64_t count, int height, bool routed) {
        if (!routed) {
          unrouted_ = unrouted_ || count != 0;
        } else {
          deltaHops_[static_cast<std::size_t>(height)] += sign * count;
        }
      });
}

void IncrementalAllToAll::addDelta(DirectedLinkId d, std::int64_t count) {
  if (deltaSeen_.mark(d)) {
    delta_[d] = 0;
    deltaTouched_.push_back(d);
  }
  delta_[d] += count;
  ++flows_.work;
}

// The smallest share over the links with flows after the change (ties: the smaller link id), as
// a full evaluation finds it.
void IncrementalAllToAll::readBottleneck(Eval& e) const {
  e.bottleneck = std::numeric_limits<double>::infinity();
  bool any = false;
  auto consider = [&](DirectedLinkId d, std::int64_t f) {
    any = true;
    double share = ctx_.residual[d] / static_cast<double>(f);
    if (share < e.bottleneck ||
        (share == e.bottleneck &&
         (e.bottleneckLink == PlacementIndex::kNoLink || d < e.bottleneckLink))) {
      e.bottleneck = share;
      e.bottleneckLink = d;
    }
  };
  // The base's smallest unchanged share: the first unchanged link of its list (all of them when
  // every listed one changed).
  bool found = false;
  for (DirectedLinkId d : baseByShare_) {
    if (deltaSeen_.marked(d)) continue;
    consider(d, flows_.count[d]);
    found = true;
    break;
  }
  if (!found) {
    for (DirectedLinkId d : flows_.touched) {
      if (!deltaSeen_.marked(d)) consider(d, flows_.count[d]);
    }
  }
  for (DirectedLinkId d : deltaTouched_) {
    std::int64_t f = flows_.count[d] + delta_[d];
    if (f > 0) consider(d, f);
  }
  if (!any) e.bottleneck = ctx_.ix.referenceBytesPerSecond();
  if (e.bottleneckLink != PlacementIndex::kNoLink) {
    e.bottleneckFlows = static_cast<std::uint32_t>(flowsAfter(e.bottleneckLink));
  }
}

void IncrementalAllToAll::readMaxHops(Eval& e) const {
  for (std::size_t h = base_.hopFlows.size(); h-- > 0;) {
    if (static_cast<std::int64_t>(base_.hopFlows[h]) + deltaHops_[h] > 0) {
      e.maxHops = static_cast<int>(h);
      break;
    }
  }
}

// Hottest links, as the Evaluator orders them for a full evaluation.
void IncrementalAllToAll::readHottest(Eval& e) {
  const std::size_t wanted = ctx_.limits.hottestLinks;
  auto hotter = [&](DirectedLinkId a, DirectedLinkId b) {
    double ua = ctx_.utilization[a], ub = ctx_.utilization[b];
    if (ua != ub) return ua > ub;
    double sa = ctx_.residual[a] / static_cast<double>(flowsAfter(a));
    double sb = ctx_.residual[b] / static_cast<double>(flowsAfter(b));
    if (sa != sb) return sa < sb;
    return a < b;
  };
  hot_.clear();
  std::size_t unchanged = 0;
  for (DirectedLinkId d : baseByHeat_) {
    if (unchanged == wanted) break;
    if (deltaSeen_.marked(d)) continue;
    hot_.push_back(d);
    ++unchanged;
  }
  if (unchanged < wanted) {  // the list ran out: every unchanged link
    hot_.clear();
    for (DirectedLinkId d : flows_.touched) {
      if (!deltaSeen_.marked(d)) hot_.push_back(d);
    }
    flows_.work += flows_.touched.size() / 8;  // the scan, charged like link visits
  }
  for (DirectedLinkId d : deltaTouched_) {
    if (flows_.count[d] + delta_[d] > 0) hot_.push_back(d);
  }
  const std::size_t k = std::min(hot_.size(), wanted);
  std::partial_sort(hot_.begin(), hot_.begin() + static_cast<std::ptrdiff_t>(k), hot_.end(),
                    hotter);
  for (std::size_t i = 0; i < k; ++i) {
    e.hottest.emplace_back(hot_[i], static_cast<std::uint32_t>(flowsAfter(hot_[i])));
  }
  e.hasHottest = true;
}

}  // namespace ibfabric::routing::placement
