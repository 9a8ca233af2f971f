// The pool's host list: installing inventory hosts and viewing them.
#include "scheduler_hooks/pool/host_registry.h"

#include <algorithm>
#include <map>
#include <string>

#include "scheduler_hooks/pool/fabric_join.h"
#include "scheduler_hooks/pool/usage_accounting.h"

namespace ibfabric::scheduler_hooks::pool_impl {

void checkHostChange(const PoolState& s, const PoolHost& host) {
  auto it = s.byName.find(host.name);
  if (it == s.byName.end() || s.hosts[it->second].inv == host) return;
  for (const auto& [id, a] : s.allocations)
    for (const auto& g : a.hosts)
      if (g.host == host.name)
        throw PoolError(PoolError::Kind::kConflict, "host " + host.name + " has allocations (" +
                                                        id +
                                                        "): free them before changing its GPUs");
}

void installHost(PoolState& s, PoolHost host) {
  auto it = s.byName.find(host.name);
  if (it == s.byName.end()) {
    s.byName[host.name] = s.hosts.size();
    HostEntry e;
    e.inv = std::move(host);
    e.rails.assign(e.inv.gpus.size(), -1);
    s.gpuUse.emplace_back(e.inv.gpus.size());
    s.hosts.push_back(std::move(e));
    if (s.topology) joinHost(s, s.hosts.size() - 1);
    return;
  }
  HostEntry& e = s.hosts[it->second];
  e.inv = std::move(host);
  e.rails.assign(e.inv.gpus.size(), -1);
  s.gpuUse[it->second].assign(e.inv.gpus.size(), GpuUse{});
  for (const auto& [id, a] : s.allocations)
    for (const auto& g : a.hosts)
      if (g.host == e.inv.name) {
        Allocation one = a;
        one.hosts = {g};
        applyGrant(s, one, +1, &s.gpuUse);
      }
  if (s.topology) joinHost(s, it->second);
}

std::vector<PoolHostView> hostViews(const PoolState& s) {
  std::vector<PoolHostView> out;
  std::map<std::string, std::vector<std::string>> jobs;
  for (const auto& [id, a] : s.allocations)
    for (const auto& g : a.hosts) jobs[g.host].push_back(id);
  for (std::size_t i = 0; i < s.hosts.size(); ++i) {
    const HostEntry& e = s.hosts[i];
    PoolHostView v;
    v.host = e.inv;
    v.inFabric = e.known;
    v.health = e.health();
    v.healthReason = e.known ? e.reason() : e.inv.name + ": unknown to the fabric (not used)";
    v.rails = e.rails;
    v.freeGpus = freeGpus(i, s.gpuUse);
    v.allocations = jobs[e.inv.name];
    out.push_back(std::move(v));
  }
  std::sort(out.begin(), out.end(),
            [](const PoolHostView& a, const PoolHostView& b) { return a.host.name < b.host.name; });
  return out;
}

}  // namespace ibfabric::scheduler_hooks::pool_impl
