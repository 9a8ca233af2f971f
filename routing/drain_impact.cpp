#include "routing/drain_impact.h"

#include <map>

namespace ibfabric::routing {
namespace {

/// The cable at `port` of `node` is out of service: drained itself, or its other end's switch.
bool drainedCable(const DrainSet& d, const Port& port) {
  if (!port.link || !port.remote) return false;
  return d.links.count(*port.link) > 0 || d.switches.count(port.remote->node) > 0;
}

/// Up-link loss of one leaf (its ports towards the core).
UplinkLoss leafUplinks(const Topology& t, const DrainSet& d, const Node& leaf) {
  UplinkLoss u;
  u.leaf = leaf.index;
  u.group = leaf.group;
  for (const auto& p : leaf.ports) {
    if (!p || p->direction != PortDirection::kUp || !p->link) continue;
    const Link& l = t.links()[*p->link];
    if (l.missing) continue;  // already out: not this maintenance's loss
    ++u.upLinks;
    u.gbps += l.gbps();
    if (d.switches.count(leaf.index) || drainedCable(d, *p)) {
      ++u.drained;
      u.gbpsLost += l.gbps();
    }
  }
  return u;
}

/// Why HCA `ca` is lost with the drain, or "" when it is not.
std::string lossOf(const Topology& t, const DrainSet& d, const Node& ca,
                   const std::map<NodeIndex, UplinkLoss>& leaves) {
  for (const auto& p : ca.ports) {
    if (!p || !p->remote || !p->link || t.links()[*p->link].missing) continue;
    if (d.links.count(*p->link)) return "cable drained";
    const NodeIndex leaf = p->remote->node;
    if (d.switches.count(leaf)) return "leaf drained";
    const auto it = leaves.find(leaf);
    if (it != leaves.end() && it->second.upLinks > 0 && it->second.drained == it->second.upLinks)
      return "leaf keeps no up-link";
    return "";
  }
  return "";  // not cabled now: not this maintenance's loss
}

/// Destinations whose forwarding entries, on switches that stay, point into the drained parts.
void reroutes(const Topology& t, const ForwardingTables& tables, const DrainSet& d,
              const std::set<Lid>& lostLids, DrainImpact& out) {
  std::vector<Lid> destinations;
  for (const Node& n : t.nodes()) {
    if (!n.isCa() || n.missing) continue;
    for (const auto& p : n.ports)
      if (p && p->lid.value() != 0 && !lostLids.count(p->lid)) destinations.push_back(p->lid);
  }
  std::set<Lid> hit;
  for (const Node& sw : t.nodes()) {
    if (!sw.isSwitch() || d.switches.count(sw.index)) continue;
    const SwitchTable* table = tables.table(sw.index);
    if (!table) continue;
    for (const Lid dst : destinations) {
      const auto egress = table->egress(dst);
      if (!egress) continue;
      const Port* p = sw.port(*egress);
      if (!p || !drainedCable(d, *p)) continue;
      ++out.rerouteEntries;
      hit.insert(dst);
    }
  }
  out.reroute.assign(hit.begin(), hit.end());
}

}  // namespace

std::size_t DrainImpact::hcasLost() const {
  std::size_t n = 0;
  for (const auto& h : hosts) n += h.lost.size();
  return n;
}

std::size_t DrainImpact::hostsCutOff() const {
  std::size_t n = 0;
  for (const auto& h : hosts) n += h.cutOff();
  return n;
}

DrainImpact drainImpact(const Topology& topology, const ForwardingTables* tables,
                        const DrainSet& drain) {
  DrainImpact out;
  std::map<NodeIndex, UplinkLoss> leaves;
  std::map<int, UplinkLoss> groups;
  for (const Node& n : topology.nodes()) {
    if (!n.isSwitch() || n.level != kLeafLevel) continue;
    const UplinkLoss u = leafUplinks(topology, drain, n);
    leaves[n.index] = u;
    if (n.group < 0) continue;
    UplinkLoss& g = groups[n.group];
    g.group = n.group;
    g.upLinks += u.upLinks;
    g.drained += u.drained;
    g.gbps += u.gbps;
    g.gbpsLost += u.gbpsLost;
  }
  for (const auto& [index, u] : leaves)
    if (u.drained > 0) out.leaves.push_back(u);
  for (const auto& [index, g] : groups)
    if (g.drained > 0) out.groups.push_back(g);

  std::set<Lid> lostLids;
  for (std::uint32_t h = 0; h < topology.hosts().size(); ++h) {
    const Host& host = topology.hosts()[h];
    HostDrainImpact impact;
    impact.host = h;
    impact.hcas = host.hcas.size();
    for (NodeIndex c : host.hcas) {
      const Node& ca = topology.node(c);
      std::string why = lossOf(topology, drain, ca, leaves);
      if (why.empty()) continue;
      impact.lost.push_back({c, ca.rail, std::move(why)});
      for (const auto& p : ca.ports)
        if (p && p->lid.value() != 0) lostLids.insert(p->lid);
    }
    if (!impact.lost.empty()) out.hosts.push_back(std::move(impact));
  }
  if (tables) {
    out.routesKnown = true;
    reroutes(topology, *tables, drain, lostLids, out);
  }
  return out;
}

std::vector<char> linksOutOfService(const Topology& topology, const DrainSet& drain) {
  std::vector<char> out(topology.links().size(), 0);
  for (std::uint32_t l : drain.links)
    if (l < out.size()) out[l] = 1;
  for (NodeIndex s : drain.switches) {
    if (s >= topology.nodes().size()) continue;
    for (const auto& p : topology.node(s).ports)
      if (p && p->link && *p->link < out.size()) out[*p->link] = 1;
  }
  return out;
}

DrainSet rebaseDrain(const Topology& from, const DrainSet& drain, const Topology& to) {
  if (&from == &to) return drain;
  DrainSet out;
  for (NodeIndex s : drain.switches)
    if (const Node* n = to.findNode(from.node(s).guid)) out.switches.insert(n->index);
  for (std::uint32_t l : drain.links) {
    const Link& link = from.links().at(l);
    for (const PortRef end : {link.a, link.b}) {
      const Node* n = to.findNode(from.node(end.node).guid);
      const Port* p = n ? n->port(end.port) : nullptr;
      if (!p || !p->link) continue;
      out.links.insert(*p->link);
      break;
    }
  }
  return out;
}

}  // namespace ibfabric::routing
