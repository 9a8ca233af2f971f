// The fabric join: host health from topology snapshots and from fabric events.
#include "scheduler_hooks/pool/fabric_join.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ibfabric::scheduler_hooks::pool_impl {
namespace {

/// The health an event puts on an HCA; `clears` when it ends a fault instead.
HostHealth faultOf(telemetry::EventType t, bool& clears) {
  using E = telemetry::EventType;
  clears = false;
  switch (t) {
    case E::kLinkDown:
    case E::kPortGone:
    case E::kPortUnreachable:
      return HostHealth::kDown;
    case E::kFlapping:
    case E::kErrorThreshold:
      return HostHealth::kFaulty;
    case E::kLinkDegraded:
      return HostHealth::kDegraded;
    case E::kLinkUp:
    case E::kLinkRecovered:
      clears = true;
      return HostHealth::kOk;
    default:
      return HostHealth::kOk;
  }
}

/// Joins one HCA node of host `idx`: owner, leaves, group, rails and its topology fault.
void joinHca(PoolState& s, std::size_t idx, const Node& n, std::set<std::string>& present) {
  HostEntry& e = s.hosts[idx];
  const Topology& t = *s.topology;
  const std::string hca = n.hcaIndex >= 0 ? "mlx5_" + std::to_string(n.hcaIndex) : toString(n.guid);
  s.hcaOwner[n.guid] = {idx, hca};
  bool active = false, slow = false;
  for (const auto& p : n.ports) {
    if (!p || !p->remote) continue;
    active = active || p->state == PortState::kActive;
    if (p->link && t.links()[*p->link].belowEnabled()) slow = true;
    const Node& peer = t.node(p->remote->node);
    if (peer.isSwitch()) {
      if (std::find(e.leaves.begin(), e.leaves.end(), peer.guid) == e.leaves.end())
        e.leaves.push_back(peer.guid);
      e.group = peer.group;
    }
  }
  present.insert(hca);
  e.seenHcas.insert(hca);
  for (std::size_t p = 0; p < e.inv.gpus.size(); ++p)
    if (e.inv.gpus[p].hca == hca) e.rails[p] = n.rail;
  auto f = e.faults.find(hca);
  if (!active)
    e.faults[hca] = Fault{HostHealth::kDown, e.inv.name + ": HCA " + hca + " link down", true};
  else if (slow)
    e.faults[hca] = Fault{HostHealth::kDegraded,
                          e.inv.name + ": HCA " + hca + " link below its enabled rate", true};
  else if (f != e.faults.end() && (f->second.fromTopology || f->second.health == HostHealth::kDown))
    e.faults.erase(f);
}

/// The inventory host and HCA name of an event end: by HCA GUID, else from a "<host> mlx5_<n>"
/// node description.
std::optional<std::pair<std::size_t, std::string>> ownerOf(const PoolState& s,
                                                           const telemetry::EventEnd& end) {
  if (auto it = s.hcaOwner.find(end.node); it != s.hcaOwner.end()) return it->second;
  auto sp = end.description.find(' ');
  if (sp == std::string::npos) return std::nullopt;
  auto h = s.byName.find(end.description.substr(0, sp));
  if (h == s.byName.end()) return std::nullopt;
  return std::make_pair(h->second, end.description.substr(sp + 1));
}

}  // namespace

void joinHost(PoolState& s, std::size_t idx) {
  HostEntry& e = s.hosts[idx];
  const Host* th = s.topology->findHost(e.inv.name);
  if (!th) {
    if (e.known)
      e.faults["host"] = Fault{HostHealth::kDown, e.inv.name + ": no longer in the fabric", true};
    return;
  }
  e.known = true;
  e.faults.erase("host");
  e.leaves.clear();
  e.group = -1;
  std::set<std::string> present;
  for (NodeIndex ni : th->hcas) joinHca(s, idx, s.topology->node(ni), present);
  for (const auto& hca : e.seenHcas)
    if (!present.count(hca))
      e.faults[hca] =
          Fault{HostHealth::kDown,
                e.inv.name + ": HCA " + hca + " link down (gone from the fabric)", true};
}

bool applyFabricEvent(PoolState& s, const telemetry::Event& event) {
  bool clears = false;
  const HostHealth health = faultOf(event.type, clears);
  if (health == HostHealth::kOk && !clears) return false;
  std::vector<telemetry::EventEnd> ends = {event.end};
  if (event.remote) ends.push_back(*event.remote);
  bool changed = false;
  for (const auto& end : ends) {
    const auto owner = ownerOf(s, end);
    if (!owner) continue;
    HostEntry& e = s.hosts[owner->first];
    if (clears) {
      auto f = e.faults.find(owner->second);
      if (f != e.faults.end() && !f->second.fromTopology) {
        e.faults.erase(f);
        changed = true;
      }
      continue;
    }
    Fault& f = e.faults[owner->second];
    if (f.health < health) {
      f = Fault{health,
                e.inv.name + ": HCA " + owner->second + " " +
                    std::string(telemetry::toString(event.type)) +
                    (event.message.empty() ? "" : " (" + event.message + ")"),
                false};
      changed = true;
    }
  }
  return changed;
}

}  // namespace ibfabric::scheduler_hooks::pool_impl
