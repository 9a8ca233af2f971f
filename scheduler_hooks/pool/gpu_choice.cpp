// GPU choice: whole hosts for training (through the placer), whole GPUs packed onto partly used
// hosts, and MIG instances packed onto partitioned GPUs.
#include "scheduler_hooks/pool/gpu_choice.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "scheduler_hooks/pool/usage_accounting.h"

namespace ibfabric::scheduler_hooks::pool_impl {
namespace {

/// The indices of the first `k` free GPUs of host `h`.
std::vector<int> firstFree(const PoolState& s, std::size_t h, const GpuUsage& use, int k) {
  std::vector<int> out;
  for (std::size_t p = 0; p < use[h].size() && static_cast<int>(out.size()) < k; ++p)
    if (use[h][p].free()) out.push_back(s.hosts[h].inv.gpus[p].index);
  return out;
}

// --- training: whole hosts from the placer ---------------------------------------------------

/// The placer's answer; nullopt with `why` when it finds the request unsatisfiable.
std::optional<routing::PlacementAnswer> askPlacer(const PoolState& s,
                                                  const routing::PlacementRequest& pr,
                                                  std::string& why) {
  if (!s.options.placer) throw PoolError(PoolError::Kind::kNotReady, "no placement engine");
  try {
    return s.options.placer(pr);
  } catch (const routing::PlacementError& e) {
    if (e.kind() == routing::PlacementError::Kind::kUnsatisfiable) {
      why = std::string("placement: ") + e.what();
      return std::nullopt;
    }
    throw PoolError(e.kind() == routing::PlacementError::Kind::kNotReady
                        ? PoolError::Kind::kNotReady
                        : PoolError::Kind::kInvalid,
                    std::string("placement: ") + e.what());
  }
}

std::optional<std::vector<HostGrant>> chooseTraining(const PoolState& s, const AllocationRequest& r,
                                                     const GpuUsage& use, std::string& why) {
  const int per = trainingPerHost(s, r);
  const int n = (r.gpus + per - 1) / per;
  routing::PlacementRequest pr;
  pr.hosts = n;
  pr.gpus = r.gpus;
  pr.gpusPerHost = per;
  pr.pattern = routing::CommPattern::kRingAllreduce;
  for (std::size_t h = 0; h < s.hosts.size(); ++h)
    if (s.usable(h) && hostFree(h, use) && static_cast<int>(use[h].size()) >= per)
      pr.candidates.push_back(s.hosts[h].inv.name);
  if (static_cast<int>(pr.candidates.size()) < n) {
    why = "capacity: " + std::to_string(n) + " free healthy hosts with " + std::to_string(per) +
          " GPUs needed, " + std::to_string(pr.candidates.size()) + " available";
    return std::nullopt;
  }
  auto answer = askPlacer(s, pr, why);
  if (!answer) return std::nullopt;
  if (answer->options.empty() || static_cast<int>(answer->options[0].hosts.size()) != n)
    throw PoolError(PoolError::Kind::kStorage, "placement: the engine answered no usable option");
  std::vector<HostGrant> out;
  int left = r.gpus;
  std::set<std::string> used;
  for (const auto& name : answer->options[0].hosts) {
    auto it = s.byName.find(name);
    if (it == s.byName.end() || !s.usable(it->second) || !hostFree(it->second, use) ||
        !used.insert(name).second)
      throw PoolError(PoolError::Kind::kStorage,
                      "placement: the engine chose " + name + ", not a free candidate");
    const int k = std::min(per, left);
    left -= k;
    out.push_back({name, firstFree(s, it->second, use, k)});
  }
  return out;
}

// --- exclusive inference: whole GPUs ---------------------------------------------------------

struct ExclusiveCand {
  std::size_t h;
  int free;
  bool partial;  ///< some of its GPUs are in use
};

/// Usable hosts with a free GPU, and the free GPUs they have together.
std::vector<ExclusiveCand> exclusiveCandidates(const PoolState& s, const GpuUsage& use,
                                               int& total) {
  std::vector<ExclusiveCand> cands;
  total = 0;
  for (std::size_t h = 0; h < s.hosts.size(); ++h) {
    if (!s.usable(h)) continue;
    const int f = freeGpus(h, use);
    if (f == 0) continue;
    cands.push_back({h, f, f < static_cast<int>(use[h].size())});
    total += f;
  }
  return cands;
}

/// gpus_per_host given: best fit, the fullest hosts that still have room first (packs partial
/// hosts).
std::optional<std::vector<HostGrant>> chooseExclusivePerHost(const PoolState& s,
                                                             const AllocationRequest& r,
                                                             const GpuUsage& use,
                                                             std::vector<ExclusiveCand> cands,
                                                             std::string& why) {
  auto name = [&](const ExclusiveCand& c) -> const std::string& { return s.hosts[c.h].inv.name; };
  const int n = (r.gpus + r.gpusPerHost - 1) / r.gpusPerHost;
  std::erase_if(cands, [&](const ExclusiveCand& c) { return c.free < r.gpusPerHost; });
  if (static_cast<int>(cands.size()) < n) {
    why = "capacity: " + std::to_string(n) + " hosts with " + std::to_string(r.gpusPerHost) +
          " free GPUs needed, " + std::to_string(cands.size()) + " available";
    return std::nullopt;
  }
  std::sort(cands.begin(), cands.end(), [&](const ExclusiveCand& a, const ExclusiveCand& b) {
    return std::tie(a.free, name(a)) < std::tie(b.free, name(b));
  });
  std::vector<HostGrant> out;
  int left = r.gpus;
  for (int i = 0; i < n; ++i) {
    const int k = std::min(r.gpusPerHost, left);
    left -= k;
    out.push_back({name(cands[i]), firstFree(s, cands[i].h, use, k)});
  }
  return out;
}

/// Any spread: one host if any fits (the fullest that does), else partial hosts first, most
/// free first.
std::vector<HostGrant> chooseExclusiveAnywhere(const PoolState& s, const AllocationRequest& r,
                                               const GpuUsage& use,
                                               std::vector<ExclusiveCand> cands) {
  auto name = [&](const ExclusiveCand& c) -> const std::string& { return s.hosts[c.h].inv.name; };
  const ExclusiveCand* best = nullptr;
  for (const auto& c : cands)
    if (c.free >= r.gpus &&
        (!best || std::tie(c.free, name(c)) < std::tie(best->free, name(*best))))
      best = &c;
  if (best) return std::vector<HostGrant>{{name(*best), firstFree(s, best->h, use, r.gpus)}};
  std::sort(cands.begin(), cands.end(), [&](const ExclusiveCand& a, const ExclusiveCand& b) {
    return std::make_tuple(!a.partial, -a.free, std::cref(name(a))) <
           std::make_tuple(!b.partial, -b.free, std::cref(name(b)));
  });
  std::vector<HostGrant> out;
  int left = r.gpus;
  for (const auto& c : cands) {
    if (left == 0) break;
    const int k = std::min(c.free, left);
    left -= k;
    out.push_back({name(c), firstFree(s, c.h, use, k)});
  }
  return out;
}

std::optional<std::vector<HostGrant>> chooseExclusive(const PoolState& s,
                                                      const AllocationRequest& r,
                                                      const GpuUsage& use, std::string& why) {
  int total = 0;
  auto cands = exclusiveCandidates(s, use, total);
  if (r.gpusPerHost > 0) return chooseExclusivePerHost(s, r, use, std::move(cands), why);
  if (total < r.gpus) {
    why = "capacity: " + std::to_string(r.gpus) + " free GPUs needed, " + std::to_string(total) +
          " available";
    return std::nullopt;
  }
  return chooseExclusiveAnywhere(s, r, use, std::move(cands));
}

// --- MIG instances ---------------------------------------------------------------------------

struct MigSlot {
  std::size_t h;
  std::size_t p;
  int computeSlices;  ///< of the GPU
  MigProfile prof;
  int hostUsed;  ///< GPUs of the host in any use
};

/// The GPUs that may take instances of `r.sharing`: fullest GPUs first (already partitioned),
/// then the fullest hosts, so that slices pack.
std::vector<MigSlot> migSlots(const PoolState& s, const AllocationRequest& r, const GpuUsage& in,
                              std::optional<std::size_t> onlyHost) {
  std::vector<MigSlot> slots;
  for (std::size_t h = 0; h < s.hosts.size(); ++h) {
    if (!s.usable(h) || (onlyHost && h != *onlyHost)) continue;
    int used = 0;
    for (const auto& g : in[h]) used += g.free() ? 0 : 1;
    for (std::size_t p = 0; p < s.hosts[h].inv.gpus.size(); ++p) {
      const Gpu& g = s.hosts[h].inv.gpus[p];
      if (!g.migCapable || in[h][p].exclusive) continue;
      if (std::find(g.migProfiles.begin(), g.migProfiles.end(), r.sharing) == g.migProfiles.end())
        continue;
      auto prof = parseMigProfile(r.sharing, g);
      if (!prof) continue;
      slots.push_back({h, p, computeSlicesOf(g.model), *prof, used});
    }
  }
  std::sort(slots.begin(), slots.end(), [&](const MigSlot& a, const MigSlot& b) {
    return std::make_tuple(-in[a.h][a.p].compute, -a.hostUsed, std::cref(s.hosts[a.h].inv.name),
                           a.p) < std::make_tuple(-in[b.h][b.p].compute, -b.hostUsed,
                                                  std::cref(s.hosts[b.h].inv.name), b.p);
  });
  return slots;
}

}  // namespace

int trainingPerHost(const PoolState& s, const AllocationRequest& r) {
  if (r.gpusPerHost > 0) return r.gpusPerHost;
  int most = 0;
  for (std::size_t h = 0; h < s.hosts.size(); ++h)
    if (s.usable(h)) most = std::max(most, static_cast<int>(s.hosts[h].inv.gpus.size()));
  return std::max(1, std::min(r.gpus, most));
}

std::optional<std::vector<HostGrant>> chooseMig(const PoolState& s, const AllocationRequest& r,
                                                const GpuUsage& in, std::string& why,
                                                std::optional<std::size_t> onlyHost) {
  const std::vector<MigSlot> slots = migSlots(s, r, in, onlyHost);
  std::map<std::size_t, int> perHost;
  std::map<std::size_t, std::vector<int>> grants;
  std::vector<std::size_t> order;
  int left = r.gpus;
  for (std::size_t i = 0; i < slots.size() && left > 0; ++i) {
    const MigSlot& slot = slots[i];
    GpuUse g = in[slot.h][slot.p];
    while (left > 0 && g.compute + slot.prof.computeSlices <= slot.computeSlices &&
           g.memory + slot.prof.memorySlices <= kMemorySlices &&
           (r.gpusPerHost == 0 || perHost[slot.h] < r.gpusPerHost)) {
      g.compute += slot.prof.computeSlices;
      g.memory += slot.prof.memorySlices;
      ++perHost[slot.h];
      if (!grants.count(slot.h)) order.push_back(slot.h);
      grants[slot.h].push_back(s.hosts[slot.h].inv.gpus[slot.p].index);
      --left;
    }
  }
  if (left > 0) {
    why = "capacity: " + std::to_string(r.gpus) + " MIG " + r.sharing + " instances needed, " +
          std::to_string(r.gpus - left) + " fit";
    return std::nullopt;
  }
  std::vector<HostGrant> out;
  for (std::size_t h : order) out.push_back({s.hosts[h].inv.name, grants[h]});
  return out;
}

std::optional<std::vector<HostGrant>> choose(const PoolState& s, const AllocationRequest& r,
                                             const GpuUsage& use, std::string& why) {
  if (r.jobClass == JobClass::kTraining) return chooseTraining(s, r, use, why);
  if (isExclusive(r)) return chooseExclusive(s, r, use, why);
  return chooseMig(s, r, use, why);
}

}  // namespace ibfabric::scheduler_hooks::pool_impl
