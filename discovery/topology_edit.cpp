#include "discovery/topology_edit.h"

#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "discovery/node_name_map.h"

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

}  // namespace

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

  TopologyBuilder b;
  b.reserve(before.nodes().size());
  // Names shown (node-name map applied) are kept through a map of the ones that differ.
  std::ostringstream names;
  bool anyName = false;
  for (const Node& n : before.nodes()) {
    TopologyBuilder::NodeInfo info;
    info.type = n.type;
    info.guid = n.guid;
    info.sysImageGuid = n.sysImageGuid;
    info.nodeDescription = n.nodeDescription;
    info.vendorId = n.vendorId;
    info.deviceId = n.deviceId;
    info.revision = n.revision;
    info.numPorts = n.numPorts;
    b.addNode(info);
    if (n.description != n.nodeDescription && n.description.find('"') == std::string::npos) {
      names << toString(n.guid) << " \"" << n.description << "\"\n";
      anyName = true;
    }
  }
  for (const Node& n : before.nodes()) {
    for (const auto& slot : n.ports) {
      if (!slot) continue;
      Port p = *slot;
      if (auto it = updates.find({n.guid, p.num}); it != updates.end()) {
        p.state = it->second->state;
        p.physState = it->second->physState;
        p.activeRate = it->second->activeRate;
      }
      b.addPort(n.guid, p);
    }
  }
  for (const Link& l : before.links()) {
    const Node& na = before.node(l.a.node);
    const Node& nb = before.node(l.b.node);
    if (removed.count(LinkKey::of(na.guid, l.a.port, nb.guid, l.b.port))) continue;
    b.connect(na.guid, l.a.port, nb.guid, l.b.port);
  }
  for (const auto& k : edit.addLinks) {
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
  if (anyName) {
    b.setNodeNameMap(
        std::make_shared<const NodeNameMap>(NodeNameMap::parse(names.str(), "topology edit")));
  }
  CrawlStats stats = before.stats();
  stats.buildTime = {};
  b.setStats(std::move(stats));
  return b.build();
}

}  // namespace ibfabric
