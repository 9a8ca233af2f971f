#include "tests/support/minhop_tables.h"

#include <deque>
#include <map>

#include "discovery/net_topology.h"

namespace ibfabric::testing {

void assignLids(NetFabric& fabric) {
  std::uint16_t next = 1;
  for (auto& node : fabric.nodes) {
    if (node.type == NodeType::kSwitch) node.lid = Lid(next++);
  }
  for (auto& node : fabric.nodes) {
    if (node.type != NodeType::kCa) continue;
    for (auto& port : node.ports) port.lid = Lid(next++);
  }
}

TopologyPtr topologyWithLids(NetFabric fabric) {
  assignLids(fabric);
  fabric.reindex();
  return topologyFromNetFabric(fabric, "memory");
}

routing::ForwardingTablesPtr minHopTables(const TopologyPtr& topology) {
  const Topology& topo = *topology;
  const auto& nodes = topo.nodes();
  std::uint16_t maxLid = 0;
  for (const auto& n : nodes) {
    for (const auto& p : n.ports) {
      if (p) maxLid = std::max(maxLid, p->lid.value());
    }
  }
  std::vector<std::optional<routing::SwitchTable>> tables(nodes.size());
  for (const auto& n : nodes) {
    if (!n.isSwitch()) continue;
    routing::SwitchTable t;
    t.switchGuid = n.guid;
    t.switchLid = n.lid();
    t.linearFdbTop = maxLid;
    t.ports.assign(maxLid + 1u, routing::SwitchTable::kNoPort);
    if (n.lid().value() != 0) t.ports[n.lid().value()] = 0;
    tables[n.index] = std::move(t);
  }
  // CA ports by the switch they hang off.
  std::map<NodeIndex, std::vector<std::pair<Lid, PortNum>>> attached;  // switch -> (lid, port)
  for (const auto& n : nodes) {
    if (!n.isCa()) continue;
    for (const auto& p : n.ports) {
      if (!p || !p->remote || p->lid.value() == 0) continue;
      if (!nodes[p->remote->node].isSwitch()) continue;
      attached[p->remote->node].emplace_back(p->lid, p->remote->port);
    }
  }
  std::vector<int> dist(nodes.size());
  std::vector<std::vector<std::uint8_t>> closer(nodes.size());
  for (const auto& [leaf, cas] : attached) {
    // BFS over switch-to-switch cables from the leaf.
    std::fill(dist.begin(), dist.end(), -1);
    std::deque<NodeIndex> queue{leaf};
    dist[leaf] = 0;
    while (!queue.empty()) {
      NodeIndex s = queue.front();
      queue.pop_front();
      for (const auto& p : nodes[s].ports) {
        if (!p || !p->remote || p->state != PortState::kActive) continue;
        NodeIndex r = p->remote->node;
        if (!nodes[r].isSwitch() || dist[r] >= 0) continue;
        dist[r] = dist[s] + 1;
        queue.push_back(r);
      }
    }
    for (const auto& n : nodes) {
      auto& c = closer[n.index];
      c.clear();
      if (!n.isSwitch() || dist[n.index] <= 0) continue;
      for (std::size_t pn = 1; pn < n.ports.size(); ++pn) {
        const auto& p = n.ports[pn];
        if (!p || !p->remote || p->state != PortState::kActive) continue;
        NodeIndex r = p->remote->node;
        if (nodes[r].isSwitch() && dist[r] == dist[n.index] - 1) {
          c.push_back(static_cast<std::uint8_t>(pn));
        }
      }
    }
    for (const auto& [lid, port] : cas) {
      tables[leaf]->ports[lid.value()] = port.value();
      for (const auto& n : nodes) {
        const auto& c = closer[n.index];
        if (c.empty()) continue;
        tables[n.index]->ports[lid.value()] = c[lid.value() % c.size()];
      }
    }
  }
  return std::make_shared<const routing::ForwardingTables>(topology, std::move(tables), "memory");
}

}  // namespace ibfabric::testing
