// Upper bounds of an alltoall host set's objective (alltoall_bounds.h).
#include "routing/placement/alltoall_bounds.h"

#include <algorithm>
#include <limits>

#include "routing/placement/objective.h"

namespace ibfabric::routing::placement {

double AllToAllBounds::cheap(const Order& order) {
  rails_.group(ctx_.ix, order);
  if (leafResidual_.empty()) {
    leafResidual_.resize(ctx_.ix.switchCount());
    leafFlows_.assign(ctx_.ix.switchCount(), 0.0);
  }
  bool anyFlow = false;
  double b = shareBound(anyFlow);
  // Charged like the link visits of an evaluation: one per HCA, comparable time.
  for (std::size_t r = 0; r < rails_.ids.size(); ++r) flows_.work += rails_.members[r].size();
  if (!anyFlow || b == std::numeric_limits<double>::infinity()) {
    b = ctx_.ix.referenceBytesPerSecond();
  }
  // The hop term: maxHops is at least the length of any one flow's route. A flow without a route
  // makes the bottleneck 0.
  const int hops = sampledHops();
  if (hops < 0) return 0.0;
  return objectiveOf(b / ctx_.ix.referenceBytesPerSecond(), span_.of(order, false).leafSets(),
                     order.size(), hops);
}

double AllToAllBounds::shareBound(bool& anyFlow) {
  double b = std::numeric_limits<double>::infinity();
  leaves_.clear();
  for (std::size_t r = 0; r < rails_.ids.size(); ++r) {
    const auto& members = rails_.members[r];
    const auto m = static_cast<std::uint32_t>(members.size());
    if (m < 2) continue;
    anyFlow = true;
    const double flowsPerHca = m - 1;
    for (const auto* hca : members) {
      b = std::min({b, ctx_.residual[hca->tx] / flowsPerHca, ctx_.residual[hca->rx] / flowsPerHca});
    }
    leafCounter_.count(ctx_.ix, members, srcLeaves_);
    for (const auto& [leaf, count] : srcLeaves_) {
      if (leafFlows_[leaf] == 0.0) leaves_.push_back(leaf);
      leafFlows_[leaf] += static_cast<double>(count) * static_cast<double>(m - count);
    }
  }
  for (Column leaf : leaves_) {
    const LeafResidual& lr = residualOf(leaf);
    const double f = leafFlows_[leaf];
    leafFlows_[leaf] = 0.0;
    if (f > 0) b = std::min({b, lr.out / f, lr.in / f});
  }
  return b;
}

const AllToAllBounds::LeafResidual& AllToAllBounds::residualOf(Column leaf) {
  LeafResidual& lr = leafResidual_[leaf];
  if (lr.known) return lr;
  lr.known = true;
  for (int p = 0;; ++p) {
    const PlacementIndex::Hop* h = ctx_.ix.hop(leaf, p);
    if (!h) break;
    if (h->tx == PlacementIndex::kNoLink || !h->toSwitch()) continue;
    lr.out += ctx_.residual[h->tx];
    lr.in += ctx_.residual[h->tx ^ 1u];
  }
  return lr;
}

int AllToAllBounds::sampledHops() const {
  int hops = 0;
  for (std::size_t r = 0; r < rails_.ids.size(); ++r) {
    const auto& members = rails_.members[r];
    if (members.size() < 2) continue;
    for (int k = 0; k < 2; ++k) {
      const auto* src = k == 0 ? members.front() : members.back();
      const auto* dst = k == 0 ? members.back() : members.front();
      int h = ctx_.ix.traceFromSwitch(src->leaf, dst->lid, dst->node, [](DirectedLinkId) {});
      if (h < 0) return -1;
      hops = std::max(hops, h);
    }
  }
  return hops;
}

double AllToAllBounds::firstHop(const Order& order) {
  rails_.group(ctx_.ix, order);
  if (firstHopFlows_.empty()) firstHopFlows_.assign(ctx_.load.size(), 0);
  for (std::size_t r = 0; r < rails_.ids.size(); ++r) {
    for (const auto* dst : rails_.members[r]) {
      if (!ctx_.ix.destinationRow(dst->lid)) return std::numeric_limits<double>::infinity();
    }
  }
  for (std::size_t r = 0; r < rails_.ids.size(); ++r) {
    const auto& members = rails_.members[r];
    if (members.size() < 2) continue;
    leafCounter_.count(ctx_.ix, members, srcLeaves_);
    for (const auto* dst : members) {
      const std::uint8_t* row = ctx_.ix.destinationRow(dst->lid);
      for (const auto& [leaf, count] : srcLeaves_) {
        if (leaf == dst->leafColumn || row[leaf] == SwitchTable::kNoPort) continue;
        const PlacementIndex::Hop* hop = ctx_.ix.hop(leaf, row[leaf]);
        if (!hop || hop->tx == PlacementIndex::kNoLink) continue;
        if (firstHopFlows_[hop->tx] == 0) firstHopTouched_.push_back(hop->tx);
        firstHopFlows_[hop->tx] += count;
      }
    }
    flows_.work += srcLeaves_.size() * members.size() / 8;  // table bytes, not walks
  }
  double b = std::numeric_limits<double>::infinity();
  for (DirectedLinkId d : firstHopTouched_) {
    b = std::min(b, ctx_.residual[d] / firstHopFlows_[d]);
    firstHopFlows_[d] = 0;
  }
  firstHopTouched_.clear();
  if (b == std::numeric_limits<double>::infinity()) return b;
  return objectiveOf(b / ctx_.ix.referenceBytesPerSecond(), span_.of(order, false).leafSets(),
                     order.size(), 0);
}

}  // namespace ibfabric::routing::placement
