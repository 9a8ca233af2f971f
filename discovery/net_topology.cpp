#include "discovery/net_topology.h"

#include <cstdio>
#include <stdexcept>
#include <unordered_map>

namespace ibfabric {
namespace {

WidthMask widthMask(const std::optional<LinkRate>& r) {
  return r ? static_cast<WidthMask>(r->width) : 0;
}
SpeedMask speedMask(const std::optional<LinkRate>& r) { return r ? speedBit(r->speed) : 0; }

}  // namespace

TopologyPtr topologyFromNetFabric(const NetFabric& fabric, std::string source) {
  auto started = std::chrono::steady_clock::now();
  TopologyBuilder b;
  b.reserve(fabric.nodes.size());
  std::unordered_map<std::string_view, Guid> guidOf;
  guidOf.reserve(fabric.nodes.size());
  std::uint64_t nextSwitch = 0x200000, nextCa = 0x100000;
  for (const NetNode& n : fabric.nodes) {
    Guid guid;
    if (n.guid) {
      guid = *n.guid;
    } else if (n.type == NodeType::kSwitch) {
      guid = Guid{nextSwitch++};
    } else {
      guid = Guid{nextCa};
      nextCa += std::uint64_t(n.numPorts) + 1;
    }
    guidOf.emplace(n.id, guid);
    TopologyBuilder::NodeInfo info;
    info.type = n.type;
    info.guid = guid;
    info.sysImageGuid = n.sysImageGuid.value_or(guid);
    info.nodeDescription = n.desc;
    info.vendorId = n.vendorId.value_or(0);
    info.deviceId = n.deviceId.value_or(0);
    info.numPorts = n.numPorts;
    b.addNode(info);
    if (n.type == NodeType::kSwitch) {
      Port p0;
      p0.num = PortNum{0};
      p0.guid = guid;
      p0.lid = n.lid.value_or(Lid{});
      p0.state = PortState::kActive;
      p0.physState = PhysPortState::kLinkUp;
      b.addPort(guid, p0);
    }
  }
  for (const NetNode& n : fabric.nodes) {
    Guid guid = guidOf.at(n.id);
    for (const NetPort& np : n.ports) {
      auto remote = guidOf.find(np.remoteId);
      if (remote == guidOf.end())
        throw std::invalid_argument("net fabric: " + n.id + " cables to unknown node " +
                                    np.remoteId);
      Port p;
      p.num = np.port;
      if (n.type == NodeType::kSwitch)
        p.guid = guid;
      else
        p.guid = np.portGuid.value_or(Guid{guid.value() + np.port.value()});
      p.lid = n.type == NodeType::kSwitch ? n.lid.value_or(Lid{}) : np.lid.value_or(Lid{});
      p.state = PortState::kActive;
      p.physState = PhysPortState::kLinkUp;
      p.activeRate = np.rate;
      p.widthSupported = p.widthEnabled = widthMask(np.rate);
      p.speedSupported = p.speedEnabled = speedMask(np.rate);
      b.addPort(guid, p);
      if (std::pair(guid, np.port) <= std::pair(remote->second, np.remotePort))
        b.connect(guid, np.port, remote->second, np.remotePort);
    }
  }
  CrawlStats stats;
  stats.source = std::move(source);
  stats.buildTime = std::chrono::steady_clock::now() - started;
  b.setStats(std::move(stats));
  return b.build();
}

std::string netNodeId(const Node& node) {
  char buf[32];
  char prefix = node.isSwitch() ? 'S' : node.isCa() ? 'H' : 'R';
  std::snprintf(buf, sizeof buf, "%c-%016llx", prefix,
                static_cast<unsigned long long>(node.guid.value()));
  return buf;
}

NetFabric netFabricFromTopology(const Topology& topology) {
  NetFabric out;
  out.nodes.reserve(topology.nodes().size());
  std::vector<std::string> ids;
  ids.reserve(topology.nodes().size());
  for (const Node& n : topology.nodes()) ids.push_back(netNodeId(n));
  for (const Node& n : topology.nodes()) {
    NetNode nn;
    nn.type = n.type;
    nn.numPorts = n.numPorts;
    nn.id = ids[n.index];
    nn.desc = n.description;
    nn.guid = n.guid;
    nn.sysImageGuid = n.sysImageGuid;
    nn.vendorId = n.vendorId;
    nn.deviceId = n.deviceId;
    if (n.isSwitch() && n.lid() != Lid{}) nn.lid = n.lid();
    for (const auto& p : n.ports) {
      if (!p || !p->remote) continue;
      const Node& r = topology.node(p->remote->node);
      const Port* rp = r.port(p->remote->port);
      NetPort np;
      np.port = p->num;
      np.remoteId = ids[r.index];
      np.remotePort = p->remote->port;
      if (!r.isSwitch() && rp) np.remotePortGuid = rp->guid;
      np.remoteDesc = r.description;
      np.rate = p->activeRate;
      if (!n.isSwitch()) {
        np.portGuid = p->guid;
        if (p->lid != Lid{}) np.lid = p->lid;
      }
      Lid rl = rp ? rp->lid : Lid{};
      if (rl != Lid{}) np.remoteLid = rl;
      nn.ports.push_back(std::move(np));
    }
    out.nodes.push_back(std::move(nn));
  }
  out.reindex();
  return out;
}

}  // namespace ibfabric
