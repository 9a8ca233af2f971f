#include "routing/synthetic_tables.h"

#include <algorithm>
#include <deque>

namespace ibfabric::routing {
namespace {

bool up(const Port& p) { return p.connected() && p.state == PortState::kActive; }

}  // namespace

ForwardingTablesPtr computeShortestPathTables(TopologyPtr topology) {
  const auto& nodes = topology->nodes();
  std::vector<std::optional<SwitchTable>> byNode(nodes.size());
  std::uint16_t top = 0;
  // Destinations: (lid, switch the LID sits on or hangs off, egress port there).
  struct Dest {
    Lid lid;
    NodeIndex sw;
    PortNum port;
  };
  std::vector<Dest> dests;
  for (const Node& n : nodes) {
    if (n.isSwitch()) {
      if (const Port* p0 = n.port(PortNum{0}); p0 && p0->lid.value() != 0) {
        dests.push_back({p0->lid, n.index, PortNum{0}});
      }
      continue;
    }
    for (const auto& p : n.ports) {
      if (!p || !up(*p) || p->lid.value() == 0) continue;
      const PortRef r = *p->remote;
      if (!nodes[r.node].isSwitch()) continue;
      const unsigned span = 1u << std::min<unsigned>(p->lmc, 7);
      for (unsigned k = 0; k < span; ++k) {
        dests.push_back({Lid(static_cast<std::uint16_t>(p->lid.value() + k)), r.node, r.port});
      }
    }
  }
  for (const Dest& d : dests) top = std::max(top, d.lid.value());
  for (const Node& n : nodes) {
    if (!n.isSwitch()) continue;
    SwitchTable t;
    t.switchGuid = n.guid;
    t.switchLid = n.lid();
    t.linearFdbTop = top;
    t.ports.assign(top + 1u, SwitchTable::kNoPort);
    byNode[n.index] = std::move(t);
  }

  // Distances depend only on the destination switch: BFS once per switch (dests sorted by it).
  std::stable_sort(dests.begin(), dests.end(),
                   [](const Dest& a, const Dest& b) { return a.sw < b.sw; });
  std::vector<int> dist;
  NodeIndex root = kNoNode;
  auto distances = [&](NodeIndex sw) -> const std::vector<int>& {
    if (sw == root) return dist;
    root = sw;
    dist.assign(nodes.size(), -1);
    std::deque<NodeIndex> q{root};
    dist[root] = 0;
    while (!q.empty()) {
      NodeIndex s = q.front();
      q.pop_front();
      for (const auto& p : nodes[s].ports) {
        if (!p || p->num.value() == 0 || !up(*p)) continue;
        NodeIndex r = p->remote->node;
        if (!nodes[r].isSwitch() || dist[r] >= 0) continue;
        dist[r] = dist[s] + 1;
        q.push_back(r);
      }
    }
    return dist;
  };

  std::vector<PortNum> candidates;
  for (const Dest& d : dests) {
    const auto& dd = distances(d.sw);
    byNode[d.sw]->ports[d.lid.value()] = d.port.value();
    for (const Node& n : nodes) {
      if (!n.isSwitch() || n.index == d.sw || dd[n.index] < 0) continue;
      candidates.clear();
      for (const auto& p : n.ports) {
        if (!p || p->num.value() == 0 || !up(*p)) continue;
        NodeIndex r = p->remote->node;
        if (nodes[r].isSwitch() && dd[r] == dd[n.index] - 1) candidates.push_back(p->num);
      }
      if (candidates.empty()) continue;
      byNode[n.index]->ports[d.lid.value()] = candidates[d.lid.value() % candidates.size()].value();
    }
  }
  return std::make_shared<ForwardingTables>(std::move(topology), std::move(byNode), "memory");
}

void assignSequentialLids(NetFabric& fabric) {
  std::uint16_t next = 1;
  for (NetNode& n : fabric.nodes) {
    if (n.type == NodeType::kSwitch) {
      if (!n.lid) n.lid = Lid(next++);
      continue;
    }
    for (NetPort& p : n.ports) {
      if (!p.lid) p.lid = Lid(next++);
    }
  }
}

}  // namespace ibfabric::routing
