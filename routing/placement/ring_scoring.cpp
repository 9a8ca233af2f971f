// Ring allreduce scoring (ring_scoring.h): full and incremental.
#include "routing/placement/ring_scoring.h"

#include <algorithm>

namespace ibfabric::routing::placement {

int RingScorer::edge(HostId from, HostId to, int sign, std::uint32_t& unrouted) {
  auto onLink = [&](DirectedLinkId d) {
    if (sign > 0) {
      flows_.add(d, 1);
    } else {
      flows_.take(d);
    }
  };
  int maxHops = 0;
  forEachRail(ctx_.ix, from, to,
              [&](const PlacementIndex::Hca& src, const PlacementIndex::Hca& dst) {
                if (!src.cabled || !dst.cabled) {
                  ++unrouted;
                  return true;
                }
                onLink(src.tx);
                int hops = ctx_.ix.traceFromSwitch(src.leaf, dst.lid, dst.node, onLink);
                if (hops < 0) {
                  ++unrouted;
                } else {
                  maxHops = std::max(maxHops, hops);
                }
                return true;
              });
  return maxHops;
}

void RingScorer::addFull(const Order& order, Eval& e) {
  const std::size_t n = order.size();
  const std::uint64_t before = flows_.work;
  state_.order = order;
  state_.edgeHops.assign(n, 0);
  state_.edgeUnrouted.assign(n, 0);
  state_.edgesByHops.fill(0);
  state_.unrouted = 0;
  for (std::size_t i = 0; i < n; ++i) {
    state_.edgeHops[i] = edge(order[i], order[(i + 1) % n], 1, state_.edgeUnrouted[i]);
    ++state_.edgesByHops[static_cast<std::size_t>(state_.edgeHops[i])];
    state_.unrouted += state_.edgeUnrouted[i];
  }
  state_.work = flows_.work - before;
  state_.valid = ctx_.limits.incrementalRing;
  read(e);
}

bool RingScorer::fromState(const Order& order, Eval& e) {
  const std::size_t n = order.size();
  if (!state_.valid || n != state_.order.size() || n < 2) return false;
  if (!changedEdges(order)) return false;
  const std::uint64_t before = flows_.work;
  for (std::size_t k : changedEdges_) dropEdge(k);
  for (std::size_t i = 0; i < n; ++i) state_.order[i] = order[i];
  for (std::size_t k : changedEdges_) putEdge(order, k);
  compactTouched();
  // Charged like the full evaluation it stands for: the work budget buys the same moves.
  flows_.work = std::max(flows_.work, before + state_.work);
  read(e);
  return true;
}

bool RingScorer::changedEdges(const Order& order) {
  const std::size_t n = order.size();
  changedEdges_.clear();
  std::size_t changes = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (order[i] == state_.order[i]) continue;
    if (++changes > kMaxChanges) return false;
    changedEdges_.push_back((i + n - 1) % n);
    changedEdges_.push_back(i);
  }
  std::sort(changedEdges_.begin(), changedEdges_.end());
  changedEdges_.erase(std::unique(changedEdges_.begin(), changedEdges_.end()), changedEdges_.end());
  return true;
}

void RingScorer::dropEdge(std::size_t k) {
  const std::size_t n = state_.order.size();
  std::uint32_t dropped = 0;
  edge(state_.order[k], state_.order[(k + 1) % n], -1, dropped);
  --state_.edgesByHops[static_cast<std::size_t>(state_.edgeHops[k])];
  state_.unrouted -= state_.edgeUnrouted[k];
}

void RingScorer::putEdge(const Order& order, std::size_t k) {
  const std::size_t n = order.size();
  state_.edgeUnrouted[k] = 0;
  state_.edgeHops[k] = edge(order[k], order[(k + 1) % n], 1, state_.edgeUnrouted[k]);
  ++state_.edgesByHops[static_cast<std::size_t>(state_.edgeHops[k])];
  state_.unrouted += state_.edgeUnrouted[k];
}

void RingScorer::compactTouched() {
  linkSeen_.clear(ctx_.load.size());
  std::size_t kept = 0;
  for (DirectedLinkId d : flows_.touched) {
    if (flows_.count[d] > 0 && linkSeen_.mark(d)) flows_.touched[kept++] = d;
  }
  flows_.touched.resize(kept);
}

void RingScorer::read(Eval& e) const {
  e.unroutedFlows = state_.unrouted;
  e.maxHops = 0;
  for (std::size_t h = state_.edgesByHops.size(); h-- > 0;) {
    if (state_.edgesByHops[h] > 0) {
      e.maxHops = static_cast<int>(h);
      break;
    }
  }
}

}  // namespace ibfabric::routing::placement
