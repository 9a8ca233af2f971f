#include "discovery/topology.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <tuple>

#include "discovery/fat_tree.h"
#include "discovery/node_name_map.h"

namespace ibfabric {

std::string_view toString(PortState s) {
  switch (s) {
    case PortState::kNoChange:
      return "NoChange";
    case PortState::kDown:
      return "Down";
    case PortState::kInit:
      return "Initialize";
    case PortState::kArmed:
      return "Armed";
    case PortState::kActive:
      return "Active";
  }
  return "Unknown";
}

std::string_view toString(PhysPortState s) {
  switch (s) {
    case PhysPortState::kNoChange:
      return "NoChange";
    case PhysPortState::kSleep:
      return "Sleep";
    case PhysPortState::kPolling:
      return "Polling";
    case PhysPortState::kDisabled:
      return "Disabled";
    case PhysPortState::kPortConfigurationTraining:
      return "PortConfigurationTraining";
    case PhysPortState::kLinkUp:
      return "LinkUp";
    case PhysPortState::kLinkErrorRecovery:
      return "LinkErrorRecovery";
    case PhysPortState::kPhyTest:
      return "PhyTest";
  }
  return "Unknown";
}

std::string_view toString(LinkActivity a) {
  switch (a) {
    case LinkActivity::kDown:
      return "down";
    case LinkActivity::kInit:
      return "init";
    case LinkActivity::kActive:
      return "active";
  }
  return "unknown";
}

bool physicallyLinked(PortState state, PhysPortState phys) {
  return phys == PhysPortState::kLinkUp || state == PortState::kInit ||
         state == PortState::kArmed || state == PortState::kActive;
}

LinkActivity linkActivity(PortState a, PhysPortState physA, PortState b, PhysPortState physB) {
  if (!physicallyLinked(a, physA) || !physicallyLinked(b, physB)) return LinkActivity::kDown;
  return a == PortState::kActive && b == PortState::kActive ? LinkActivity::kActive
                                                            : LinkActivity::kInit;
}

std::string_view toString(PortDirection d) {
  switch (d) {
    case PortDirection::kNone:
      return "none";
    case PortDirection::kDown:
      return "down";
    case PortDirection::kUp:
      return "up";
    case PortDirection::kPeer:
      return "peer";
  }
  return "none";
}

std::optional<LinkWidth> widestWidth(WidthMask m) {
  // Widest first.
  for (LinkWidth w :
       {LinkWidth::k12x, LinkWidth::k8x, LinkWidth::k4x, LinkWidth::k2x, LinkWidth::k1x})
    if (hasWidth(m, w)) return w;
  return std::nullopt;
}

std::optional<LinkSpeed> fastestSpeed(SpeedMask m) {
  for (int s = static_cast<int>(LinkSpeed::kXdr); s >= 0; --s)
    if (hasSpeed(m, static_cast<LinkSpeed>(s))) return static_cast<LinkSpeed>(s);
  return std::nullopt;
}

Lid Node::lid() const {
  if (isSwitch()) return ports.empty() || !ports[0] ? Lid{} : ports[0]->lid;
  for (const auto& p : ports)
    if (p) return p->lid;
  return Lid{};
}

bool Link::belowEnabled() const {
  if (!rate || !enabledRate) return false;
  return lanes(rate->width) < lanes(enabledRate->width) || rate->speed < enabledRate->speed;
}

const Port* Topology::port(PortRef ref) const {
  if (ref.node >= nodes_.size()) return nullptr;
  return nodes_[ref.node].port(ref.port);
}

LinkActivity Topology::activity(const Link& link) const {
  const Port* a = port(link.a);
  const Port* b = port(link.b);
  if (link.missing || !a || !b) return LinkActivity::kDown;
  return linkActivity(a->state, a->physState, b->state, b->physState);
}

const Port* Topology::remote(PortRef ref) const {
  const Port* p = port(ref);
  return p && p->remote ? port(*p->remote) : nullptr;
}

const Node* Topology::findNode(Guid nodeGuid) const {
  auto it = byNodeGuid_.find(nodeGuid);
  return it == byNodeGuid_.end() ? nullptr : &nodes_[it->second];
}

std::optional<PortRef> Topology::findPort(Guid portGuid) const {
  auto it = byPortGuid_.find(portGuid);
  if (it == byPortGuid_.end()) return std::nullopt;
  return it->second;
}

std::optional<PortRef> Topology::findLid(Lid lid) const {
  auto it = byLid_.find(lid);
  if (it == byLid_.end()) return std::nullopt;
  return it->second;
}

const Host* Topology::findHost(std::string_view name) const {
  auto it = byHostName_.find(std::string(name));
  return it == byHostName_.end() ? nullptr : &hosts_[it->second];
}

std::vector<NodeIndex> Topology::nodesAtLevel(int level) const {
  std::vector<NodeIndex> out;
  for (const Node& n : nodes_)
    if (n.level == level) out.push_back(n.index);
  return out;
}

// ---------------------------------------------------------------------------------------------

struct TopologyBuilder::Impl {
  struct Cable {
    Guid a;
    PortNum pa;
    Guid b;
    PortNum pb;
    std::optional<Absence> missing;
  };
  std::vector<Node> nodes;
  std::unordered_map<Guid, std::size_t> byGuid;
  std::vector<Cable> cables;
  std::shared_ptr<const NodeNameMap> nameMap;
  CrawlStats stats;

  Node& nodeFor(Guid guid) {
    auto it = byGuid.find(guid);
    if (it == byGuid.end()) throw std::invalid_argument("topology: unknown node " + toString(guid));
    return nodes[it->second];
  }
};

TopologyBuilder::TopologyBuilder() : impl_(std::make_unique<Impl>()) {}
TopologyBuilder::~TopologyBuilder() = default;
TopologyBuilder::TopologyBuilder(TopologyBuilder&&) noexcept = default;
TopologyBuilder& TopologyBuilder::operator=(TopologyBuilder&&) noexcept = default;

void TopologyBuilder::reserve(std::size_t nodes) {
  impl_->nodes.reserve(nodes);
  impl_->byGuid.reserve(nodes);
  impl_->cables.reserve(nodes * 2);
}

void TopologyBuilder::addNode(const NodeInfo& info) {
  if (info.numPorts < 0 || info.numPorts > 254)
    throw std::invalid_argument("topology: node " + toString(info.guid) + " has " +
                                std::to_string(info.numPorts) + " ports");
  auto [it, added] = impl_->byGuid.try_emplace(info.guid, impl_->nodes.size());
  if (!added) throw std::invalid_argument("topology: duplicate node GUID " + toString(info.guid));
  Node n;
  n.type = info.type;
  n.guid = info.guid;
  n.sysImageGuid = info.sysImageGuid;
  n.nodeDescription = info.nodeDescription;
  n.vendorId = info.vendorId;
  n.deviceId = info.deviceId;
  n.revision = info.revision;
  n.numPorts = info.numPorts;
  n.ports.resize(std::size_t(info.numPorts) + 1);
  impl_->nodes.push_back(std::move(n));
}

void TopologyBuilder::addPort(Guid nodeGuid, const Port& port) {
  Node& n = impl_->nodeFor(nodeGuid);
  if (port.num.value() > n.numPorts)
    throw std::invalid_argument("topology: node " + toString(nodeGuid) + " has no port " +
                                toString(port.num));
  Port p = port;
  p.remote.reset();
  p.link.reset();
  p.direction = PortDirection::kNone;
  n.ports[port.num.value()] = p;
}

void TopologyBuilder::connect(Guid nodeA, PortNum portA, Guid nodeB, PortNum portB) {
  for (auto [g, p] : {std::pair{nodeA, portA}, std::pair{nodeB, portB}}) {
    Node& n = impl_->nodeFor(g);
    if (p.value() == 0 || p.value() > n.numPorts)
      throw std::invalid_argument("topology: node " + toString(g) + " cannot cable port " +
                                  toString(p));
  }
  impl_->cables.push_back({nodeA, portA, nodeB, portB, std::nullopt});
}

void TopologyBuilder::setDescription(Guid node, std::string description) {
  impl_->nodeFor(node).description = std::move(description);
}

void TopologyBuilder::markMissing(Guid node, Absence absence) {
  impl_->nodeFor(node).missing = absence;
}

void TopologyBuilder::connectMissing(Guid nodeA, PortNum portA, Guid nodeB, PortNum portB,
                                     Absence absence) {
  connect(nodeA, portA, nodeB, portB);
  impl_->cables.back().missing = absence;
}

void TopologyBuilder::setNodeNameMap(std::shared_ptr<const NodeNameMap> map) {
  impl_->nameMap = std::move(map);
}

void TopologyBuilder::setStats(CrawlStats stats) { impl_->stats = std::move(stats); }

namespace {

int typeRank(NodeType t) {
  switch (t) {
    case NodeType::kSwitch:
      return 0;
    case NodeType::kCa:
      return 1;
    case NodeType::kRouter:
      return 2;
  }
  return 3;
}

std::optional<LinkRate> commonEnabled(const Port& a, const Port& b) {
  auto w = widestWidth(a.widthEnabled & b.widthEnabled);
  auto s = fastestSpeed(a.speedEnabled & b.speedEnabled);
  if (!w || !s) return std::nullopt;
  return LinkRate{*w, *s};
}

}  // namespace

TopologyPtr TopologyBuilder::build() {
  auto started = std::chrono::steady_clock::now();
  Impl& in = *impl_;
  std::shared_ptr<Topology> topo(new Topology());
  Topology& t = *topo;

  // Stable order: switches, CAs, routers; each by GUID.
  std::vector<std::size_t> order(in.nodes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return std::tuple(typeRank(in.nodes[x].type), in.nodes[x].guid) <
           std::tuple(typeRank(in.nodes[y].type), in.nodes[y].guid);
  });
  t.nodes_.reserve(in.nodes.size());
  t.byNodeGuid_.reserve(in.nodes.size());
  for (std::size_t i : order) {
    Node& n = in.nodes[i];
    n.index = NodeIndex(t.nodes_.size());
    const std::string* mapped = in.nameMap ? in.nameMap->find(n.guid) : nullptr;
    if (n.description.empty()) n.description = mapped ? *mapped : n.nodeDescription;
    t.byNodeGuid_.emplace(n.guid, n.index);
    t.nodes_.push_back(std::move(n));
  }
  in.nodes.clear();
  in.byGuid.clear();

  // Cables, given from one or both ends.
  std::vector<std::pair<PortRef, Absence>> missingCables;
  for (const auto& c : in.cables) {
    NodeIndex a = t.byNodeGuid_.at(c.a);
    NodeIndex b = t.byNodeGuid_.at(c.b);
    auto ensure = [&](NodeIndex n, PortNum p) -> Port& {
      auto& slot = t.nodes_[n].ports[p.value()];
      if (!slot) {
        slot = Port{};
        slot->num = p;
        slot->state = PortState::kActive;
        slot->physState = PhysPortState::kLinkUp;
      }
      return *slot;
    };
    Port& pa = ensure(a, c.pa);
    Port& pb = ensure(b, c.pb);
    PortRef ra{a, c.pa}, rb{b, c.pb};
    if ((pa.remote && *pa.remote != rb) || (pb.remote && *pb.remote != ra) || ra == rb)
      throw std::invalid_argument("topology: conflicting cables at " + toString(t.nodes_[a].guid) +
                                  "[" + toString(c.pa) + "] and " + toString(t.nodes_[b].guid) +
                                  "[" + toString(c.pb) + "]");
    pa.remote = rb;
    pb.remote = ra;
    if (c.missing) missingCables.emplace_back(ra, *c.missing);
  }
  in.cables.clear();

  // Switch ports carry the switch's GUID and LID.
  for (Node& n : t.nodes_) {
    if (n.isSwitch()) {
      ++t.switchCount_;
      if (n.ports[0]) {
        for (auto& p : n.ports) {
          if (!p || p->num.value() == 0) continue;
          if (p->guid == Guid{}) p->guid = n.ports[0]->guid;
          if (p->lid == Lid{}) p->lid = n.ports[0]->lid;
        }
      }
    } else if (n.isCa()) {
      ++t.caCount_;
    }
  }

  // Fat-tree view.
  FatTreeAnalysis ft = analyzeFatTree(t.nodes_);
  for (Node& n : t.nodes_) {
    n.level = ft.level[n.index];
    n.host = ft.host[n.index];
    n.hcaIndex = ft.hcaIndex[n.index];
    n.rail = ft.rail[n.index];
    n.group = ft.group[n.index];
  }
  t.hosts_ = std::move(ft.hosts);
  t.rails_ = std::move(ft.rails);
  t.groups_ = std::move(ft.groups);
  t.maxLevel_ = ft.maxLevel;

  // Links (each cable once, lower level first) and port directions.
  for (Node& n : t.nodes_) {
    for (auto& p : n.ports) {
      if (!p || !p->remote) continue;
      const Node& r = t.nodes_[p->remote->node];
      if (n.level == kUnknownLevel || r.level == kUnknownLevel)
        p->direction = PortDirection::kNone;
      else if (r.level < n.level)
        p->direction = PortDirection::kDown;
      else if (r.level > n.level)
        p->direction = PortDirection::kUp;
      else
        p->direction = PortDirection::kPeer;

      PortRef self{n.index, p->num};
      PortRef other = *p->remote;
      bool selfFirst;
      if (n.level != r.level && n.level != kUnknownLevel && r.level != kUnknownLevel)
        selfFirst = n.level < r.level;
      else
        selfFirst = std::pair(self.node, self.port) < std::pair(other.node, other.port);
      if (!selfFirst) continue;
      const Port& rp = *t.nodes_[other.node].ports[other.port.value()];
      std::uint32_t li = std::uint32_t(t.links_.size());
      t.links_.push_back(Link{self, other, p->activeRate, commonEnabled(*p, rp), std::nullopt});
      p->link = li;
    }
  }
  for (std::uint32_t li = 0; li < t.links_.size(); ++li) {
    const PortRef& b = t.links_[li].b;
    t.nodes_[b.node].ports[b.port.value()]->link = li;
  }
  for (const auto& [end, absence] : missingCables)
    t.links_[*t.nodes_[end.node].ports[end.port.value()]->link].missing = absence;

  // Indexes.
  t.byPortGuid_.reserve(t.nodes_.size() * 2);
  t.byLid_.reserve(t.nodes_.size() * 2);
  for (const Node& n : t.nodes_) {
    for (const auto& p : n.ports) {
      if (!p) continue;
      bool owner = !n.isSwitch() || p->num.value() == 0;
      if (!owner) continue;
      PortRef ref{n.index, p->num};
      if (p->guid != Guid{}) t.byPortGuid_.try_emplace(p->guid, ref);
      if (p->lid != Lid{}) {
        unsigned count = 1u << std::min<unsigned>(p->lmc, 7);
        for (unsigned k = 0; k < count; ++k) {
          unsigned v = unsigned(p->lid.value()) + k;
          if (v > 0xFFFF) break;
          t.byLid_.try_emplace(Lid{std::uint16_t(v)}, ref);
        }
      }
    }
    // A switch without a reported port 0 is still found by its node GUID.
    if (n.isSwitch() && !n.ports[0])
      t.byPortGuid_.try_emplace(n.guid, PortRef{n.index, PortNum{0}});
  }
  for (std::uint32_t h = 0; h < t.hosts_.size(); ++h)
    t.byHostName_.try_emplace(t.hosts_[h].name, h);

  t.stats_ = std::move(in.stats);
  t.stats_.buildTime += std::chrono::steady_clock::now() - started;
  return topo;
}

}  // namespace ibfabric
