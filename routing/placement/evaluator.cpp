// Evaluator (evaluator.h): exact evaluation of a host set, from the incremental states when they
// apply.
#include "routing/placement/evaluator.h"

#include <algorithm>
#include <limits>

#include "routing/placement/score_report.h"

namespace ibfabric::routing::placement {

Evaluator::Evaluator(const ScoringContext& ctx)
    : ctx_(ctx),
      flows_(ctx.load.size()),
      trees_(ctx.ix, flows_),
      ring_(ctx_, flows_),
      allToAll_(ctx_, flows_, trees_),
      incremental_(ctx_, flows_, trees_),
      bounds_(ctx_, flows_),
      span_(ctx.ix) {}

Eval Evaluator::evaluate(const Order& order, CommPattern pattern, bool withHottest) {
  const bool allToAll = pattern == CommPattern::kAllToAll && order.size() >= 2;
  if (allToAll && incremental_.valid()) {
    Eval e;
    if (fromAllToAllBase(order, e)) return e;
  }
  Eval e;
  addFlows(order, pattern, e);
  readBottleneck(e);
  if (withHottest || pattern == CommPattern::kAllToAll) listHottest(e);
  finish(order, e);
  return e;
}

bool Evaluator::fromAllToAllBase(const Order& order, Eval& e) {
  const std::uint64_t before = flows_.work;
  if (!incremental_.score(order, e)) return false;
  // Charged like the full evaluation it stands for: the work budget buys the same moves as
  // without the shortcut, in less time.
  flows_.work = std::max(flows_.work, before + incremental_.baseWork());
  finish(order, e);
  return true;
}

void Evaluator::addFlows(const Order& order, CommPattern pattern, Eval& e) {
  const bool ringAllreduce = pattern == CommPattern::kRingAllreduce && order.size() >= 2;
  if (!ringAllreduce || !ring_.fromState(order, e)) reset();
  if (pattern == CommPattern::kNone || order.size() < 2) {
    addHostLinks(order);
  } else if (ringAllreduce) {
    if (!ring_.valid()) ring_.addFull(order, e);
  } else {
    const std::uint64_t before = flows_.work;
    allToAll_.addFull(order, e);
    incremental_.keep(order, e, flows_.work - before, allToAll_);
  }
}

void Evaluator::reset() {
  flows_.clear();
  incremental_.invalidate();
  ring_.invalidate();
}

PlacementScore Evaluator::score(const Order& order, CommPattern pattern) {
  Eval e = evaluate(order, pattern, true);
  reset();
  return scoreReport(ctx_, order, pattern, e);
}

double Evaluator::upperBound(const Order& order, CommPattern pattern) {
  if (pattern != CommPattern::kAllToAll || order.size() < 2) {
    return std::numeric_limits<double>::infinity();
  }
  return bounds_.cheap(order);
}

void Evaluator::addHostLinks(const Order& order) {
  for (HostId h : order) {
    for (const auto& hca : ctx_.ix.hosts()[h].hcas) {
      flows_.add(hca.tx, 1);
      flows_.add(hca.rx, 1);
    }
  }
}

void Evaluator::readBottleneck(Eval& e) const {
  e.bottleneck = std::numeric_limits<double>::infinity();
  for (DirectedLinkId d : flows_.touched) {
    double share = ctx_.residual[d] / flows_.count[d];
    if (share < e.bottleneck ||
        (share == e.bottleneck &&
         (e.bottleneckLink == PlacementIndex::kNoLink || d < e.bottleneckLink))) {
      e.bottleneck = share;
      e.bottleneckLink = d;
    }
  }
  if (flows_.touched.empty()) e.bottleneck = ctx_.ix.referenceBytesPerSecond();
  if (e.unroutedFlows > 0) e.bottleneck = 0.0;
  if (e.bottleneckLink != PlacementIndex::kNoLink) {
    e.bottleneckFlows = flows_.count[e.bottleneckLink];
  }
}

void Evaluator::listHottest(Eval& e) {
  const auto& flows = flows_.count;
  auto hotter = [&](DirectedLinkId a, DirectedLinkId b) {
    double ua = ctx_.utilization[a], ub = ctx_.utilization[b];
    if (ua != ub) return ua > ub;
    double sa = ctx_.residual[a] / flows[a], sb = ctx_.residual[b] / flows[b];
    if (sa != sb) return sa < sb;
    return a < b;
  };
  hot_.assign(flows_.touched.begin(), flows_.touched.end());
  const std::size_t k = std::min(hot_.size(), ctx_.limits.hottestLinks);
  std::partial_sort(hot_.begin(), hot_.begin() + static_cast<std::ptrdiff_t>(k), hot_.end(),
                    hotter);
  for (std::size_t i = 0; i < k; ++i) e.hottest.emplace_back(hot_[i], flows[hot_[i]]);
  e.hasHottest = true;
}

void Evaluator::finish(const Order& order, Eval& e) {
  const LeafSpan::Span span = span_.of(order, true);
  e.rails = std::max(e.rails, span.rails);
  e.leafSwitches += span.leafSwitches;
  e.leafGroups = span.leafGroups;
  e.objective = objectiveOf(e.bottleneck / ctx_.ix.referenceBytesPerSecond(),
                            static_cast<double>(e.leafSwitches) / std::max(1, e.rails),
                            order.size(), e.maxHops);
}

}  // namespace ibfabric::routing::placement
