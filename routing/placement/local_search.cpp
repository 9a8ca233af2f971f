// Local search (local_search.h): moves of the hosts behind the bottleneck link.
#include "routing/placement/local_search.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <utility>

#include "routing/placement/ring_entries.h"

namespace ibfabric::routing::placement {

LocalSearch::LocalSearch(Evaluator& evaluator, CandidateSet& candidates, const BlockPools& pools,
                         CommPattern pattern, std::size_t eligibleCount)
    : ev_(evaluator),
      candidates_(candidates),
      pools_(pools),
      ix_(evaluator.context().ix),
      limits_(evaluator.context().limits),
      pattern_(pattern),
      small_(eligibleCount <= kSmallPool),
      chosen_(ix_.hosts().size(), 0) {}

void LocalSearch::run() {
  const std::uint64_t budget = ev_.work() + limits_.improvementWork;
  std::vector<Candidate> improvedSet;
  for (std::size_t start = 0;
       start < std::min<std::size_t>(candidates_.size(), 4) && ev_.work() < budget; ++start) {
    if (skipStart(start)) continue;
    if (!candidates_[start].evaluated) {
      // The next best candidate exactly (the ones above stay in place), charged to the budget.
      candidates_.evaluateBest(start + 1);
      candidates_.sortBest();
      if (ev_.work() >= budget) break;
    }
    Candidate best = candidates_[start];
    improve(best, budget);
    // The ring's block boundaries: the best entry host per block (its own budget: cheap next to
    // the moves, and worth most when they ran out of budget on a large ring).
    if (pattern_ == CommPattern::kRingAllreduce) {
      RingEntries(ev_).refine(best.order, best.eval, pools_.free,
                              ev_.work() + limits_.improvementWork / 4);
    }
    improvedSet.push_back(std::move(best));
  }
  candidates_.merge(improvedSet);
}

// An alltoall whose full score costs more than the whole budget (512 hosts at 10,240 HCAs): only
// the set whose flows are in place is improved. Any other start would spend the budget on its own
// full score before its first move.
bool LocalSearch::skipStart(std::size_t start) const {
  const IncrementalAllToAll& base = ev_.allToAllBase();
  return pattern_ == CommPattern::kAllToAll && base.valid() &&
         base.baseWork() >= limits_.improvementWork && !base.isBase(candidates_[start].order);
}

void LocalSearch::improve(Candidate& best, std::uint64_t budget) {
  bool improved = true;
  while (improved && ev_.work() < budget && best.eval.bottleneckLink != PlacementIndex::kNoLink) {
    improved = improveOnce(best, budget);
  }
}

bool LocalSearch::improveOnce(Candidate& best, std::uint64_t budget) {
  std::fill(chosen_.begin(), chosen_.end(), 0);
  for (HostId h : best.order) chosen_[h] = 1;
  const std::vector<std::size_t> critical = criticalPositions(best);
  const std::vector<HostId> pool = replacementPool(best);
  const std::size_t size = best.order.size();
  for (std::size_t i : critical) {
    if (ev_.work() >= budget) break;
    if (pattern_ == CommPattern::kRingAllreduce && trySameBlockSwaps(best, i, budget)) return true;
    if (tryReplacements(best, i, pool, budget)) return true;
  }
  // Small pools: when no single replacement helps, two at once.
  if (small_ && size <= 16 && pool.size() <= 16) return tryPairReplacements(best, pool, budget);
  return false;
}

std::vector<std::size_t> LocalSearch::criticalPositions(const Candidate& best) const {
  const DirectedLinkId hot = best.eval.bottleneckLink;
  const LinkLoadModel& load = ev_.context().load;
  NodeIndex hotA = load.sender(hot).node, hotB = load.receiver(hot).node;
  std::vector<std::size_t> critical;
  const std::size_t size = best.order.size();
  for (std::size_t i = 0; i < size; ++i) {
    for (const auto& hca : ix_.hosts()[best.order[i]].hcas) {
      if (hca.node == hotA || hca.node == hotB || hca.leaf == hotA || hca.leaf == hotB) {
        critical.push_back(i);
        break;
      }
    }
  }
  if (pattern_ == CommPattern::kRingAllreduce && size >= 2) addRingCrossings(best, hot, critical);
  if (small_ && size <= 16) {
    critical.resize(size);
    std::iota(critical.begin(), critical.end(), std::size_t{0});
  }
  std::sort(critical.begin(), critical.end());
  critical.erase(std::unique(critical.begin(), critical.end()), critical.end());
  if (critical.size() > 8 && !small_) critical.resize(8);
  return critical;
}

void LocalSearch::addRingCrossings(const Candidate& best, DirectedLinkId hot,
                                   std::vector<std::size_t>& critical) const {
  const std::size_t size = best.order.size();
  for (std::size_t i = 0; i < size; ++i) {
    const auto& a = ix_.hosts()[best.order[i]].hcas;
    const auto& b = ix_.hosts()[best.order[(i + 1) % size]].hcas;
    bool crosses = false;
    for (const auto& src : a) {
      for (const auto& dst : b) {
        if (src.hcaIndex != dst.hcaIndex || src.leaf == dst.leaf) continue;
        ix_.traceFromSwitch(src.leaf, dst.lid, dst.node,
                            [&](DirectedLinkId d) { crosses = crosses || d == hot; });
      }
    }
    if (crosses) {
      critical.push_back(i);
      critical.push_back((i + 1) % size);
    }
  }
}

std::vector<HostId> LocalSearch::replacementPool(const Candidate& best) {
  std::set<int> used;
  for (HostId h : best.order) used.insert(ix_.hosts()[h].block);
  std::vector<int> others;
  for (int b : pools_.usable) {
    if (!used.count(b)) others.push_back(b);
  }
  std::stable_sort(others.begin(), others.end(),
                   [&](int x, int y) { return pools_.blockQ[x] > pools_.blockQ[y]; });
  if (others.size() > 4) others.resize(4);
  std::vector<int> poolBlocks(used.begin(), used.end());
  poolBlocks.insert(poolBlocks.end(), others.begin(), others.end());
  if (small_) poolBlocks = pools_.usable;
  std::vector<HostId> pool;
  for (int b : poolBlocks) {
    int taken = 0;
    for (HostId h : pools_.free[b]) {
      if (chosen_[h]) continue;
      pool.push_back(h);
      if (++taken == 4 && !small_) break;
    }
  }
  return pool;
}

bool LocalSearch::trySameBlockSwaps(Candidate& best, std::size_t i, std::uint64_t budget) {
  const std::size_t size = best.order.size();
  for (std::size_t j = 0; j < size && ev_.work() < budget; ++j) {
    if (j == i || ix_.hosts()[best.order[j]].block != ix_.hosts()[best.order[i]].block) continue;
    Order o = best.order;
    std::swap(o[i], o[j]);
    if (tryOrder(best, std::move(o), false)) return true;
  }
  return false;
}

bool LocalSearch::tryReplacements(Candidate& best, std::size_t i, const std::vector<HostId>& pool,
                                  std::uint64_t budget) {
  for (HostId u : pool) {
    if (ev_.work() >= budget) break;
    Order o = best.order;
    o[i] = u;
    if (tryOrder(best, std::move(o), true)) return true;
  }
  return false;
}

bool LocalSearch::tryPairReplacements(Candidate& best, const std::vector<HostId>& pool,
                                      std::uint64_t budget) {
  const std::size_t size = best.order.size();
  for (std::size_t i = 0; i < size && ev_.work() < budget; ++i) {
    for (std::size_t j = i + 1; j < size && ev_.work() < budget; ++j) {
      for (std::size_t u = 0; u < pool.size() && ev_.work() < budget; ++u) {
        for (std::size_t v = u + 1; v < pool.size() && ev_.work() < budget; ++v) {
          Order o = best.order;
          o[i] = pool[u];
          o[j] = pool[v];
          if (tryOrder(best, std::move(o), true)) return true;
        }
      }
    }
  }
  return false;
}

bool LocalSearch::tryOrder(Candidate& best, Order order, bool reorder) {
  // An alltoall's bound and score do not depend on the rank order (every pair is a flow): it is
  // put in rank order only when kept.
  const bool sortLater = reorder && pattern_ == CommPattern::kAllToAll;
  if (reorder && !sortLater) canonicalize(ix_, order);
  // Not exactly evaluated when even its bound could not beat the current best.
  if (limits_.pruneByBound && cannotImprove(ev_.upperBound(order, pattern_), best.eval.objective)) {
    return false;
  }
  Eval e = ev_.evaluate(order, pattern_);
  if (!improves(e.objective, best.eval.objective)) return false;
  if (sortLater) canonicalize(ix_, order);
  best.order = std::move(order);
  best.eval = std::move(e);
  return true;
}

}  // namespace ibfabric::routing::placement
