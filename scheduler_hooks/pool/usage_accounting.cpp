// Usage accounting: the GPUs and MIG slices allocations hold, per-class GPU-equivalents, and the
// pool's usage summary.
#include "scheduler_hooks/pool/usage_accounting.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>

#include "scheduler_hooks/pool/quota.h"

namespace ibfabric::scheduler_hooks::pool_impl {
namespace {

/// The N of a "<N>g.<M>gb" MIG profile (0 when it does not start with digits).
int profileCompute(std::string_view profile) {
  int v = 0;
  for (char c : profile) {
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

bool isExclusive(const AllocationRequest& r) { return r.sharing == "exclusive"; }

double requestEquivalents(const AllocationRequest& r) {
  if (isExclusive(r)) return r.gpus;
  return r.gpus * profileCompute(r.sharing) / 7.0;
}

double applyGrant(const PoolState& s, const Allocation& a, int sign, GpuUsage* use) {
  double eq = 0.0;
  for (const auto& g : a.hosts) {
    auto it = s.byName.find(g.host);
    if (it == s.byName.end()) continue;
    const HostEntry& h = s.hosts[it->second];
    for (int idx : g.gpus) {
      const int pos = h.position(idx);
      if (pos < 0) continue;
      GpuUse scratch;
      GpuUse& gu = use ? (*use)[it->second][pos] : scratch;
      if (isExclusive(a.request)) {
        gu.exclusive = sign > 0;
        eq += 1.0;
      } else if (auto p = parseMigProfile(a.request.sharing, h.inv.gpus[pos])) {
        gu.compute += sign * p->computeSlices;
        gu.memory += sign * p->memorySlices;
        eq += double(p->computeSlices) / computeSlicesOf(h.inv.gpus[pos].model);
      }
    }
  }
  return eq;
}

void addAllocation(PoolState& s, Allocation a) {
  applyGrant(s, a, +1, &s.gpuUse);
  s.usedByClass[a.request.jobClass] += a.gpuEquivalents;
  s.nextSequence = std::max(s.nextSequence, a.sequence + 1);
  s.allocations[a.request.jobId] = std::move(a);
}

void removeAllocation(PoolState& s, const std::string& job) {
  auto it = s.allocations.find(job);
  if (it == s.allocations.end()) return;
  applyGrant(s, it->second, -1, &s.gpuUse);
  double& used = s.usedByClass[it->second.request.jobClass];
  used -= it->second.gpuEquivalents;
  if (std::abs(used) < 1e-9) used = 0.0;
  s.allocations.erase(it);
}

int freeGpus(std::size_t h, const GpuUsage& use) {
  int n = 0;
  for (const auto& g : use[h]) n += g.free() ? 1 : 0;
  return n;
}

bool hostFree(std::size_t h, const GpuUsage& use) {
  return freeGpus(h, use) == static_cast<int>(use[h].size());
}

PoolUsage summarizeUsage(const PoolState& s) {
  PoolUsage u;
  u.now = s.now();
  u.totalGpus = s.totalGpus();
  for (std::size_t h = 0; h < s.hosts.size(); ++h) {
    if (s.usable(h)) u.usableGpus += static_cast<int>(s.hosts[h].inv.gpus.size());
    if (!s.hosts[h].known) u.unknownHosts.push_back(s.hosts[h].inv.name);
  }
  u.byClass[JobClass::kTraining];
  u.byClass[JobClass::kInference];
  for (const auto& [id, a] : s.allocations) {
    auto& c = u.byClass[a.request.jobClass];
    c.gpus += a.gpuEquivalents;
    ++c.allocations;
    if (a.state == AllocationState::kDegraded) ++c.degradedAllocations;
    u.usedGpus += a.gpuEquivalents;
  }
  for (const auto& rule : s.options.quotas)
    u.quotas.push_back(quotaStatus(rule, u.byClass[rule.jobClass].gpus, u.totalGpus, u.now));
  u.preemptions = s.preemptions;
  u.journalRecords = s.journal ? s.journal->recordsSinceSnapshot() : 0;
  u.tornBytesAtStart = s.tornBytes;
  return u;
}

}  // namespace ibfabric::scheduler_hooks::pool_impl
