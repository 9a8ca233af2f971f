// Allocation planning with preemption: evict candidates on a what-if usage until the request
// fits, then spare the victims that were not needed.
#include "scheduler_hooks/pool/preemption.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "scheduler_hooks/pool/gpu_choice.h"
#include "scheduler_hooks/pool/quota.h"
#include "scheduler_hooks/pool/usage_accounting.h"

namespace ibfabric::scheduler_hooks::pool_impl {
namespace {

/// Free whole hosts (with at least `per` GPUs) and free GPUs of usable hosts: a cheap necessary
/// condition checked before a full choose() (which may call the placer).
struct FreeCounts {
  int per = 0;
  int freeHosts = 0;
  long freeGpus = 0;
};

std::pair<int, int> contribution(const PoolState& s, std::size_t h, const GpuUsage& use, int per) {
  if (!s.usable(h)) return {0, 0};
  const int f = freeGpus(h, use);
  const int size = static_cast<int>(use[h].size());
  return {f == size && size >= per ? 1 : 0, f};
}

FreeCounts countFree(const PoolState& s, const GpuUsage& use, int per) {
  FreeCounts c;
  c.per = per;
  for (std::size_t h = 0; h < s.hosts.size(); ++h) {
    auto [whole, f] = contribution(s, h, use, per);
    c.freeHosts += whole;
    c.freeGpus += f;
  }
  return c;
}

bool roughFits(const AllocationRequest& r, const FreeCounts& c) {
  if (r.jobClass == JobClass::kTraining) return c.freeHosts >= (r.gpus + c.per - 1) / c.per;
  if (isExclusive(r)) return c.freeGpus >= r.gpus;
  return true;
}

/// The pool's usage with some allocations evicted: GPUs, class shares and free counts in step.
struct WhatIf {
  GpuUsage use;
  std::map<JobClass, double> used;
  FreeCounts counts;

  /// applyGrant(sign) on `use`, keeping `counts` and `used` in step.
  void apply(const PoolState& s, const Allocation& a, int sign) {
    std::vector<std::size_t> touched;
    for (const auto& g : a.hosts)
      if (auto it = s.byName.find(g.host); it != s.byName.end()) touched.push_back(it->second);
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (std::size_t h : touched) {
      auto [whole, f] = contribution(s, h, use, counts.per);
      counts.freeHosts -= whole;
      counts.freeGpus -= f;
    }
    applyGrant(s, a, sign, &use);
    for (std::size_t h : touched) {
      auto [whole, f] = contribution(s, h, use, counts.per);
      counts.freeHosts += whole;
      counts.freeGpus += f;
    }
    used[a.request.jobClass] += sign * a.gpuEquivalents;
  }
  void evict(const PoolState& s, const Allocation& a) { apply(s, a, -1); }
  void restore(const PoolState& s, const Allocation& a) { apply(s, a, +1); }
};

std::optional<std::string> quotaBlockFor(const PoolState& s, const AllocationRequest& r, double eq,
                                         const std::map<JobClass, double>& used) {
  auto it = used.find(r.jobClass);
  const double held = it == used.end() ? 0.0 : it->second;
  return quotaBlock(s.options.quotas, r.jobClass, eq, held, s.totalGpus(), s.now());
}

/// The grants for `r` on the what-if, when its quota and free counts allow them.
std::optional<std::vector<HostGrant>> tryOn(const PoolState& s, const AllocationRequest& r,
                                            double eq, const WhatIf& w, std::string& why) {
  if (quotaBlockFor(s, r, eq, w.used) || !roughFits(r, w.counts)) return std::nullopt;
  return choose(s, r, w.use, why);
}

/// Preemptible allocations of lower priority: lowest priority first; among equals the youngest
/// (highest sequence) first.
std::vector<const Allocation*> preemptionCandidates(const PoolState& s,
                                                    const AllocationRequest& r) {
  std::vector<const Allocation*> cands;
  for (const auto& [id, a] : s.allocations)
    if (a.request.preemptible && a.request.priority < r.priority) cands.push_back(&a);
  std::sort(cands.begin(), cands.end(), [](const Allocation* a, const Allocation* b) {
    return std::make_tuple(a->request.priority, -static_cast<std::int64_t>(a->sequence)) <
           std::make_tuple(b->request.priority, -static_cast<std::int64_t>(b->sequence));
  });
  return cands;
}

/// Puts victims back (latest first) while the request still fits without them.
void spareUnneeded(const PoolState& s, const AllocationRequest& r, double eq, WhatIf& w,
                   AllocationPlan& plan) {
  for (std::size_t i = plan.victims.size() - 1; i-- > 0;) {
    const Allocation* v = plan.victims[i];
    w.restore(s, *v);
    std::string ignored;
    if (auto again = tryOn(s, r, eq, w, ignored)) {
      plan.grants = std::move(*again);
      plan.victims.erase(plan.victims.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      w.evict(s, *v);
    }
  }
}

PoolError refusal(const PoolState& s, const AllocationRequest& r, double eq,
                  const std::optional<std::string>& quota, const std::string& why, const WhatIf& w,
                  std::size_t candidates) {
  const std::string msg = quota && !quotaBlockFor(s, r, eq, w.used) ? why : quota ? *quota : why;
  return PoolError(
      quota ? PoolError::Kind::kQuota : PoolError::Kind::kCapacity,
      msg + (candidates == 0 ? std::string()
                             : " (even after preempting all " + std::to_string(candidates) +
                                   " lower-priority preemptible allocations)"));
}

AllocationPlan planWithPreemption(const PoolState& s, const AllocationRequest& r, double eq,
                                  const std::optional<std::string>& quota, std::string why) {
  const auto cands = preemptionCandidates(s, r);
  const int per = r.jobClass == JobClass::kTraining ? trainingPerHost(s, r) : 1;
  WhatIf w{s.gpuUse, s.usedByClass, {}};
  w.counts = countFree(s, w.use, per);
  AllocationPlan plan;
  std::optional<std::vector<HostGrant>> chosen;
  for (const Allocation* v : cands) {
    w.evict(s, *v);
    plan.victims.push_back(v);
    if ((chosen = tryOn(s, r, eq, w, why))) break;
  }
  if (!chosen) throw refusal(s, r, eq, quota, why, w, cands.size());
  plan.grants = std::move(*chosen);
  spareUnneeded(s, r, eq, w, plan);
  return plan;
}

}  // namespace

AllocationPlan planAllocation(const PoolState& s, const AllocationRequest& r) {
  const double eq = requestEquivalents(r);
  std::string why;
  const auto quota = quotaBlockFor(s, r, eq, s.usedByClass);
  if (!quota)
    if (auto chosen = choose(s, r, s.gpuUse, why)) return {std::move(*chosen), {}};
  return planWithPreemption(s, r, eq, quota, std::move(why));
}

}  // namespace ibfabric::scheduler_hooks::pool_impl
