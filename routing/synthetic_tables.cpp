#include "routing/synthetic_tables.h"

#include <algorithm>
#include <deque>
#include <stdexcept>

#include "routing/shortest_path_reroute.h"

namespace ibfabric::routing {
namespace {

bool up(const Port& p) { return p.connected() && p.state == PortState::kActive; }

/// A destination: its LID, the switch the LID sits on or hangs off, and the egress port there.
struct Dest {
  Lid lid;
  NodeIndex sw;
  PortNum port;
};

/// Which switch-to-switch cables a route may take: up, and not taken out of service.
class Usable {
 public:
  Usable(const Topology& t, const DrainSet* out) : t_(t) {
    if (!out) return;
    switchOut_.assign(t.nodes().size(), 0);
    linkOut_.assign(t.links().size(), 0);
    for (NodeIndex s : out->switches)
      if (s < switchOut_.size()) switchOut_[s] = 1;
    for (std::uint32_t l : out->links)
      if (l < linkOut_.size()) linkOut_[l] = 1;
  }
  /// Port `p` of switch `sw` leads to a switch over a usable cable.
  bool operator()(NodeIndex sw, const Port& p) const {
    if (p.num.value() == 0 || !up(p) || !t_.nodes()[p.remote->node].isSwitch()) return false;
    if (switchOut_.empty()) return true;
    return !switchOut_[sw] && !switchOut_[p.remote->node] && !(p.link && linkOut_[*p.link]);
  }

 private:
  const Topology& t_;
  std::vector<char> switchOut_;  ///< empty: nothing out
  std::vector<char> linkOut_;
};

/// Writes every switch's shortest-path entry for each of `dests` into `byNode` (switches without
/// a table are skipped; a switch that cannot reach the destination gets kNoPort). Among
/// equal-cost ports the destination LID modulo their count picks. Distances and the equal-cost
/// ports depend only on the destination's switch: computed once per switch (dests sorted by it).
void writeShortestPaths(const Topology& t, std::vector<Dest> dests, const Usable& usable,
                        std::vector<std::optional<SwitchTable>>& byNode) {
  const auto& nodes = t.nodes();
  std::stable_sort(dests.begin(), dests.end(),
                   [](const Dest& a, const Dest& b) { return a.sw < b.sw; });
  std::vector<int> dist;
  std::vector<std::uint32_t> first(nodes.size() + 1);  // per switch: first of its ports in `ports`
  std::vector<std::uint8_t> ports;
  NodeIndex root = kNoNode;
  auto prepare = [&](NodeIndex sw) {
    if (sw == root) return;
    root = sw;
    dist.assign(nodes.size(), -1);
    std::deque<NodeIndex> q{root};
    dist[root] = 0;
    while (!q.empty()) {
      NodeIndex s = q.front();
      q.pop_front();
      for (const auto& p : nodes[s].ports) {
        if (!p || !usable(s, *p)) continue;
        NodeIndex r = p->remote->node;
        if (dist[r] >= 0) continue;
        dist[r] = dist[s] + 1;
        q.push_back(r);
      }
    }
    ports.clear();
    for (const Node& n : nodes) {
      first[n.index] = static_cast<std::uint32_t>(ports.size());
      if (!n.isSwitch() || n.index == root || dist[n.index] < 0) continue;
      for (const auto& p : n.ports)
        if (p && usable(n.index, *p) && dist[p->remote->node] == dist[n.index] - 1)
          ports.push_back(p->num.value());
    }
    first[nodes.size()] = static_cast<std::uint32_t>(ports.size());
  };

  for (const Dest& d : dests) {
    prepare(d.sw);
    const std::size_t lid = d.lid.value();
    for (const Node& n : nodes) {
      if (!n.isSwitch() || !byNode[n.index]) continue;
      SwitchTable& table = *byNode[n.index];
      if (lid >= table.ports.size()) {
        table.ports.resize(lid + 1, SwitchTable::kNoPort);
        table.linearFdbTop = static_cast<std::uint16_t>(lid);
      }
      std::uint8_t port = SwitchTable::kNoPort;
      if (n.index == d.sw) {
        port = d.port.value();
      } else if (const std::uint32_t count = first[n.index + 1] - first[n.index]; count > 0) {
        port = ports[first[n.index] + lid % count];
      }
      table.ports[lid] = port;
    }
  }
}

}  // namespace

ForwardingTablesPtr computeShortestPathTables(TopologyPtr topology) {
  const auto& nodes = topology->nodes();
  std::vector<std::optional<SwitchTable>> byNode(nodes.size());
  std::uint16_t top = 0;
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
  writeShortestPaths(*topology, std::move(dests), Usable(*topology, nullptr), byNode);
  return std::make_shared<ForwardingTables>(std::move(topology), std::move(byNode), "memory");
}

ForwardingTablesPtr rerouteShortestPaths(const ForwardingTables& tables,
                                         const std::vector<Lid>& destinations,
                                         const DrainSet& out) {
  const TopologyPtr& topology = tables.topology();
  if (!topology) throw std::invalid_argument("reroute: the tables have no topology");
  const Topology& t = *topology;
  std::vector<std::optional<SwitchTable>> byNode(t.nodes().size());
  for (const Node& n : t.nodes())
    if (const SwitchTable* table = tables.table(n.index)) byNode[n.index] = *table;
  std::vector<Dest> dests;
  dests.reserve(destinations.size());
  for (const Lid lid : destinations) {
    const auto ref = t.findLid(lid);
    if (!ref) continue;
    const Node& n = t.node(ref->node);
    if (n.isSwitch()) {
      dests.push_back({lid, n.index, PortNum{0}});
      continue;
    }
    const Port* p = n.port(ref->port);
    if (!p || !p->remote || !t.node(p->remote->node).isSwitch()) continue;
    dests.push_back({lid, p->remote->node, p->remote->port});
  }
  writeShortestPaths(t, std::move(dests), Usable(t, &out), byNode);
  return std::make_shared<ForwardingTables>(topology, std::move(byNode),
                                            tables.source() + " rerouted");
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
