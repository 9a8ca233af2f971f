// Candidate generation (candidate_generation.h).
#include "routing/placement/candidate_generation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace ibfabric::routing::placement {

CandidateGenerator::CandidateGenerator(Evaluator& evaluator, const BlockPools& pools,
                                       const EligibleHosts& eligible, std::size_t hosts,
                                       CommPattern pattern, CandidateSet& candidates)
    : ev_(evaluator),
      ix_(evaluator.context().ix),
      pools_(pools),
      eligible_(eligible),
      n_(hosts),
      pattern_(pattern),
      candidates_(candidates) {}

void CandidateGenerator::generate() {
  topologyBestFit();
  singleBlocks();
  blockFills();
  greedyConstruction();
}

// (0) The answer is never below it on the objective whenever the work budget affords its score
// (not for a 512-host alltoall at 10,240 HCAs, see CandidateSet::evaluateBest).
void CandidateGenerator::topologyBestFit() {
  const auto& free = pools_.free;
  std::vector<int> sequence;
  for (int b : pools_.usable) {
    if (free[b].size() >= n_ && (sequence.empty() || free[b].size() < free[sequence[0]].size())) {
      sequence.assign(1, b);
    }
  }
  if (sequence.empty()) {
    sequence = pools_.usable;
    std::stable_sort(sequence.begin(), sequence.end(),
                     [&](int x, int y) { return free[x].size() > free[y].size(); });
  }
  Order order;
  for (int b : sequence) {
    for (HostId h : ix_.blocks()[b].hosts) {
      if (order.size() < n_ && eligible_.eligible[h]) order.push_back(h);
    }
  }
  if (order.size() == n_) candidates_.consider(std::move(order), true);
}

// (a) Best fit among the healthiest.
void CandidateGenerator::singleBlocks() {
  const auto& free = pools_.free;
  const auto& blockQ = pools_.blockQ;
  std::vector<int> fits;
  for (int b : pools_.usable) {
    if (free[b].size() >= n_) fits.push_back(b);
  }
  auto minQ = [&](int b) { return pools_.hostQ[free[b][n_ - 1]]; };
  std::stable_sort(fits.begin(), fits.end(), [&](int x, int y) {
    double qx = std::min(minQ(x), blockQ[x]), qy = std::min(minQ(y), blockQ[y]);
    if (n_ == 1 || pattern_ == CommPattern::kNone) qx = minQ(x), qy = minQ(y);
    if (qx != qy) return qx > qy;
    if (free[x].size() != free[y].size()) return free[x].size() < free[y].size();
    return x < y;
  });
  for (std::size_t i = 0; i < fits.size() && i < 4; ++i) fill({fits[i]});
}

// (b) Several blocks, per leaf group and fabric-wide, in three orders.
void CandidateGenerator::blockFills() {
  const auto& free = pools_.free;
  const auto& blockQ = pools_.blockQ;
  for (const auto& scope : fillScopes()) {
    std::vector<int> loadAware = scope, bestFit = scope, bucketed = scope;
    std::stable_sort(loadAware.begin(), loadAware.end(), [&](int x, int y) {
      if (blockQ[x] != blockQ[y]) return blockQ[x] > blockQ[y];
      if (free[x].size() != free[y].size()) return free[x].size() > free[y].size();
      return x < y;
    });
    std::stable_sort(bestFit.begin(), bestFit.end(), [&](int x, int y) {
      if (free[x].size() != free[y].size()) return free[x].size() > free[y].size();
      if (blockQ[x] != blockQ[y]) return blockQ[x] > blockQ[y];
      return x < y;
    });
    std::stable_sort(bucketed.begin(), bucketed.end(), [&](int x, int y) {
      long bx = std::lround(blockQ[x] * 10), by = std::lround(blockQ[y] * 10);
      if (bx != by) return bx > by;
      if (free[x].size() != free[y].size()) return free[x].size() > free[y].size();
      return x < y;
    });
    fill(loadAware);
    fill(bestFit);
    fill(bucketed);
  }
}

std::vector<std::vector<int>> CandidateGenerator::fillScopes() const {
  std::map<int, std::vector<int>> byGroup;
  for (int b : pools_.usable) byGroup[ix_.blocks()[b].group].push_back(b);
  std::vector<std::pair<double, int>> groupRank;
  for (auto& [g, members] : byGroup) {
    std::size_t total = 0;
    double q = 0;
    for (int b : members) {
      total += pools_.free[b].size();
      q += pools_.blockQ[b] * static_cast<double>(pools_.free[b].size());
    }
    if (total >= n_) groupRank.emplace_back(-q / static_cast<double>(total), g);
  }
  std::sort(groupRank.begin(), groupRank.end());
  std::vector<std::vector<int>> scopes;
  for (std::size_t i = 0; i < groupRank.size() && i < 3; ++i) {
    scopes.push_back(byGroup[groupRank[i].second]);
  }
  scopes.push_back(pools_.usable);
  return scopes;
}

void CandidateGenerator::fill(const std::vector<int>& sequence) {
  Order order;
  for (int b : sequence) {
    for (HostId h : pools_.free[b]) {
      if (order.size() == n_) break;
      order.push_back(h);
    }
    if (order.size() == n_) break;
  }
  if (order.size() == n_) candidates_.consider(std::move(order));
}

// (c) Small pools of eligible hosts: from the best 8 seed hosts, bounded by the work budget.
void CandidateGenerator::greedyConstruction() {
  if (eligible_.count > kSmallPool || n_ < 2) return;
  std::vector<HostId> pool;
  for (int b : pools_.usable) pool.insert(pool.end(), pools_.free[b].begin(), pools_.free[b].end());
  std::stable_sort(pool.begin(), pool.end(),
                   [&](HostId x, HostId y) { return pools_.hostQ[x] > pools_.hostQ[y]; });
  const std::uint64_t budget = ev_.work() + ev_.context().limits.improvementWork;
  for (std::size_t seed = 0; seed < pool.size() && seed < 8 && ev_.work() < budget; ++seed) {
    growFrom(pool[seed], pool, budget);
  }
}

void CandidateGenerator::growFrom(HostId seed, const std::vector<HostId>& pool,
                                  std::uint64_t budget) {
  Order order{seed};
  std::vector<char> in(ix_.hosts().size(), 0);
  in[seed] = 1;
  while (order.size() < n_ && ev_.work() < budget) {
    double bestObjective = -1e18;
    HostId bestHost = 0;
    for (HostId u : pool) {
      if (in[u]) continue;
      Order o = order;
      o.push_back(u);
      canonicalize(ix_, o);
      double obj = ev_.evaluate(o, pattern_).objective;
      if (obj > bestObjective) {
        bestObjective = obj;
        bestHost = u;
      }
    }
    order.push_back(bestHost);
    in[bestHost] = 1;
  }
  if (order.size() == n_) candidates_.consider(std::move(order));
}

}  // namespace ibfabric::routing::placement
