// Degraded allocations: replacement suggestions and the active -> degraded transition.
#include "scheduler_hooks/pool/degraded_allocations.h"

#include <spdlog/spdlog.h>

#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "scheduler_hooks/pool/gpu_choice.h"
#include "scheduler_hooks/pool/journal_records.h"
#include "scheduler_hooks/pool/usage_accounting.h"

namespace ibfabric::scheduler_hooks::pool_impl {
namespace {

using nlohmann::json;

/// The leaf switches of the job's usable hosts (the failing one only when it is the only host).
std::set<Guid> jobLeaves(const PoolState& s, const Allocation& a, const std::string& bad) {
  std::set<Guid> leaves;
  for (const auto& g : a.hosts) {
    auto it = s.byName.find(g.host);
    if (it == s.byName.end() || (g.host != bad && !s.usable(it->second))) continue;
    if (g.host == bad && a.hosts.size() > 1) continue;
    leaves.insert(s.hosts[it->second].leaves.begin(), s.hosts[it->second].leaves.end());
  }
  return leaves;
}

/// How well host `h` takes `need` GPUs of `a` (the free GPUs left, 0 for training); nullopt when
/// it cannot.
std::optional<int> replacementFit(const PoolState& s, const Allocation& a, std::size_t h,
                                  int need) {
  if (a.request.jobClass == JobClass::kTraining) {
    if (!hostFree(h, s.gpuUse) || static_cast<int>(s.gpuUse[h].size()) < need) return std::nullopt;
    return 0;
  }
  if (isExclusive(a.request)) {
    const int fit = freeGpus(h, s.gpuUse);
    if (fit < need) return std::nullopt;
    return fit;
  }
  AllocationRequest probe = a.request;
  probe.gpus = need;
  probe.gpusPerHost = 0;
  std::string why;
  if (!chooseMig(s, probe, s.gpuUse, why, h)) return std::nullopt;
  return freeGpus(h, s.gpuUse);
}

/// An allocation turned degraded: the PoolEvent, logged.
PoolEvent degradedEvent(const std::string& id, const std::string& host, const Allocation& a) {
  PoolEvent ev{id, host, a.degradedReason, a.replacement, ""};
  ev.message =
      "allocation " + id + " degraded: " + a.degradedReason +
      (a.replacement ? "; suggested replacement " + *a.replacement : "; " + a.replacementNote);
  spdlog::warn("pool: {}", ev.message);
  return ev;
}

/// Degrades `a` (job `id`) because of `host`: journaled (a failed write keeps it in memory only).
void degrade(PoolState& s, const std::string& id, Allocation& a, const std::string& host,
             std::size_t hostIndex) {
  Allocation next = a;
  next.state = AllocationState::kDegraded;
  next.degradedReason = s.hosts[hostIndex].reason();
  suggestReplacement(s, next, host);
  try {
    record(s, {{"op", "degrade"},
               {"job", id},
               {"reason", next.degradedReason},
               {"replacement", next.replacement ? json(*next.replacement) : json(nullptr)},
               {"note", next.replacementNote}});
  } catch (const PoolError& e) {
    spdlog::error("pool: {} (allocation {} degraded in memory only)", e.what(), id);
  }
  a = std::move(next);
  s.pending.push_back(degradedEvent(id, host, a));
}

}  // namespace

void suggestReplacement(const PoolState& s, Allocation& a, const std::string& bad) {
  a.replacement.reset();
  auto badIt = s.byName.find(bad);
  const HostGrant* part = nullptr;
  for (const auto& g : a.hosts)
    if (g.host == bad) part = &g;
  if (!part || badIt == s.byName.end()) {
    a.replacementNote = "no replacement: the host is not in the inventory";
    return;
  }
  const std::set<Guid> leaves = jobLeaves(s, a, bad);
  std::set<std::string> inJob;
  for (const auto& g : a.hosts) inJob.insert(g.host);
  const int badGroup = s.hosts[badIt->second].group;
  const int need = static_cast<int>(part->gpus.size());
  // Fewest leaves outside the job's, then the failing host's leaf group, best fit, by name.
  using Score = std::tuple<int, int, int, std::string>;
  std::optional<Score> best;
  std::size_t bestHost = 0;
  for (std::size_t h = 0; h < s.hosts.size(); ++h) {
    if (!s.usable(h) || inJob.count(s.hosts[h].inv.name)) continue;
    const auto fit = replacementFit(s, a, h, need);
    if (!fit) continue;
    int outside = 0;
    for (Guid l : s.hosts[h].leaves) outside += leaves.count(l) ? 0 : 1;
    const int sameGroup = (badGroup >= 0 && s.hosts[h].group == badGroup) ? 0 : 1;
    Score score{outside, sameGroup, *fit, s.hosts[h].inv.name};
    if (!best || score < *best) {
      best = score;
      bestHost = h;
    }
  }
  if (!best) {
    a.replacementNote = "no free healthy host can take " + std::to_string(need) + " GPUs";
    return;
  }
  a.replacement = s.hosts[bestHost].inv.name;
  const int outside = std::get<0>(*best);
  a.replacementNote = outside == 0 ? "on the job's leaves: leaf span and bottleneck unchanged"
                                   : "adds " + std::to_string(outside) + " leaf switch(es)" +
                                         (std::get<1>(*best) == 0 ? ", same leaf group" : "");
}

void refreshDegraded(PoolState& s) {
  for (auto& [id, a] : s.allocations) {
    if (a.state == AllocationState::kDegraded) continue;
    for (const auto& g : a.hosts) {
      auto it = s.byName.find(g.host);
      if (it == s.byName.end() || s.hosts[it->second].health() == HostHealth::kOk) continue;
      const std::string host = g.host;  // `a` (and `g` with it) is replaced by degrade()
      degrade(s, id, a, host, it->second);
      break;
    }
  }
  maybeCompact(s);
}

}  // namespace ibfabric::scheduler_hooks::pool_impl
