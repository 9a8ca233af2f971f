// TopologyDelta: the typed differences between two Topology snapshots of one subnet.
//
// Nodes are matched by node GUID, ports by (node GUID, port number) and cables by both ends'
// (node GUID, port) — never by NodeIndex, which is only meaningful inside one snapshot. The
// changes:
//   - nodes added / removed;
//   - node description changed (as reported, or as shown after the node-name map);
//   - links (cables) added / removed: a cable that moves to another port is one removal plus
//     one addition;
//   - link changed: same cable, different port state / physical state / active width / speed
//     on either end (old and new values);
//   - port LID changed (CA ports and switch port 0: the ports that own a LID).
//
// Every change is a self-contained value (GUIDs, descriptions, ports, LIDs, states and the
// remote end copied out of the snapshots), so it can become an event (link down, link up,
// degraded, ...) after the snapshots are gone. The delta also keeps both snapshots for callers
// that need more.
//
// Cost: O(nodes + ports + links) with the snapshots' hash indexes; nothing is copied for what
// did not change. Walk it with forEachChange(visitor) or forEachLinkChange(added, removed,
// changed) (the StateDelta / forEachChanged pattern).
//
// Immutable after construction; thread-safe to read.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "discovery/link_rate.h"
#include "discovery/topology.h"

namespace ibfabric {

/// Identity and names of a node, as changes carry it.
struct NodeSummary {
  Guid guid;
  NodeType type = NodeType::kCa;
  std::string description;      // Node::description (node-name map applied)
  std::string nodeDescription;  // as the node reported it
  Lid lid;                      // the node's own LID (Node::lid())
  int numPorts = 0;

  static NodeSummary of(const Node& node);
  friend bool operator==(const NodeSummary&, const NodeSummary&) = default;
};

/// One end of a cable as changes carry it.
struct LinkEnd {
  NodeSummary node;
  PortNum port;
  Guid portGuid;
  Lid lid;  // the port's LID (a switch's external ports carry the switch's LID)
  PortState state = PortState::kDown;
  PhysPortState physState = PhysPortState::kPolling;
  std::optional<LinkRate> activeRate;

  friend bool operator==(const LinkEnd&, const LinkEnd&) = default;
};

/// A cable by both ends' (node GUID, port), the lower (GUID, port) first.
struct LinkKey {
  Guid guidA;
  PortNum portA;
  Guid guidB;
  PortNum portB;

  /// Orders the two ends.
  static LinkKey of(Guid g1, PortNum p1, Guid g2, PortNum p2);
  friend auto operator<=>(const LinkKey&, const LinkKey&) = default;
};

/// A cable with both ends, as one snapshot saw it. `a` and `b` follow Topology::Link (the lower
/// fat-tree level first, e.g. the CA of a CA-leaf cable).
struct LinkSnapshot {
  LinkEnd a;
  LinkEnd b;
  std::optional<LinkRate> rate;         // as `a` reports it
  std::optional<LinkRate> enabledRate;  // best rate both ends enable
  /// Remembered, not seen by the crawl (Link::missing); `nodeMissing`: an end's node is too.
  bool missing = false;
  bool nodeMissing = false;

  LinkKey key() const { return LinkKey::of(a.node.guid, a.port, b.node.guid, b.port); }
  static LinkSnapshot of(const Topology& topology, const Link& link);
  friend bool operator==(const LinkSnapshot&, const LinkSnapshot&) = default;
};

struct NodeAdded {
  NodeSummary node;
};
struct NodeRemoved {
  NodeSummary node;
};
/// Description (as reported or as shown) differs.
struct NodeDescriptionChanged {
  NodeSummary before;
  NodeSummary after;
};
struct LinkAdded {
  LinkSnapshot link;
  bool aNodeNew = false;  // the node at that end was not in the old snapshot
  bool bNodeNew = false;
};
struct LinkRemoved {
  LinkSnapshot link;
  bool aNodeGone = false;  // the node at that end is not in the new snapshot
  bool bNodeGone = false;
};
/// Same cable, something about it differs. `after` is oriented like `before`.
struct LinkChanged {
  LinkSnapshot before;
  LinkSnapshot after;
  bool stateChanged = false;  // PortState or PhysPortState of either end
  bool widthChanged = false;  // active width of either end
  bool speedChanged = false;  // active speed of either end
};
struct PortLidChanged {
  NodeSummary node;  // as in the new snapshot
  PortNum port;
  Guid portGuid;
  Lid before;
  Lid after;
};

/// One line for people, e.g. `link removed: "dgx0001 mlx5_0"[1] <-> "MF0;leaf-01:..."[1] (was
/// Active 4x HDR)`.
std::string describe(const NodeAdded& c);
std::string describe(const NodeRemoved& c);
std::string describe(const NodeDescriptionChanged& c);
std::string describe(const LinkAdded& c);
std::string describe(const LinkRemoved& c);
std::string describe(const LinkChanged& c);
std::string describe(const PortLidChanged& c);

class TopologyDelta {
 public:
  /// A null `before` is an empty fabric (everything in `after` is added), a null `after` too.
  TopologyDelta(TopologyPtr before, TopologyPtr after);

  const TopologyPtr& before() const { return before_; }
  const TopologyPtr& after() const { return after_; }

  // Changes by kind, each in a stable order (node order of the snapshot they come from).
  const std::vector<NodeAdded>& nodesAdded() const { return nodesAdded_; }
  const std::vector<NodeRemoved>& nodesRemoved() const { return nodesRemoved_; }
  const std::vector<NodeDescriptionChanged>& descriptionsChanged() const {
    return descriptionsChanged_;
  }
  const std::vector<LinkAdded>& linksAdded() const { return linksAdded_; }
  const std::vector<LinkRemoved>& linksRemoved() const { return linksRemoved_; }
  const std::vector<LinkChanged>& linksChanged() const { return linksChanged_; }
  const std::vector<PortLidChanged>& lidsChanged() const { return lidsChanged_; }

  bool empty() const { return size() == 0; }
  std::size_t size() const {
    return nodesAdded_.size() + nodesRemoved_.size() + descriptionsChanged_.size() +
           linksAdded_.size() + linksRemoved_.size() + linksChanged_.size() + lidsChanged_.size();
  }

  /// Calls `visitor(change)` for every change: nodes removed, nodes added, descriptions changed,
  /// links removed, links added, links changed, LIDs changed. The visitor needs an overload per
  /// change type (e.g. a struct of operator()s, or a generic lambda).
  template <typename Visitor>
  void forEachChange(Visitor&& visitor) const {
    for (const auto& c : nodesRemoved_) visitor(c);
    for (const auto& c : nodesAdded_) visitor(c);
    for (const auto& c : descriptionsChanged_) visitor(c);
    for (const auto& c : linksRemoved_) visitor(c);
    for (const auto& c : linksAdded_) visitor(c);
    for (const auto& c : linksChanged_) visitor(c);
    for (const auto& c : lidsChanged_) visitor(c);
  }

  /// Link changes only, like fboss' forEachChanged(delta, changed, added, removed).
  void forEachLinkChange(const std::function<void(const LinkAdded&)>& added,
                         const std::function<void(const LinkRemoved&)>& removed,
                         const std::function<void(const LinkChanged&)>& changed) const;

  /// Node changes only.
  void forEachNodeChange(const std::function<void(const NodeAdded&)>& added,
                         const std::function<void(const NodeRemoved&)>& removed,
                         const std::function<void(const NodeDescriptionChanged&)>& changed) const;

  /// Every change described, one per line, in forEachChange order.
  std::vector<std::string> describeAll() const;

 private:
  TopologyPtr before_;
  TopologyPtr after_;
  std::vector<NodeAdded> nodesAdded_;
  std::vector<NodeRemoved> nodesRemoved_;
  std::vector<NodeDescriptionChanged> descriptionsChanged_;
  std::vector<LinkAdded> linksAdded_;
  std::vector<LinkRemoved> linksRemoved_;
  std::vector<LinkChanged> linksChanged_;
  std::vector<PortLidChanged> lidsChanged_;
};

}  // namespace ibfabric

template <>
struct std::hash<ibfabric::LinkKey> {
  std::size_t operator()(const ibfabric::LinkKey& k) const noexcept {
    std::uint64_t h = k.guidA.value() * 0x9E3779B97F4A7C15ull;
    h ^= (k.guidB.value() + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2));
    h ^= (std::uint64_t(k.portA.value()) << 8 | k.portB.value()) * 0xC2B2AE3D27D4EB4Full;
    return std::size_t(h);
  }
};
