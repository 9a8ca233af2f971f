// Degraded allocations: replacement suggestions and the active -> degraded transition.
#include "scheduler_hooks/pool/degraded_allocations.h"

#include <spdlog/spdlog.h>

#include <optional>
#include <set>
#include <utility>

#include "scheduler_hooks/pool/gpu_choice.h"
#include "scheduler_hooks/pool/journal_records.h"
#include "scheduler_hooks/pool/usage_accounting.h"

namespace ibfabric::scheduler_hooks::pool_impl {
namespace {

using nlohmann::json;

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
      (a.replacement ? "; suggested replacement " + *a.replacement + " (" + a.replacementNote + ")"
                     : "; " + a.replacementNote);
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

/// A free healthy host that can take the failing host's GPUs, and how tightly (lower: tighter).
struct Candidate {
  std::size_t host = 0;
  int fit = 0;
};

/// The engine's answer for the job with candidate `c` in the failing host's place.
struct Ranked {
  double objective = 0.0;
  int fit = 0;
  std::string name;
  std::string explanation;
};

bool better(const Ranked& x, const Ranked& y) {
  if (x.objective != y.objective) return x.objective > y.objective;
  if (x.fit != y.fit) return x.fit < y.fit;
  return x.name < y.name;
}

/// Ranks `candidates` with the pool's placer: per candidate, the allocation's other hosts plus
/// that one as the only candidates of a request of the allocation's size (ring_allreduce), so the
/// placer scores exactly that host set in its best order. Sets the replacement and the note; when
/// the placer can rank none, the note says why and no replacement is set.
void rankByPlacer(const PoolState& s, const std::vector<Candidate>& candidates, Allocation& a,
                  const std::string& bad) {
  if (!s.options.placer) {
    a.replacementNote = "no replacement: no placement engine";
    return;
  }
  routing::PlacementRequest r;
  r.hosts = static_cast<int>(a.hosts.size());
  r.pattern = routing::CommPattern::kRingAllreduce;
  for (const auto& g : a.hosts)
    if (g.host != bad) r.candidates.push_back(g.host);
  r.candidates.push_back({});
  std::optional<Ranked> best, second;
  std::size_t ranked = 0;
  std::string failure, warning;
  for (const Candidate& c : candidates) {
    r.candidates.back() = s.hosts[c.host].inv.name;
    routing::PlacementAnswer answer;
    try {
      answer = s.options.placer(r);
    } catch (const routing::PlacementError& e) {
      if (failure.empty()) failure = e.what();
      continue;  // e.g. a host of the job the engine no longer takes
    }
    if (answer.options.empty()) continue;
    ++ranked;
    if (warning.empty() && !answer.warnings.empty()) warning = answer.warnings.front();
    Ranked x{answer.options[0].score.objective, c.fit, r.candidates.back(),
             answer.options[0].score.explanation};
    if (!best || better(x, *best)) {
      second = std::move(best);
      best = std::move(x);
    } else if (!second || better(x, *second)) {
      second = std::move(x);
    }
  }
  if (!best) {
    a.replacementNote = "no replacement: the placement engine placed the job on none of " +
                        std::to_string(candidates.size()) + " free hosts: " + failure;
    return;
  }
  a.replacement = best->name;
  a.replacementNote = "ranked best of " + std::to_string(ranked) +
                      " free hosts by the placement engine: " + best->explanation;
  if (second) a.replacementNote += "; next best " + second->name;
  if (!warning.empty()) a.replacementNote += " [" + warning + "]";
}

}  // namespace

void suggestReplacement(const PoolState& s, Allocation& a, const std::string& bad) {
  a.replacement.reset();
  const HostGrant* part = nullptr;
  for (const auto& g : a.hosts)
    if (g.host == bad) part = &g;
  if (!part || !s.byName.count(bad)) {
    a.replacementNote = "no replacement: the host is not in the inventory";
    return;
  }
  std::set<std::string> inJob;
  for (const auto& g : a.hosts) inJob.insert(g.host);
  const int need = static_cast<int>(part->gpus.size());
  std::vector<Candidate> candidates;
  for (std::size_t h = 0; h < s.hosts.size(); ++h) {
    if (!s.usable(h) || inJob.count(s.hosts[h].inv.name)) continue;
    if (const auto fit = replacementFit(s, a, h, need)) candidates.push_back({h, *fit});
  }
  if (candidates.empty()) {
    a.replacementNote = "no free healthy host can take " + std::to_string(need) + " GPUs";
    return;
  }
  rankByPlacer(s, candidates, a, bad);
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
