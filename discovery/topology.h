// Topology: an immutable snapshot of one discovered (or described) InfiniBand subnet.
//
// A Topology is built once by TopologyBuilder (from a crawl, from a net file, or by hand in
// tests) and then only read. It is published as `TopologyPtr` (shared_ptr<const Topology>);
// readers load the pointer once and need no locks: a snapshot is thread-safe to read from any
// number of threads. A newer view of the fabric is a new snapshot; differences between two
// snapshots are computed elsewhere (TopologyDelta), never by mutating one.
//
// Contents:
//   - nodes (switches, CAs, routers) indexed 0..N-1 by NodeIndex, in a stable order (switches
//     first, then CAs, then routers; each group by node GUID);
//   - ports of each node indexed by port number (ports a crawl did not see are absent);
//   - links: each cable once, with both ends and its active rate;
//   - the fat-tree view: switch levels, port directions, hosts, rails and leaf groups;
//   - O(1) lookups by node GUID, port GUID, LID, host name and (node, port).
//
// Conventions: level 0 = CA, 1 = leaf switch (a switch with CAs attached), 2 = spine, 3 = core,
// and so on by hop distance from the nearest leaf; kUnknownLevel for switches not connected to
// any leaf and for routers.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "discovery/link_rate.h"
#include "discovery/netfile.h"  // NodeType
#include "discovery/types.h"

namespace ibfabric {

class NodeNameMap;

/// Position of a node in Topology::nodes().
using NodeIndex = std::uint32_t;
inline constexpr NodeIndex kNoNode = 0xFFFFFFFFu;

/// One end of a link: a node and one of its ports.
struct PortRef {
  NodeIndex node = kNoNode;
  PortNum port;
  friend bool operator==(const PortRef&, const PortRef&) = default;
};

/// PortInfo PortState (IBA 14.2.5.6).
enum class PortState : std::uint8_t {
  kNoChange = 0,
  kDown = 1,
  kInit = 2,
  kArmed = 3,
  kActive = 4
};
/// PortInfo PortPhysicalState.
enum class PhysPortState : std::uint8_t {
  kNoChange = 0,
  kSleep = 1,
  kPolling = 2,
  kDisabled = 3,
  kPortConfigurationTraining = 4,
  kLinkUp = 5,
  kLinkErrorRecovery = 6,
  kPhyTest = 7,
};
std::string_view toString(PortState s);      // "Down", "Init", "Armed", "Active", ...
std::string_view toString(PhysPortState s);  // "Sleep", "Polling", "Disabled", "LinkUp", ...

/// What a cable carries, judged from its two ends' states:
///   kActive  both ends Active: the link carries traffic;
///   kInit    both ends physically linked (LinkUp, or a logical state past Down) but not both
///            Active: the cable is in, the subnet manager has not activated it yet (or took it
///            back); only subnet management packets pass;
///   kDown    an end has no physical link (unplugged, broken, disabled, training).
enum class LinkActivity : std::uint8_t { kDown, kInit, kActive };
std::string_view toString(LinkActivity a);  // "down", "init", "active"
/// True when the port has a physical link (PhysPortState LinkUp, or PortState Init or later).
bool physicallyLinked(PortState state, PhysPortState phys);
LinkActivity linkActivity(PortState a, PhysPortState physA, PortState b, PhysPortState physB);

/// Where a port leads in the fat tree, seen from its own node.
enum class PortDirection : std::uint8_t {
  kNone,  // not connected, or a level is unknown
  kDown,  // towards CAs (remote level lower)
  kUp,    // towards the core (remote level higher)
  kPeer,  // same level (a switch-to-switch link inside one level)
};
std::string_view toString(PortDirection d);  // "none", "down", "up", "peer"

/// A set of LinkWidth values: the OR of their PortInfo bits (LinkWidth enumerator values).
using WidthMask = std::uint8_t;
/// A set of LinkSpeed values: bit (1 << int(LinkSpeed)) per speed, classic and extended speeds
/// and FDR10 in one mask.
using SpeedMask = std::uint16_t;
constexpr SpeedMask speedBit(LinkSpeed s) { return SpeedMask(1u << static_cast<unsigned>(s)); }
constexpr bool hasWidth(WidthMask m, LinkWidth w) { return (m & static_cast<WidthMask>(w)) != 0; }
constexpr bool hasSpeed(SpeedMask m, LinkSpeed s) { return (m & speedBit(s)) != 0; }
/// Widest width / fastest speed in a mask; nullopt for an empty mask.
std::optional<LinkWidth> widestWidth(WidthMask m);
std::optional<LinkSpeed> fastestSpeed(SpeedMask m);

/// Hardware seen before and not by the newest crawl (discovery/fabric_memory.h): kept in the model
/// with its ports Down and without LIDs, so that what is missing is reported as missing.
struct Absence {
  /// When it was first found missing (the first crawl without it).
  std::chrono::system_clock::time_point since{};
  /// The last crawl that had it.
  std::chrono::system_clock::time_point lastSeen{};
  friend bool operator==(const Absence&, const Absence&) = default;
};

inline constexpr int kUnknownLevel = -1;
inline constexpr int kCaLevel = 0;
inline constexpr int kLeafLevel = 1;

struct Port {
  PortNum num;
  Guid guid;  // port GUID (a switch's ports all carry its port-0 GUID)
  Lid lid;    // base LID (a switch's external ports carry the switch's LID)
  std::uint8_t lmc = 0;
  PortState state = PortState::kDown;
  PhysPortState physState = PhysPortState::kPolling;
  WidthMask widthSupported = 0;
  WidthMask widthEnabled = 0;
  SpeedMask speedSupported = 0;
  SpeedMask speedEnabled = 0;
  /// Active width and speed; nullopt while the link is not up.
  std::optional<LinkRate> activeRate;
  /// The other end of the cable, when connected.
  std::optional<PortRef> remote;

  // Derived by TopologyBuilder::build():
  PortDirection direction = PortDirection::kNone;
  /// Index into Topology::links() when connected.
  std::optional<std::uint32_t> link;

  bool connected() const { return remote.has_value(); }
};

struct Node {
  NodeIndex index = kNoNode;
  NodeType type = NodeType::kCa;
  Guid guid;
  Guid sysImageGuid;
  /// The name to show: the node-name map's entry for the GUID if any, else `nodeDescription`.
  std::string description;
  /// NodeDescription exactly as the node reported it.
  std::string nodeDescription;
  std::uint32_t vendorId = 0;
  std::uint32_t deviceId = 0;
  std::uint32_t revision = 0;
  int numPorts = 0;
  /// Indexed by port number, size numPorts + 1; ports[0] is a switch's management port.
  /// Ports the source did not report are absent (nullopt), e.g. a CA's port 0.
  std::vector<std::optional<Port>> ports;

  // Derived by TopologyBuilder::build():
  int level = kUnknownLevel;
  /// Index into Topology::hosts() (CAs only).
  std::optional<std::uint32_t> host;
  /// Position of a CA inside its host (the <n> of "mlx5_<n>", else by GUID order); -1 if none.
  int hcaIndex = -1;
  /// Rail of a leaf (and of each CA, the rail of the leaf it hangs off); -1 if none.
  int rail = -1;
  /// Index into Topology::groups() (leaves and the spines of their group); -1 if none.
  int group = -1;
  /// Set when the node is remembered, not seen by the newest crawl (its ports are Down).
  std::optional<Absence> missing;

  bool isSwitch() const { return type == NodeType::kSwitch; }
  bool isCa() const { return type == NodeType::kCa; }
  const Port* port(PortNum p) const {
    return p.value() < ports.size() && ports[p.value()] ? &*ports[p.value()] : nullptr;
  }
  /// The node's own LID: port 0's for a switch, the first reported port's for a CA.
  Lid lid() const;
};

/// One cable, listed once. `a` is the end at the lower level (the CA, or the leaf of a
/// leaf-spine link); for equal levels the end with the lower (node, port).
struct Link {
  PortRef a;
  PortRef b;
  /// Active rate as the `a` end reports it; nullopt when the port is not up.
  std::optional<LinkRate> rate;
  /// Best rate both ends enable (widest common enabled width, fastest common enabled speed):
  /// a link running below it is degraded.
  std::optional<LinkRate> enabledRate;
  /// Set when the cable is remembered, not seen by the newest crawl.
  std::optional<Absence> missing;

  double gbps() const { return rate ? rate->dataGbps() : 0.0; }
  bool belowEnabled() const;
};

/// HCAs that belong to one server: grouped by the host name in "<host> mlx5_<n>" descriptions,
/// else by system image GUID.
struct Host {
  std::string name;
  Guid sysImageGuid;
  /// CAs ordered by hcaIndex.
  std::vector<NodeIndex> hcas;
  /// True when `name` came from node descriptions, false when it is the system image GUID.
  bool namedFromDescription = true;
};

/// A rail: the leaves where the HCAs with one index of every host attach (found from the
/// wiring: a leaf's rail is the most common HCA index among the CAs cabled to it).
struct Rail {
  int index = 0;
  std::vector<NodeIndex> leaves;
  std::vector<NodeIndex> hcas;
};

/// A leaf group (scalable unit): leaves cabled to exactly the same set of level-2 switches.
struct LeafGroup {
  std::vector<NodeIndex> leaves;
  std::vector<NodeIndex> spines;
};

/// How the snapshot was obtained.
struct CrawlStats {
  std::string source;  // "ibnetdisc mlx5_0:1", "netfile <path>", "memory"
  std::chrono::nanoseconds crawlTime{0};
  std::chrono::nanoseconds buildTime{0};  // conversion into this model incl. fat-tree analysis
  std::uint64_t madsUsed = 0;             // SMPs the crawl sent (0 when not crawled)
  int maxHops = 0;
};

class Topology;
using TopologyPtr = std::shared_ptr<const Topology>;

class Topology {
 public:
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }
  const std::vector<Host>& hosts() const { return hosts_; }
  const std::vector<Rail>& rails() const { return rails_; }
  const std::vector<LeafGroup>& groups() const { return groups_; }
  const CrawlStats& stats() const { return stats_; }

  const Node& node(NodeIndex i) const { return nodes_.at(i); }
  const Port* port(PortRef ref) const;
  const Port* port(NodeIndex n, PortNum p) const { return port(PortRef{n, p}); }
  /// The port at the other end of a cable; nullptr when not connected.
  const Port* remote(PortRef ref) const;
  /// What the cable carries (kDown for a remembered missing one).
  LinkActivity activity(const Link& link) const;

  const Node* findNode(Guid nodeGuid) const;
  std::optional<PortRef> findPort(Guid portGuid) const;  // a switch's GUID gives port 0
  std::optional<PortRef> findLid(Lid lid) const;         // any LID in base..base+2^LMC-1
  const Host* findHost(std::string_view name) const;

  std::size_t switchCount() const { return switchCount_; }
  std::size_t caCount() const { return caCount_; }
  std::size_t routerCount() const { return nodes_.size() - switchCount_ - caCount_; }
  /// Highest switch level (1 for a single layer of leaves); 0 without switches.
  int maxLevel() const { return maxLevel_; }
  /// Nodes at one level, in index order.
  std::vector<NodeIndex> nodesAtLevel(int level) const;
  /// More than one rail and every leaf in exactly one.
  bool railOptimized() const { return rails_.size() > 1; }

 private:
  friend class TopologyBuilder;
  Topology() = default;

  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<Host> hosts_;
  std::vector<Rail> rails_;
  std::vector<LeafGroup> groups_;
  CrawlStats stats_;
  std::size_t switchCount_ = 0;
  std::size_t caCount_ = 0;
  int maxLevel_ = 0;
  std::unordered_map<Guid, NodeIndex> byNodeGuid_;
  std::unordered_map<Guid, PortRef> byPortGuid_;
  std::unordered_map<Lid, PortRef> byLid_;
  std::unordered_map<std::string, std::uint32_t> byHostName_;
};

/// Collects nodes, ports and cables, then builds a snapshot. Not thread-safe; single use.
///
/// Nodes are keyed by node GUID (adding one twice is an error); cables by (GUID, port) on both
/// ends, and may be given from either or both ends.
class TopologyBuilder {
 public:
  struct NodeInfo {
    NodeType type = NodeType::kCa;
    Guid guid;
    Guid sysImageGuid;
    std::string nodeDescription;
    std::uint32_t vendorId = 0;
    std::uint32_t deviceId = 0;
    std::uint32_t revision = 0;
    int numPorts = 0;
  };

  TopologyBuilder();
  ~TopologyBuilder();
  TopologyBuilder(TopologyBuilder&&) noexcept;
  TopologyBuilder& operator=(TopologyBuilder&&) noexcept;

  void reserve(std::size_t nodes);
  /// Throws std::invalid_argument on a duplicate GUID.
  void addNode(const NodeInfo& info);
  /// Adds or replaces a port of a node added before. `port.remote`, `direction` and `link` are
  /// ignored: cables are given with connect(). Throws std::invalid_argument on an unknown node or
  /// a port number above numPorts.
  void addPort(Guid nodeGuid, const Port& port);
  /// Records a cable. Missing ports are created (state Active, no rates). Throws
  /// std::invalid_argument when either end is unknown or already cabled elsewhere.
  void connect(Guid nodeA, PortNum portA, Guid nodeB, PortNum portB);
  /// The name to show for a node added before, instead of the node-name map's or its
  /// nodeDescription (a copy of a snapshot keeps the names it showed).
  void setDescription(Guid node, std::string description);
  /// Marks a node added before as remembered but not seen (Node::missing).
  void markMissing(Guid node, Absence absence);
  /// connect(), for a cable remembered but not seen (Link::missing).
  void connectMissing(Guid nodeA, PortNum portA, Guid nodeB, PortNum portB, Absence absence);
  /// Replaces descriptions by the map's names at build().
  void setNodeNameMap(std::shared_ptr<const NodeNameMap> map);
  void setStats(CrawlStats stats);

  /// Sorts nodes, resolves cables, runs the fat-tree analysis and indexes. The builder is empty
  /// afterwards.
  TopologyPtr build();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ibfabric
