// The placement engine: (topology, forwarding tables, link load, health, request) -> ranked
// host sets (see placement.h for the request and answer).
//
// PlacementIndex is the per-(topology, tables) structure the engine precomputes once: hosts with
// their HCAs (LID, leaf, HCA index), host blocks (hosts whose HCAs hang off the same leaves: a
// leaf in a classic fat tree, a scalable unit in a rail-optimized one) grouped by leaf group,
// and a flat port table for route tracing. PlacementEngine adds one LinkLoadModel and answers
// requests. Both are immutable once built and thread-safe to use from any number of threads.
//
// Objective (higher is better), for a host set of n hosts in rank order:
//   objective = B / R * (1 - 0.02 * min(1, (leafSets - 1) / (n - 1)) - 0.001 * maxHops)
// where B is the predicted per-flow bottleneck (bytes/s) of the pattern on the real routes, R the
// fabric's fastest HCA link (so B / R is in [0, 1]) and leafSets = leaf switches spanned / HCAs
// per host. Bandwidth dominates at every scale (the leaf and hop terms scale it down by a few
// percent at most); among near-equal bandwidths fewer leaves and shorter routes win.
// docs/placement.md has the model and search; the implementation is in routing/placement/
// (engine.cpp answers a request step by step; one file per step or scorer).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "discovery/topology.h"
#include "routing/forwarding.h"
#include "routing/link_load.h"
#include "routing/placement.h"

namespace ibfabric::routing {

struct PlacementInput {
  TopologyPtr topology;  ///< must be the tables' topology (node indices refer to it)
  ForwardingTablesPtr tables;
  std::shared_ptr<const LinkLoadModel> load;  ///< of the same topology; null = idle fabric
};

/// Precomputed per (topology, tables) snapshot. Build once, share between engines.
class PlacementIndex {
 public:
  struct Hca {
    NodeIndex node = kNoNode;
    PortRef port;  ///< the CA port that is cabled
    Lid lid;
    NodeIndex leaf = kNoNode;  ///< the switch at the other end (kNoNode when not cabled)
    int hcaIndex = 0;
    std::uint32_t link = 0;  ///< Topology::links() index of the CA's cable (when cabled)
    bool cabled = false;
    DirectedLinkId tx = 0xFFFFFFFFu;         ///< CA -> leaf
    DirectedLinkId rx = 0xFFFFFFFFu;         ///< leaf -> CA
    std::uint32_t leafColumn = 0xFFFFFFFFu;  ///< switchColumn(leaf)
  };
  struct HostInfo {
    std::string name;
    std::vector<Hca> hcas;  ///< by HCA index
    int block = -1;
  };
  struct Block {
    std::vector<NodeIndex> leaves;  ///< sorted
    std::vector<std::uint32_t> hosts;
    int group = -1;
  };
  struct Slot {  ///< one (node, port)
    DirectedLinkId tx = kNoLink;
    NodeIndex remote = kNoNode;
  };
  static constexpr DirectedLinkId kNoLink = 0xFFFFFFFFu;

  /// Throws PlacementError(kNotReady) without a topology or tables, or when the tables belong to
  /// another topology snapshot.
  PlacementIndex(TopologyPtr topology, ForwardingTablesPtr tables);

  const Topology& topology() const { return *topology_; }
  const TopologyPtr& topologyPtr() const { return topology_; }
  const ForwardingTables& tables() const { return *tables_; }
  const ForwardingTablesPtr& tablesPtr() const { return tables_; }
  const std::vector<HostInfo>& hosts() const { return hosts_; }
  const std::vector<Block>& blocks() const { return blocks_; }
  const Slot& slot(NodeIndex node, int port) const { return slots_[portBase_[node] + port]; }
  int portsOf(NodeIndex node) const { return portBase_[node + 1] - portBase_[node]; }
  /// Fastest HCA link data rate of the fabric, bytes/s (> 0).
  double referenceBytesPerSecond() const { return reference_; }
  /// Up-ports (towards higher levels) of a leaf switch.
  const std::vector<int>& upPorts(NodeIndex leaf) const { return upPorts_[leaf]; }

  bool isSwitch(NodeIndex node) const { return isSwitch_[node] != 0; }
  /// Position of host `h` in the canonical rank order (leaf group, block, host name).
  std::uint32_t canonicalRank(std::uint32_t h) const { return rank_[h]; }

  /// Switches are numbered 0..switchCount()-1 ("columns") for dense per-switch arrays.
  static constexpr std::uint32_t kNoColumn = 0xFFFFFFFFu;
  std::size_t switchCount() const { return columns_; }
  std::uint32_t switchColumn(NodeIndex node) const {
    return node < column_.size() ? column_[node] : kNoColumn;
  }
  /// One port of a switch, by column: the directed link it transmits on and what is at the other
  /// end: a switch's column, kCaFlag | the CA's node index, or kNoColumn without a cable. 8 bytes:
  /// route walks are memory-bound.
  static constexpr std::uint32_t kCaFlag = 0x80000000u;
  struct Hop {
    DirectedLinkId tx = kNoLink;
    std::uint32_t remote = kNoColumn;
    bool toSwitch() const { return (remote & kCaFlag) == 0; }
    bool toCa(NodeIndex ca) const { return remote == (kCaFlag | ca); }
  };
  /// Port `port` of the switch in column `col`, or null beyond its ports.
  const Hop* hop(std::uint32_t col, int port) const {
    std::uint32_t i = hopBase_[col] + static_cast<std::uint32_t>(port);
    return i < hopBase_[col + 1] ? &hops_[i] : nullptr;
  }
  /// Fills `row` (switchCount() bytes) with every switch's egress port towards `dst`
  /// (SwitchTable::kNoPort when none): destinationRow() for any LID.
  void fillRow(Lid dst, std::uint8_t* row) const;

  /// The egress ports of every switch towards one destination LID, contiguous (one row per host
  /// HCA LID, one byte per switch, indexed by switchColumn()): a route walk for one destination
  /// touches one small row instead of one table per switch. Null when the destination has no row
  /// (not a host HCA's LID, or the fabric too large for the transposed copy, see kMaxRowBytes).
  const std::uint8_t* destinationRow(Lid dst) const {
    if (dst.value() >= rowOfLid_.size() || rowOfLid_[dst.value()] == kNoRow) return nullptr;
    return rows_.data() + static_cast<std::size_t>(rowOfLid_[dst.value()]) * columns_;
  }
  /// Position of `dst`'s row in the copy (rows are ordered by HCA index, then LID); LIDs without
  /// a row sort last.
  std::uint32_t rowPosition(Lid dst) const {
    return dst.value() < rowOfLid_.size() ? rowOfLid_[dst.value()] : kNoRow;
  }
  /// The egress port of switch `sw` towards `dst` (`row` = destinationRow(dst) or null), or -1
  /// when it has none (no table, no entry, not a switch, a port beyond its ports).
  int egressPort(NodeIndex sw, Lid dst, const std::uint8_t* row) const {
    int port = SwitchTable::kNoPort;
    if (row) {
      std::uint32_t col = switchColumn(sw);
      if (col == kNoColumn) return -1;
      port = row[col];
    } else {
      const SwitchTable* t = tables_->table(sw);
      if (!t) return -1;
      if (dst.value() >= t->ports.size()) return -1;
      port = t->ports[dst.value()];
    }
    if (port == SwitchTable::kNoPort || port >= portsOf(sw)) return -1;
    return port;
  }

  /// Follows the tables from switch `sw` to the CA `dstNode` at `dst`, calling onLink(tx link)
  /// per cable crossed. Returns the switches crossed, or -1 (no table, no entry, a port without
  /// a cable, a loop).
  template <typename F>
  int traceFromSwitch(NodeIndex sw, Lid dst, NodeIndex dstNode, F&& onLink) const {
    const std::uint8_t* row = destinationRow(dst);
    NodeIndex cur = sw;
    for (int switches = 1; switches <= kMaxSwitchHops; ++switches) {
      int port = egressPort(cur, dst, row);
      if (port < 0) return -1;
      const Slot& s = slot(cur, port);
      if (s.tx == kNoLink) return -1;
      onLink(s.tx);
      if (s.remote == dstNode) return switches;
      if (!isSwitch_[s.remote]) return -1;
      cur = s.remote;
    }
    return -1;
  }
  static constexpr int kMaxSwitchHops = 32;
  /// Largest transposed table built (host HCA LIDs x switches, one byte each).
  static constexpr std::size_t kMaxRowBytes = std::size_t{64} << 20;

 private:
  // Construction steps (routing/placement/index.cpp), in this order.
  void buildPortTable();
  void buildHostsAndBlocks();
  void buildRankOrder();
  void buildSwitchColumns();
  void buildDestinationRows();

  TopologyPtr topology_;
  ForwardingTablesPtr tables_;
  std::vector<HostInfo> hosts_;
  std::vector<Block> blocks_;
  std::vector<std::uint32_t> portBase_;
  std::vector<Slot> slots_;
  std::vector<char> isSwitch_;
  std::vector<std::vector<int>> upPorts_;
  double reference_ = 1.0;
  std::vector<std::uint32_t> rank_;  ///< per host
  static constexpr std::uint32_t kNoRow = 0xFFFFFFFFu;
  std::vector<std::uint32_t> column_;    ///< per node: switch column, kNoRow for CAs
  std::vector<std::uint32_t> rowOfLid_;  ///< per LID: row, kNoRow when none
  std::size_t columns_ = 0;
  std::vector<std::uint8_t> rows_;      ///< rows x columns_ egress ports
  std::vector<std::uint32_t> hopBase_;  ///< per column (+1 at the end): first index in hops_
  std::vector<Hop> hops_;
};
using PlacementIndexPtr = std::shared_ptr<const PlacementIndex>;

struct PlacementLimits {
  /// Work budget in link visits (deterministic, unlike a time budget): for the local
  /// improvement, and for scoring candidates beyond the K best.
  std::uint64_t improvementWork = 400'000;
  /// Warnings listed one by one; the rest are summed up in one line.
  std::size_t maxWarnings = 32;
  /// Hottest links reported per option.
  std::size_t hottestLinks = 3;
  /// Skip the exact evaluation of a candidate whose cheap upper bound cannot reach the best
  /// ones (same answer; false evaluates every candidate exactly, for tests).
  bool pruneByBound = true;
  /// With pruneByBound: also skip a candidate whose upper bound exceeds the best exact objective
  /// it must beat by no more than this fraction of it (1e-3 = 0.1%): at best it would tie. 0 =
  /// exact pruning (the same answer as evaluating everything). Never applied to the topology-only
  /// best-fit candidate. Near-equal candidates of large jobs cost a full evaluation each; this
  /// is most of the 512-host all-to-all time at 10,240 HCAs.
  double nearTie = 1e-3;
  /// Score an alltoall host set that differs from the last one scored in full by a few hosts
  /// from the difference (same numbers; false always scores in full, for tests).
  bool incrementalAllToAll = true;
  /// Score a ring order that differs from the last one scored in a few positions from the
  /// edges next to them (same numbers; false always scores in full, for tests).
  bool incrementalRing = true;
};

class PlacementEngine {
 public:
  /// `load` null = an idle fabric; otherwise it must be of the index's topology.
  PlacementEngine(PlacementIndexPtr index, std::shared_ptr<const LinkLoadModel> load,
                  PlacementLimits limits = {});

  /// Throws PlacementError.
  PlacementAnswer place(const PlacementRequest& request) const;

  /// Scores hosts exactly as given (rank order) under the request's pattern; the same objective
  /// the search maximizes. Unknown host names throw PlacementError(kInvalidRequest).
  PlacementScore score(const std::vector<std::string>& hostsInRankOrder, CommPattern pattern) const;

  const PlacementIndex& index() const { return *index_; }
  const LinkLoadModel& load() const { return *load_; }

 private:
  PlacementIndexPtr index_;
  std::shared_ptr<const LinkLoadModel> load_;
  PlacementLimits limits_;
  std::vector<double> residual_;     ///< per directed link, from load_
  std::vector<double> utilization_;  ///< per directed link, from load_
};

/// One-shot: builds the index and the engine, then places. Throws PlacementError.
PlacementAnswer place(const PlacementInput& input, const PlacementRequest& request);

}  // namespace ibfabric::routing
