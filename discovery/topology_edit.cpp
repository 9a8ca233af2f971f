#include "discovery/topology_edit.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

namespace ibfabric {
namespace {

using End = std::pair<Guid, PortNum>;

const Port& requirePort(const Topology& t, Guid node, PortNum port, const char* what) {
  const Node* n = t.findNode(node);
  if (!n) throw std::invalid_argument(std::string(what) + ": no node " + toString(node));
  const Port* p = n->port(port);
  if (!p) {
    throw std::invalid_argument(std::string(what) + ": node " + toString(node) + " has no port " +
                                std::to_string(port.value()));
  }
  return *p;
}

/// `t` has the cable `key` (present or missing).
bool modelHas(const Topology& t, const LinkKey& key) {
  const Node* n = t.findNode(key.guidA);
  const Port* p = n ? n->port(key.portA) : nullptr;
  if (!p || !p->link) return false;
  const Link& l = t.links()[*p->link];
  return LinkKey::of(t.node(l.a.node).guid, l.a.port, t.node(l.b.node).guid, l.b.port) == key;
}

}  // namespace

TopologyBuilder::NodeInfo nodeInfoOf(const Node& n) {
  TopologyBuilder::NodeInfo info;
  info.type = n.type;
  info.guid = n.guid;
  info.sysImageGuid = n.sysImageGuid;
  info.nodeDescription = n.nodeDescription;
  info.vendorId = n.vendorId;
  info.deviceId = n.deviceId;
  info.revision = n.revision;
  info.numPorts = n.numPorts;
  return info;
}

TopologyPtr applyTopologyEdit(const Topology& before, const TopologyEdit& edit) {
  std::map<End, const PortStateUpdate*> updates;
  for (const auto& u : edit.ports) {
    requirePort(before, u.node, u.port, "port update");
    updates[{u.node, u.port}] = &u;
  }
  std::set<LinkKey> removed;
  for (const auto& k : edit.removeLinks) {
    requirePort(before, k.guidA, k.portA, "cable removal");
    requirePort(before, k.guidB, k.portB, "cable removal");
    removed.insert(LinkKey::of(k.guidA, k.portA, k.guidB, k.portB));
  }

  std::set<Guid> back;
  for (const Guid g : edit.nodesBack) {
    const Node* n = before.findNode(g);
    if (!n || !n->missing)
      throw std::invalid_argument("node back: " + toString(g) + " is not a missing node");
    back.insert(g);
  }

  TopologyBuilder b;
  b.reserve(before.nodes().size());
  for (const Node& n : before.nodes()) {
    const TopologyBuilder::NodeInfo info = nodeInfoOf(n);
    b.addNode(info);
    b.setDescription(n.guid, n.description);  // node-name map names kept
    if (n.missing && !back.count(n.guid)) b.markMissing(n.guid, *n.missing);
  }
  for (const Node& n : before.nodes()) {
    for (const auto& slot : n.ports) {
      if (!slot) continue;
      Port p = *slot;
      if (auto it = updates.find({n.guid, p.num}); it != updates.end()) {
        p.state = it->second->state;
        p.physState = it->second->physState;
        p.activeRate = it->second->activeRate;
        if (it->second->lid) p.lid = *it->second->lid;
      }
      b.addPort(n.guid, p);
    }
  }
  // Cables the model remembers as missing are back when added, or when both ends come up.
  std::set<LinkKey> cablesBack;
  for (const auto& k : edit.addLinks)
    cablesBack.insert(LinkKey::of(k.guidA, k.portA, k.guidB, k.portB));
  for (const Link& l : before.links()) {
    const Node& na = before.node(l.a.node);
    const Node& nb = before.node(l.b.node);
    const LinkKey key = LinkKey::of(na.guid, l.a.port, nb.guid, l.b.port);
    if (removed.count(key)) continue;
    auto upNow = [&](Guid g, PortNum p) {
      auto it = updates.find({g, p});
      return it != updates.end() && it->second->state == PortState::kActive;
    };
    if (l.missing &&
        (cablesBack.count(key) || (upNow(na.guid, l.a.port) && upNow(nb.guid, l.b.port)))) {
      b.connect(na.guid, l.a.port, nb.guid, l.b.port);
      continue;
    }
    if (l.missing)
      b.connectMissing(na.guid, l.a.port, nb.guid, l.b.port, *l.missing);
    else
      b.connect(na.guid, l.a.port, nb.guid, l.b.port);
  }
  for (const auto& k : edit.addLinks) {
    const LinkKey key = LinkKey::of(k.guidA, k.portA, k.guidB, k.portB);
    if (!removed.count(key) && modelHas(before, key)) continue;  // was missing: connected above
    for (auto [g, p] : {End{k.guidA, k.portA}, End{k.guidB, k.portB}}) {
      const Port& port = requirePort(before, g, p, "cable addition");
      if (!port.remote) continue;
      const Node& rn = before.node(port.remote->node);
      if (!removed.count(LinkKey::of(g, p, rn.guid, port.remote->port))) {
        throw std::invalid_argument("cable addition: port " + std::to_string(p.value()) + " of " +
                                    toString(g) + " is already cabled");
      }
    }
    b.connect(k.guidA, k.portA, k.guidB, k.portB);
  }
  CrawlStats stats = before.stats();
  stats.buildTime = {};
  b.setStats(std::move(stats));
  return b.build();
}

}  // namespace ibfabric
