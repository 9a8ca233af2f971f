// CandidateSet (candidate_set.h): candidates kept once, scored best bound first.
#include "routing/placement/candidate_set.h"

#include <algorithm>
#include <functional>

namespace ibfabric::routing::placement {

namespace {

bool better(const Candidate& x, const Candidate& y) {
  if (x.evaluated != y.evaluated) return x.evaluated;
  if (x.eval.objective != y.eval.objective) return x.eval.objective > y.eval.objective;
  return x.order < y.order;
}

std::vector<HostId> setKey(const Order& order) {
  std::vector<HostId> key = order;
  std::sort(key.begin(), key.end());
  return key;
}

}  // namespace

void canonicalize(const PlacementIndex& ix, Order& order) {
  std::sort(order.begin(), order.end(),
            [&](HostId x, HostId y) { return ix.canonicalRank(x) < ix.canonicalRank(y); });
}

void CandidateSet::consider(Order order, bool baseline) {
  canonicalize(ev_.context().ix, order);
  if (!seen_.insert(setKey(order)).second) return;
  Candidate c;
  c.baseline = baseline;
  c.bound = ev_.upperBound(order, pattern_);
  c.order = std::move(order);
  all_.push_back(std::move(c));
}

void CandidateSet::evaluateBest(std::size_t keep) {
  const std::vector<std::size_t> pending = pendingByBound();
  std::vector<double> best = bestExact(keep);
  const std::uint64_t budget = ev_.work() + ev_.context().limits.improvementWork;
  for (std::size_t i : pending) {
    Candidate& c = all_[i];
    // Beyond the `keep` best, a candidate is scored only within one work budget: one score of a
    // 512-host alltoall at 10,240 HCAs costs more than the budget, and two would take the answer
    // past 10 ms (not even the baseline, then).
    if (best.size() >= keep && ev_.work() >= budget) continue;
    if (best.size() >= keep && ruledOut(c, best.back())) continue;
    c.eval = ev_.evaluate(c.order, pattern_);
    c.evaluated = true;
    best.insert(std::upper_bound(best.begin(), best.end(), c.eval.objective, std::greater<>()),
                c.eval.objective);
    if (best.size() > keep) best.pop_back();
  }
}

std::vector<std::size_t> CandidateSet::pendingByBound() const {
  std::vector<std::size_t> byBound;
  for (std::size_t i = 0; i < all_.size(); ++i) {
    if (!all_[i].evaluated) byBound.push_back(i);
  }
  std::stable_sort(byBound.begin(), byBound.end(),
                   [&](std::size_t x, std::size_t y) { return all_[x].bound > all_[y].bound; });
  return byBound;
}

std::vector<double> CandidateSet::bestExact(std::size_t keep) const {
  std::vector<double> best;
  for (const auto& c : all_) {
    if (c.evaluated) best.push_back(c.eval.objective);
  }
  std::sort(best.begin(), best.end(), std::greater<>());
  if (best.size() > keep) best.resize(keep);
  return best;
}

bool CandidateSet::ruledOut(Candidate& c, double kth) {
  const double tie = c.baseline ? 0.0 : ev_.context().limits.nearTie;
  if (ruledOutByBound(c.bound, kth, tie)) return true;
  if (pattern_ != CommPattern::kAllToAll) return false;
  c.bound = std::min(c.bound, ev_.firstHopBound(c.order));
  return ruledOutByBound(c.bound, kth, tie);
}

void CandidateSet::sortBest() { std::sort(all_.begin(), all_.end(), better); }

void CandidateSet::merge(const std::vector<Candidate>& improved) {
  for (const auto& best : improved) {
    const std::vector<HostId> key = setKey(best.order);
    if (seen_.insert(key).second) {
      all_.push_back(best);
      continue;
    }
    for (auto& c : all_) {
      if (setKey(c.order) == key && (!c.evaluated || best.eval.objective > c.eval.objective)) {
        c = best;
      }
    }
  }
  sortBest();
}

}  // namespace ibfabric::routing::placement
