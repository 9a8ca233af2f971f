// The placement engine (placement_engine.h): candidate generation by block and leaf group with
// load-aware ordering, exact scoring on the forwarding tables, bounded local improvement.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "routing/placement_engine.h"

namespace ibfabric::routing {

std::string_view toString(CommPattern p) {
  switch (p) {
    case CommPattern::kNone:
      return "none";
    case CommPattern::kRingAllreduce:
      return "ring_allreduce";
    case CommPattern::kAllToAll:
      return "alltoall";
  }
  return "none";
}

std::optional<CommPattern> parseCommPattern(std::string_view s) {
  if (s == "none") return CommPattern::kNone;
  if (s == "ring_allreduce" || s == "ring") return CommPattern::kRingAllreduce;
  if (s == "alltoall" || s == "all_to_all") return CommPattern::kAllToAll;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// PlacementIndex

PlacementIndex::PlacementIndex(TopologyPtr topology, ForwardingTablesPtr tables)
    : topology_(std::move(topology)), tables_(std::move(tables)) {
  using Kind = PlacementError::Kind;
  if (!topology_) throw PlacementError(Kind::kNotReady, "no topology yet");
  if (!tables_) throw PlacementError(Kind::kNotReady, "no forwarding tables yet");
  if (tables_->topology() && tables_->topology() != topology_ &&
      tables_->topology()->nodes().size() != topology_->nodes().size()) {
    throw PlacementError(Kind::kNotReady,
                         "forwarding tables were read against another topology snapshot");
  }
  const Topology& topo = *topology_;
  const auto& nodes = topo.nodes();
  portBase_.resize(nodes.size() + 1, 0);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    portBase_[i + 1] = portBase_[i] + static_cast<std::uint32_t>(nodes[i].ports.size());
  }
  slots_.resize(portBase_.back());
  isSwitch_.resize(nodes.size());
  upPorts_.resize(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    isSwitch_[i] = n.isSwitch();
    for (std::size_t p = 0; p < n.ports.size(); ++p) {
      const auto& port = n.ports[p];
      if (!port || !port->link || !port->remote) continue;
      const Link& link = topo.links()[*port->link];
      PortRef self{static_cast<NodeIndex>(i), PortNum(static_cast<std::uint8_t>(p))};
      Slot& s = slots_[portBase_[i] + p];
      s.tx = directedLink(*port->link, !(link.a == self));
      s.remote = port->remote->node;
      if (n.isSwitch() && n.level == kLeafLevel && port->direction == PortDirection::kUp) {
        upPorts_[i].push_back(static_cast<int>(p));
      }
    }
  }

  double reference = 0.0;
  std::map<std::vector<NodeIndex>, int> blockOf;
  hosts_.reserve(topo.hosts().size());
  for (const Host& host : topo.hosts()) {
    HostInfo info;
    info.name = host.name;
    for (NodeIndex ca : host.hcas) {
      const Node& node = topo.node(ca);
      Hca hca;
      hca.node = ca;
      hca.hcaIndex = node.hcaIndex < 0 ? static_cast<int>(info.hcas.size()) : node.hcaIndex;
      for (std::size_t p = 1; p < node.ports.size(); ++p) {
        const auto& port = node.ports[p];
        if (!port || !port->remote || !port->link) continue;
        hca.port = PortRef{ca, PortNum(static_cast<std::uint8_t>(p))};
        hca.lid = port->lid;
        hca.leaf = port->remote->node;
        hca.link = *port->link;
        hca.cabled = true;
        hca.tx = slots_[portBase_[ca] + p].tx;
        hca.rx = hca.tx ^ 1u;
        const Link& link = topo.links()[hca.link];
        if (link.rate) reference = std::max(reference, link.rate->dataGbps() * 1e9 / 8.0);
        break;
      }
      info.hcas.push_back(hca);
    }
    std::vector<NodeIndex> leaves;
    for (const Hca& h : info.hcas) {
      if (h.cabled) leaves.push_back(h.leaf);
    }
    std::sort(leaves.begin(), leaves.end());
    leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
    auto [it, inserted] = blockOf.emplace(leaves, static_cast<int>(blocks_.size()));
    if (inserted) {
      Block b;
      b.leaves = leaves;
      b.group = leaves.empty() ? -1 : topo.node(leaves.front()).group;
      blocks_.push_back(std::move(b));
    }
    info.block = it->second;
    blocks_[info.block].hosts.push_back(static_cast<std::uint32_t>(hosts_.size()));
    hosts_.push_back(std::move(info));
  }
  reference_ = reference > 0 ? reference : 1.0;

  // Canonical rank order: leaf group, block, host name (ring neighbours share a leaf).
  std::vector<std::uint32_t> byRank(hosts_.size());
  std::iota(byRank.begin(), byRank.end(), 0u);
  std::sort(byRank.begin(), byRank.end(), [&](std::uint32_t x, std::uint32_t y) {
    const auto& hx = hosts_[x];
    const auto& hy = hosts_[y];
    if (hx.block != hy.block) {
      int gx = blocks_[hx.block].group, gy = blocks_[hy.block].group;
      if (gx != gy) return gx < gy;
      return hx.block < hy.block;
    }
    if (hx.name != hy.name) return hx.name < hy.name;
    return x < y;
  });
  rank_.resize(hosts_.size());
  for (std::uint32_t r = 0; r < byRank.size(); ++r) rank_[byRank[r]] = r;

  // Destination-major copy of the tables for the host HCAs' LIDs.
  column_.assign(nodes.size(), kNoRow);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (isSwitch_[i]) column_[i] = static_cast<std::uint32_t>(columns_++);
  }
  hopBase_.assign(columns_ + 1, 0);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!isSwitch_[i]) continue;
    hopBase_[column_[i] + 1] = static_cast<std::uint32_t>(portsOf(static_cast<NodeIndex>(i)));
  }
  for (std::size_t c = 0; c < columns_; ++c) hopBase_[c + 1] += hopBase_[c];
  hops_.resize(hopBase_.back());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!isSwitch_[i]) continue;
    const auto node = static_cast<NodeIndex>(i);
    for (int p = 0; p < portsOf(node); ++p) {
      const Slot& s = slot(node, p);
      Hop& h = hops_[hopBase_[column_[i]] + static_cast<std::uint32_t>(p)];
      h.tx = s.tx;
      if (s.remote == kNoNode || s.tx == kNoLink) {
        h.remote = kNoColumn;
      } else {
        h.remote = isSwitch_[s.remote] ? column_[s.remote] : (kCaFlag | s.remote);
      }
    }
  }
  for (HostInfo& h : hosts_) {
    for (Hca& hca : h.hcas) {
      if (hca.cabled) hca.leafColumn = column_[hca.leaf];
    }
  }

  // Rows by (HCA index, LID): an alltoall walks the destinations of one rail in row order, so
  // it streams through the copy.
  std::vector<std::pair<int, std::uint16_t>> railLids;
  for (const HostInfo& h : hosts_) {
    for (const Hca& hca : h.hcas) {
      if (hca.cabled && hca.lid.value() != 0) railLids.emplace_back(hca.hcaIndex, hca.lid.value());
    }
  }
  std::sort(railLids.begin(), railLids.end());
  std::vector<std::uint16_t> lids;
  std::vector<char> seenLid(65536, 0);
  for (const auto& [rail, lid] : railLids) {
    if (!seenLid[lid]) lids.push_back(lid);
    seenLid[lid] = 1;
  }
  if (!lids.empty() && columns_ > 0 && lids.size() * columns_ <= kMaxRowBytes) {
    rowOfLid_.assign(static_cast<std::size_t>(*std::max_element(lids.begin(), lids.end())) + 1,
                     kNoRow);
    rows_.assign(lids.size() * columns_, SwitchTable::kNoPort);
    for (std::size_t r = 0; r < lids.size(); ++r)
      rowOfLid_[lids[r]] = static_cast<std::uint32_t>(r);
    std::vector<const SwitchTable*> byColumn(columns_, nullptr);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (isSwitch_[i]) byColumn[column_[i]] = tables_->table(static_cast<NodeIndex>(i));
    }
    for (std::size_t r = 0; r < lids.size(); ++r) {
      std::uint8_t* row = rows_.data() + r * columns_;
      for (std::size_t col = 0; col < columns_; ++col) {
        const SwitchTable* t = byColumn[col];
        if (t && lids[r] < t->ports.size()) row[col] = t->ports[lids[r]];
      }
    }
  }
}

void PlacementIndex::fillRow(Lid dst, std::uint8_t* row) const {
  if (const std::uint8_t* r = destinationRow(dst)) {
    std::copy(r, r + columns_, row);
    return;
  }
  std::fill(row, row + columns_, SwitchTable::kNoPort);
  for (std::size_t i = 0; i < column_.size(); ++i) {
    if (column_[i] == kNoColumn) continue;
    const SwitchTable* t = tables_->table(static_cast<NodeIndex>(i));
    if (t && dst.value() < t->ports.size()) row[column_[i]] = t->ports[dst.value()];
  }
}

// ---------------------------------------------------------------------------------------------
// Engine internals

namespace {

using HostId = std::uint32_t;
using Order = std::vector<HostId>;

// The objective (placement_engine.h): the bandwidth term scaled down by at most ~5% for leaves
// and hops, so they only decide between near-equal bandwidths, at every bandwidth scale (a
// 512-host alltoall's per-flow share is ~1e-4 of a link).
constexpr double kLeafWeight = 0.02;  ///< all hosts on separate leaf sets
constexpr double kHopWeight = 0.001;  ///< per switch hop of the longest route

/// `fraction` = bottleneck / reference rate, in [0, 1].
double objectiveOf(double fraction, double leafSets, std::size_t hosts, int maxHops) {
  const double spread =
      std::max(0.0, leafSets - 1.0) / static_cast<double>(std::max<std::size_t>(1, hosts - 1));
  return fraction * (1.0 - kLeafWeight * std::min(1.0, spread) - kHopWeight * maxHops);
}

/// Marks over a fixed range of indices, all cleared at once by starting a new epoch (a full
/// clear only when the 32-bit epoch wraps).
struct EpochMarks {
  std::vector<std::uint32_t> stamp;
  std::uint32_t epoch = 0;
  /// Starts a new epoch over `size` entries: nothing is marked.
  void clear(std::size_t size) {
    if (stamp.size() != size) stamp.assign(size, 0);
    if (++epoch == 0) {
      std::fill(stamp.begin(), stamp.end(), 0);
      epoch = 1;
    }
  }
  bool marked(std::size_t i) const { return stamp[i] == epoch; }
  /// Marks `i`; true when it was not marked yet in this epoch.
  bool mark(std::size_t i) {
    if (stamp[i] == epoch) return false;
    stamp[i] = epoch;
    return true;
  }
};

struct Eval {
  double bottleneck = 0.0;  // bytes/s per flow
  DirectedLinkId bottleneckLink = PlacementIndex::kNoLink;
  int maxHops = 0;
  int leafSwitches = 0;
  int leafGroups = 0;
  int rails = 1;
  std::uint64_t unroutedFlows = 0;
  double objective = -1e9;
  std::uint32_t bottleneckFlows = 0;
  /// The hottest links (PlacementLimits::hottestLinks) with the job's flows on them, when
  /// hasHottest.
  std::vector<std::pair<DirectedLinkId, std::uint32_t>> hottest;
  bool hasHottest = false;
};

std::string gbps(double bytesPerSecond) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytesPerSecond / 1e9);
  return buf;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", fraction * 100.0);
  return buf;
}

}  // namespace

struct PlacementEngine::Impl {
  const PlacementIndex& ix;
  const LinkLoadModel& load;
  const PlacementLimits& limits;
  const std::vector<double>& residual;     // per directed link
  const std::vector<double>& utilization;  // per directed link
  std::vector<std::uint32_t> flows;
  std::vector<DirectedLinkId> touched, hot;
  std::vector<std::uint32_t> nodeStamp;
  std::uint32_t stamp = 0;
  std::uint64_t work = 0;
  EpochMarks inRing;  // refineRingEntries()

  Impl(const PlacementIndex& index, const LinkLoadModel& model, const PlacementLimits& lim,
       const std::vector<double>& res, const std::vector<double>& util)
      : ix(index), load(model), limits(lim), residual(res), utilization(util) {
    flows.assign(load.size(), 0);
    nodeStamp.assign(ix.topology().nodes().size(), 0);
  }

  void add(DirectedLinkId d, std::uint32_t count) {
    if (flows[d] == 0) touched.push_back(d);
    flows[d] += count;
    ++work;
  }
  void reset() {
    for (DirectedLinkId d : touched) flows[d] = 0;
    touched.clear();
    base.valid = false;
    ring.valid = false;
  }

  double hostQuality(HostId h) const {
    double q = 1.0;
    for (const auto& hca : ix.hosts()[h].hcas) {
      if (!hca.cabled) return 0.0;
      q = std::min({q, residual[hca.tx] / ix.referenceBytesPerSecond(),
                    residual[hca.rx] / ix.referenceBytesPerSecond()});
    }
    return q;
  }

  /// Fraction of the leaves' up-link capacity still free, worst leaf and worst direction.
  double blockQuality(int block) const {
    double q = 1.0;
    for (NodeIndex leaf : ix.blocks()[block].leaves) {
      double capUp = 0, freeUp = 0, capDown = 0, freeDown = 0;
      for (int p : ix.upPorts(leaf)) {
        DirectedLinkId tx = ix.slot(leaf, p).tx;
        capUp += load.at(tx).capacityBytesPerSecond;
        freeUp += residual[tx];
        capDown += load.at(tx ^ 1u).capacityBytesPerSecond;
        freeDown += residual[tx ^ 1u];
      }
      if (capUp > 0) q = std::min(q, freeUp / capUp);
      if (capDown > 0) q = std::min(q, freeDown / capDown);
    }
    return q;
  }

  /// Calls f(HCA of `from`, HCA of `to`) for every rail both hosts have (HCAs matched by HCA
  /// index), in rail order, while f returns true. False when f stopped it.
  template <typename F>
  bool forEachRail(HostId from, HostId to, F&& f) const {
    const auto& a = ix.hosts()[from].hcas;
    const auto& b = ix.hosts()[to].hcas;
    std::size_t x = 0, y = 0;
    while (x < a.size() && y < b.size()) {
      if (a[x].hcaIndex < b[y].hcaIndex) {
        ++x;
      } else if (b[y].hcaIndex < a[x].hcaIndex) {
        ++y;
      } else if (!f(a[x++], b[y++])) {
        return false;
      }
    }
    return true;
  }

  /// One ring edge, host `from` to host `to`, rail by rail (HCA k of one host to HCA k of the
  /// next, merged by HCA index): adds its flows (`sign` > 0) or takes them off. Returns the most
  /// switches any of its routes crosses; counts its flows without a route into `unrouted`.
  int ringEdge(HostId from, HostId to, int sign, std::uint32_t& unrouted) {
    auto onLink = [&](DirectedLinkId d) {
      if (sign > 0) {
        add(d, 1);
      } else {
        --flows[d];
        ++work;
      }
    };
    int maxHops = 0;
    forEachRail(from, to, [&](const PlacementIndex::Hca& src, const PlacementIndex::Hca& dst) {
      if (!src.cabled || !dst.cabled) {
        ++unrouted;
        return true;
      }
      onLink(src.tx);
      int hops = ix.traceFromSwitch(src.leaf, dst.lid, dst.node, onLink);
      if (hops < 0) {
        ++unrouted;
      } else {
        maxHops = std::max(maxHops, hops);
      }
      return true;
    });
    return maxHops;
  }

  // --- Incremental ring.
  //
  // The flows of the last ring order scored stay in place (`ring`). An order of the same hosts
  // count that differs from it in a few positions changes only the edges next to those
  // positions: their old flows come off, the new ones go on, and the bottleneck is read over the
  // links touched. The same numbers as a full evaluation (PlacementLimits::incrementalRing).
  struct RingState {
    bool valid = false;
    Order order;
    std::vector<int> edgeHops;                // per edge i (order[i] -> order[i + 1])
    std::vector<std::uint32_t> edgeUnrouted;  // per edge
    std::array<std::uint32_t, PlacementIndex::kMaxSwitchHops + 1> edgesByHops{};
    std::uint64_t unrouted = 0;
    std::uint64_t work = 0;  // of its full evaluation
  } ring;
  static constexpr std::size_t kMaxRingChanges = 8;
  std::vector<std::size_t> changedEdges;
  EpochMarks linkSeen;

  void addRing(const Order& order, Eval& e) {
    const std::size_t n = order.size();
    const std::uint64_t before = work;
    ring.order = order;
    ring.edgeHops.assign(n, 0);
    ring.edgeUnrouted.assign(n, 0);
    ring.edgesByHops.fill(0);
    ring.unrouted = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ring.edgeHops[i] = ringEdge(order[i], order[(i + 1) % n], 1, ring.edgeUnrouted[i]);
      ++ring.edgesByHops[static_cast<std::size_t>(ring.edgeHops[i])];
      ring.unrouted += ring.edgeUnrouted[i];
    }
    ring.work = work - before;
    ring.valid = limits.incrementalRing;
    readRing(e);
  }

  void readRing(Eval& e) const {
    e.unroutedFlows = ring.unrouted;
    e.maxHops = 0;
    for (std::size_t h = ring.edgesByHops.size(); h-- > 0;) {
      if (ring.edgesByHops[h] > 0) {
        e.maxHops = static_cast<int>(h);
        break;
      }
    }
  }

  /// `order` from the ring state when it differs in at most kMaxRingChanges positions.
  bool ringFromState(const Order& order, Eval& e) {
    const std::size_t n = order.size();
    if (!ring.valid || n != ring.order.size() || n < 2) return false;
    changedEdges.clear();
    std::size_t changes = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (order[i] == ring.order[i]) continue;
      if (++changes > kMaxRingChanges) return false;
      changedEdges.push_back((i + n - 1) % n);
      changedEdges.push_back(i);
    }
    std::sort(changedEdges.begin(), changedEdges.end());
    changedEdges.erase(std::unique(changedEdges.begin(), changedEdges.end()), changedEdges.end());
    const std::uint64_t before = work;
    for (std::size_t k : changedEdges) {
      std::uint32_t dropped = 0;
      ringEdge(ring.order[k], ring.order[(k + 1) % n], -1, dropped);
      --ring.edgesByHops[static_cast<std::size_t>(ring.edgeHops[k])];
      ring.unrouted -= ring.edgeUnrouted[k];
    }
    for (std::size_t i = 0; i < n; ++i) ring.order[i] = order[i];
    for (std::size_t k : changedEdges) {
      ring.edgeUnrouted[k] = 0;
      ring.edgeHops[k] = ringEdge(order[k], order[(k + 1) % n], 1, ring.edgeUnrouted[k]);
      ++ring.edgesByHops[static_cast<std::size_t>(ring.edgeHops[k])];
      ring.unrouted += ring.edgeUnrouted[k];
    }
    // Links whose flows came off entirely leave the list; links put back on are listed once.
    linkSeen.clear(load.size());
    std::size_t kept = 0;
    for (DirectedLinkId d : touched) {
      if (flows[d] > 0 && linkSeen.mark(d)) touched[kept++] = d;
    }
    touched.resize(kept);
    // Charged like the full evaluation it stands for: the work budget buys the same moves.
    work = std::max(work, before + ring.work);
    readRing(e);
    return true;
  }

  // --- Alltoall.
  //
  // Every rank sends to every other rank of its rail. LID routing depends only on the destination,
  // so the flows to one destination form a tree: all flows from one source leaf share the path
  // from that leaf on, and flows from different leaves merge where their paths meet. Per
  // destination, each source leaf's path is walked only until it meets a switch already reached
  // for that destination; the flow counts are then pushed down the tree once, farthest switch
  // first. Exact: the same flows per link as tracing every (source, destination) pair.

  using Column = std::uint32_t;
  static constexpr Column kNoColumn = PlacementIndex::kNoColumn;
  struct Walk {  // per switch column, for the current destination (valid when stamp == walkStamp)
    std::uint32_t stamp = 0;
    std::int64_t acc = 0;  // flows that leave this switch towards the destination
    DirectedLinkId tx = PlacementIndex::kNoLink;
    Column next = kNoColumn;  // the next switch, kNoColumn at the end of the path
    int height = 0;           // switches from here to the end of the path (0 = being walked)
    bool routed = false;      // the path from here reaches the destination
  };
  std::vector<Walk> walk;
  std::uint32_t walkStamp = 0;
  std::vector<Column> walked, path;
  std::vector<std::uint32_t> segments;  // start of each walk's switches in `walked`
  std::vector<std::uint8_t> rowScratch;
  // Rails of the current order: rail ids (HCA indices, ascending) and their members.
  std::vector<int> railIds;
  std::vector<std::vector<const PlacementIndex::Hca*>> railMembers;  // cabled HCAs
  std::vector<std::uint32_t> uncabled;  // per rail: HCAs without a link (no route at all)
  // Source leaves of one rail (by column) with their member counts.
  std::vector<std::uint32_t> leafCount;  // valid where leafSeen is marked
  EpochMarks leafSeen;
  std::vector<std::pair<Column, std::uint32_t>> srcLeaves;

  void groupRails(const Order& order) {
    railIds.clear();
    for (HostId h : order) {
      for (const auto& hca : ix.hosts()[h].hcas) {
        if (std::find(railIds.begin(), railIds.end(), hca.hcaIndex) == railIds.end()) {
          railIds.push_back(hca.hcaIndex);
        }
      }
    }
    std::sort(railIds.begin(), railIds.end());
    if (railMembers.size() < railIds.size()) railMembers.resize(railIds.size());
    for (auto& m : railMembers) m.clear();
    uncabled.assign(railIds.size(), 0);
    for (HostId h : order) {
      for (const auto& hca : ix.hosts()[h].hcas) {
        auto r = static_cast<std::size_t>(
            std::lower_bound(railIds.begin(), railIds.end(), hca.hcaIndex) - railIds.begin());
        if (hca.cabled && hca.leafColumn != kNoColumn) {
          railMembers[r].push_back(&hca);
        } else {
          ++uncabled[r];
        }
      }
    }
  }

  /// Source leaves of `members` (first appearance order) with their counts, into srcLeaves.
  void countLeaves(const std::vector<const PlacementIndex::Hca*>& members) {
    countLeaves(members, srcLeaves);
  }
  void countLeaves(const std::vector<const PlacementIndex::Hca*>& members,
                   std::vector<std::pair<Column, std::uint32_t>>& out) {
    if (leafCount.empty()) leafCount.assign(ix.switchCount(), 0);
    leafSeen.clear(ix.switchCount());
    out.clear();
    for (const auto* hca : members) {
      Column c = hca->leafColumn;
      if (leafSeen.mark(c)) {
        leafCount[c] = 0;
        out.emplace_back(c, 0);
      }
      ++leafCount[c];
    }
    for (auto& [c, count] : out) count = leafCount[c];
  }

  /// Flows from the source leaves (minus the destination itself) to `dst`, merged per switch.
  void routeToDestination(const PlacementIndex::Hca& dst, Eval& e) {
    routeTree(
        dst, srcLeaves, true,
        [&](DirectedLinkId d, std::int64_t count) { add(d, static_cast<std::uint32_t>(count)); },
        [&](std::int64_t count, int height, bool routed) {
          if (routed) {
            e.maxHops = std::max(e.maxHops, height);
            hopFlows[static_cast<std::size_t>(height)] += static_cast<std::uint64_t>(count);
          } else {
            e.unroutedFlows += static_cast<std::uint64_t>(count);
          }
        });
  }

  /// The flows from `leaves` (source leaf, sources on it; minus `dst` itself when it is one of
  /// the sources) to `dst`, merged per switch: onLink(directed link, flows) once per link of the
  /// tree, onSource(flows, switches to the destination, routed) once per source leaf.
  /// Counts may be negative (a change of the sources: flows that cancel are not pushed on).
  template <typename LeafList, typename OnLink, typename OnSource>
  void routeTree(const PlacementIndex::Hca& dst, const LeafList& leaves, bool dstIsSource,
                 OnLink&& onLink, OnSource&& onSource) {
    if (walk.empty()) walk.resize(ix.switchCount());
    if (++walkStamp == 0) {
      for (auto& w : walk) w.stamp = 0;
      walkStamp = 1;
    }
    const std::uint8_t* row = ix.destinationRow(dst.lid);
    if (!row) {
      rowScratch.resize(ix.switchCount());
      ix.fillRow(dst.lid, rowScratch.data());
      row = rowScratch.data();
    }
    walked.clear();
    segments.clear();
    for (const auto& [leaf, count] : leaves) {
      const std::int64_t c =
          static_cast<std::int64_t>(count) - (dstIsSource && dst.leafColumn == leaf ? 1 : 0);
      if (c == 0) continue;
      // Walk until a switch already reached for this destination (or the end of the path).
      path.clear();
      segments.push_back(static_cast<std::uint32_t>(walked.size()));
      Column cur = leaf;
      while (walk[cur].stamp != walkStamp) {
        Walk& w = walk[cur];
        w = Walk{};
        w.stamp = walkStamp;
        path.push_back(cur);
        walked.push_back(cur);
        ++work;
        const PlacementIndex::Hop* h =
            row[cur] == SwitchTable::kNoPort ? nullptr : ix.hop(cur, row[cur]);
        if (!h || h->tx == PlacementIndex::kNoLink) {
          w.height = 1;
          break;
        }
        w.tx = h->tx;
        if (!h->toSwitch()) {
          w.height = 1;
          w.routed = h->toCa(dst.node);
          break;
        }
        w.next = h->remote;
        cur = h->remote;
      }
      // Heights back along the new part of the path.
      for (std::size_t i = path.size(); i-- > 0;) {
        Walk& w = walk[path[i]];
        if (w.height == 0) {
          const Walk& n = walk[w.next];
          if (n.height == 0) {  // a loop back into this path: it ends here, unrouted
            w.next = kNoColumn;
            w.height = 1;
          } else {
            w.height = n.height + 1;
            w.routed = n.routed && w.height <= PlacementIndex::kMaxSwitchHops;
          }
        }
      }
      Walk& src = walk[leaf];
      src.acc += c;
      onSource(c, src.height, src.routed);
    }
    // Push the counts down the tree. A walk's new switches lead only to themselves or to switches
    // of earlier walks: the walks in reverse order, each from its source on, is a topological
    // order.
    segments.push_back(static_cast<std::uint32_t>(walked.size()));
    for (std::size_t k = segments.size() - 1; k-- > 0;) {
      for (std::uint32_t i = segments[k]; i < segments[k + 1]; ++i) {
        const Walk& w = walk[walked[i]];
        if (w.acc == 0) continue;
        if (w.tx != PlacementIndex::kNoLink) onLink(w.tx, w.acc);
        if (w.next != kNoColumn) walk[w.next].acc += w.acc;
      }
    }
  }

  void addAllToAll(const Order& order, Eval& e) {
    groupRails(order);
    for (std::size_t r = 0; r < railIds.size(); ++r) {
      const auto& members = railMembers[r];
      const auto m = static_cast<std::uint32_t>(members.size());
      if (m + uncabled[r] >= 2) e.unroutedFlows += 2ull * uncabled[r] * (m + uncabled[r] - 1);
      if (m < 2) continue;
      for (const auto* hca : members) add(hca->tx, m - 1);
      countLeaves(members);
      forEachInRowOrder(members,
                        [&](const PlacementIndex::Hca& dst) { routeToDestination(dst, e); });
    }
  }
  std::vector<const PlacementIndex::Hca*> dsts;
  /// Calls f(HCA) for `hcas` in the order of their rows in the LFT copy (an alltoall's flows do
  /// not depend on the order of destinations), the next row prefetched: the walks stream through
  /// the copy.
  template <typename F>
  void forEachInRowOrder(const std::vector<const PlacementIndex::Hca*>& hcas, F&& f) {
    dsts.assign(hcas.begin(), hcas.end());
    std::sort(dsts.begin(), dsts.end(), [&](const auto* x, const auto* y) {
      return ix.rowPosition(x->lid) < ix.rowPosition(y->lid);
    });
    for (std::size_t i = 0; i < dsts.size(); ++i) {
      if (i + 1 < dsts.size()) {
        if (const std::uint8_t* next = ix.destinationRow(dsts[i + 1]->lid)) {
          for (std::size_t b = 0; b < ix.switchCount(); b += 64) __builtin_prefetch(next + b);
        }
      }
      f(*dsts[i]);
    }
  }

  // --- Incremental alltoall.
  //
  // The flows of the last alltoall evaluated in full stay in `flows` (the base, set S). Another
  // host set T = K + U (K = S minus the hosts X it drops, U = the hosts it adds) differs from S
  // by the pairs that involve X or U, per rail:
  //   flows(T) - flows(S) = [K -> U] + [U -> K] + [U -> U] - [K -> X] - [X -> K] - [X -> X]
  // [X -> K] + [X -> X] is, per destination of S, the merged tree from X's source leaves only;
  // [K -> X] is, per destination in X, the tree from K's source leaves (the same for U and T).
  // These few trees go into a separate delta (`delta`, `deltaTouched`); the bottleneck, hop
  // count and hottest links are then read from base + delta: exactly the numbers of a full
  // evaluation, for a fraction of its walks when X and U are small (a local-search swap: one
  // host each). evaluate() picks whichever is cheaper.

  /// Per hop count (switches), the routed flows of the evaluation in `flows`.
  std::array<std::uint64_t, PlacementIndex::kMaxSwitchHops + 1> hopFlows{};
  struct Base {
    bool valid = false;
    std::vector<char> in;  // per host: in S
    Order hosts;           // S
    std::array<std::uint64_t, PlacementIndex::kMaxSwitchHops + 1> hopFlows{};
    std::uint64_t work = 0;  // of its full evaluation
  } base;
  std::vector<std::int64_t> delta;  // per directed link, valid where deltaSeen is marked
  EpochMarks deltaSeen;
  std::vector<DirectedLinkId> deltaTouched;
  std::array<std::int64_t, PlacementIndex::kMaxSwitchHops + 1> deltaHops{};
  std::vector<char> inOrder;  // per host: in the order being evaluated
  using Members = std::vector<const PlacementIndex::Hca*>;
  using Leaves = std::vector<std::pair<Column, std::uint32_t>>;
  struct RailDelta {
    int id = 0;
    Members kept, dropped, added;
    Leaves keptLeaves, droppedLeaves, addedLeaves;
    // Net change of the source leaves a kept destination sees (signed counts).
    std::vector<std::pair<Column, std::int64_t>> netFrom;
  };
  // The base's links with the smallest shares and the hottest ones, best first (a change rarely
  // touches them all: then the full lists are scanned).
  static constexpr std::size_t kBaseTop = 64;
  std::vector<DirectedLinkId> baseByShare, baseByHeat;
  std::vector<std::int64_t> netLeaf;  // per switch column, scratch
  std::vector<RailDelta> railDelta;

  void addDelta(DirectedLinkId d, std::int64_t count) {
    if (deltaSeen.mark(d)) {
      delta[d] = 0;
      deltaTouched.push_back(d);
    }
    delta[d] += count;
    ++work;
  }
  std::int64_t flowsAfter(DirectedLinkId d) const {
    return static_cast<std::int64_t>(flows[d]) + (deltaSeen.marked(d) ? delta[d] : 0);
  }

  /// Keeps the evaluation now in `flows` (of `order`) as the base when it can serve as one.
  void keepBase(const Order& order, const Eval& e, std::uint64_t fullWork) {
    if (!limits.incrementalAllToAll || e.unroutedFlows > 0) return;
    for (std::size_t r = 0; r < railIds.size(); ++r) {
      if (uncabled[r] > 0) return;
    }
    base.in.assign(ix.hosts().size(), 0);
    for (HostId h : order) base.in[h] = 1;
    base.hosts = order;
    base.hopFlows = hopFlows;
    base.work = fullWork;
    base.valid = true;
    auto byShare = [&](DirectedLinkId a, DirectedLinkId b) {
      double sa = residual[a] / flows[a], sb = residual[b] / flows[b];
      if (sa != sb) return sa < sb;
      return a < b;
    };
    auto byHeat = [&](DirectedLinkId a, DirectedLinkId b) {
      double ua = utilization[a], ub = utilization[b];
      if (ua != ub) return ua > ub;
      return byShare(a, b);
    };
    for (auto* list : {&baseByShare, &baseByHeat}) {
      list->assign(touched.begin(), touched.end());
      const std::size_t k = std::min(list->size(), kBaseTop);
      auto mid = list->begin() + static_cast<std::ptrdiff_t>(k);
      if (list == &baseByShare) {
        std::partial_sort(list->begin(), mid, list->end(), byShare);
      } else {
        std::partial_sort(list->begin(), mid, list->end(), byHeat);
      }
      list->resize(k);
    }
  }

  /// Walks of the merged trees to `dsts`: (switches per walk ~ 2 per source leaf + 3).
  static double treeCost(std::size_t destinations, std::size_t sourceLeaves) {
    return sourceLeaves == 0 ? 0.0
                             : static_cast<double>(destinations) *
                                   (2.0 * static_cast<double>(sourceLeaves) + 3.0);
  }

  /// True when `order` is the host set whose alltoall flows are in place (scored last in full).
  bool isBase(const Order& order) const {
    if (!base.valid || order.size() != base.hosts.size()) return false;
    for (HostId h : order) {
      if (!base.in[h]) return false;
    }
    return true;
  }

  /// The alltoall of `order` from the base (see above), or false when a full evaluation is
  /// cheaper or needed (a flow without a route, an HCA without a cable).
  bool allToAllFromBase(const Order& order, Eval& e) {
    if (inOrder.size() != ix.hosts().size()) inOrder.assign(ix.hosts().size(), 0);
    for (HostId h : order) inOrder[h] = 1;
    struct Clear {
      std::vector<char>& in;
      const Order& order;
      ~Clear() {
        for (HostId h : order) in[h] = 0;
      }
    } clear{inOrder, order};
    // Rails of S and T, split into kept, dropped and added HCAs.
    railIds.clear();
    auto railOf = [&](int id) -> RailDelta& {
      auto it = std::lower_bound(railIds.begin(), railIds.end(), id);
      auto r = static_cast<std::size_t>(it - railIds.begin());
      if (it == railIds.end() || *it != id) {
        railIds.insert(it, id);
        railDelta.insert(railDelta.begin() + static_cast<std::ptrdiff_t>(r), RailDelta{});
        railDelta[r].id = id;
      }
      return railDelta[r];
    };
    railDelta.clear();
    for (HostId h : base.hosts) {
      const bool kept = inOrder[h] != 0;
      for (const auto& hca : ix.hosts()[h].hcas) {
        RailDelta& rd = railOf(hca.hcaIndex);
        (kept ? rd.kept : rd.dropped).push_back(&hca);
      }
    }
    for (HostId h : order) {
      if (base.in[h]) continue;
      for (const auto& hca : ix.hosts()[h].hcas) {
        if (!hca.cabled || hca.leafColumn == kNoColumn) return false;
        railOf(hca.hcaIndex).added.push_back(&hca);
      }
    }
    // Cost of the delta against a full evaluation, in walked switches.
    double deltaCost = 0, fullCost = 0;
    if (netLeaf.empty()) netLeaf.assign(ix.switchCount(), 0);
    for (RailDelta& rd : railDelta) {
      countLeaves(rd.kept, rd.keptLeaves);
      countLeaves(rd.dropped, rd.droppedLeaves);
      countLeaves(rd.added, rd.addedLeaves);
      // A kept destination sees the added sources minus the dropped ones: only the leaves whose
      // count changes matter (none for a swap within one leaf).
      for (const auto& [c, n] : rd.addedLeaves) netLeaf[c] += n;
      for (const auto& [c, n] : rd.droppedLeaves) netLeaf[c] -= n;
      rd.netFrom.clear();
      for (const Leaves* list : {&rd.droppedLeaves, &rd.addedLeaves}) {
        for (const auto& [c, n] : *list) {
          if (netLeaf[c] != 0) rd.netFrom.emplace_back(c, netLeaf[c]);
          netLeaf[c] = 0;
        }
      }
      const std::size_t t = rd.kept.size() + rd.added.size();
      deltaCost += treeCost(rd.kept.size(), rd.netFrom.size()) +
                   treeCost(rd.dropped.size(), rd.droppedLeaves.size() + rd.keptLeaves.size()) +
                   treeCost(rd.added.size(), rd.addedLeaves.size() + rd.keptLeaves.size());
      // A full evaluation walks T's leaves (at most the kept + added ones) for every destination.
      fullCost += treeCost(t, rd.keptLeaves.size() + rd.addedLeaves.size());
    }
    if (deltaCost > 0.6 * fullCost) return false;

    if (delta.empty()) delta.assign(load.size(), 0);
    deltaSeen.clear(load.size());
    deltaTouched.clear();
    deltaHops.fill(0);
    bool unrouted = false;
    auto tree = [&](const PlacementIndex::Hca& dst, const auto& from, bool dstIsSource,
                    std::int64_t sign) {
      routeTree(
          dst, from, dstIsSource,
          [&](DirectedLinkId d, std::int64_t count) { addDelta(d, sign * count); },
          [&](std::int64_t count, int height, bool routed) {
            if (!routed) {
              unrouted = unrouted || count != 0;
            } else {
              deltaHops[static_cast<std::size_t>(height)] += sign * count;
            }
          });
    };
    for (const RailDelta& rd : railDelta) {
      const auto s = static_cast<std::int64_t>(rd.kept.size() + rd.dropped.size());
      const auto t = static_cast<std::int64_t>(rd.kept.size() + rd.added.size());
      const std::int64_t perHcaS = s >= 2 ? s - 1 : 0, perHcaT = t >= 2 ? t - 1 : 0;
      // Each HCA's own link carries one flow per other member of its rail.
      if (perHcaS != perHcaT) {
        for (const auto* hca : rd.kept) addDelta(hca->tx, perHcaT - perHcaS);
      }
      for (const auto* hca : rd.dropped) {
        if (perHcaS) addDelta(hca->tx, -perHcaS);
      }
      for (const auto* hca : rd.added) {
        if (perHcaT) addDelta(hca->tx, perHcaT);
      }
      for (const auto* d : rd.dropped) {
        tree(*d, rd.droppedLeaves, true, -1);
        tree(*d, rd.keptLeaves, false, -1);
      }
      for (const auto* d : rd.added) {
        tree(*d, rd.addedLeaves, true, +1);
        tree(*d, rd.keptLeaves, false, +1);
      }
      if (!rd.netFrom.empty()) {
        forEachInRowOrder(
            rd.kept, [&](const PlacementIndex::Hca& dst) { tree(dst, rd.netFrom, false, +1); });
      }
      if (unrouted) break;
    }
    if (unrouted) return false;

    // Bottleneck: the smallest share over the links with flows after the change (ties: the
    // smaller link id), as a full evaluation finds it.
    e.bottleneck = std::numeric_limits<double>::infinity();
    bool any = false;
    auto consider = [&](DirectedLinkId d, std::int64_t f) {
      any = true;
      double share = residual[d] / static_cast<double>(f);
      if (share < e.bottleneck ||
          (share == e.bottleneck &&
           (e.bottleneckLink == PlacementIndex::kNoLink || d < e.bottleneckLink))) {
        e.bottleneck = share;
        e.bottleneckLink = d;
      }
    };
    // The base's smallest unchanged share: the first unchanged link of its list (all of them
    // when every listed one changed).
    bool found = false;
    for (DirectedLinkId d : baseByShare) {
      if (deltaSeen.marked(d)) continue;
      consider(d, flows[d]);
      found = true;
      break;
    }
    if (!found) {
      for (DirectedLinkId d : touched) {
        if (!deltaSeen.marked(d)) consider(d, flows[d]);
      }
    }
    for (DirectedLinkId d : deltaTouched) {
      std::int64_t f = flows[d] + delta[d];
      if (f > 0) consider(d, f);
    }
    if (!any) e.bottleneck = ix.referenceBytesPerSecond();
    if (e.bottleneckLink != PlacementIndex::kNoLink) {
      e.bottleneckFlows = static_cast<std::uint32_t>(flowsAfter(e.bottleneckLink));
    }
    for (std::size_t h = base.hopFlows.size(); h-- > 0;) {
      if (static_cast<std::int64_t>(base.hopFlows[h]) + deltaHops[h] > 0) {
        e.maxHops = static_cast<int>(h);
        break;
      }
    }
    // Hottest links, as listHottest() orders them.
    auto hotter = [&](DirectedLinkId a, DirectedLinkId b) {
      double ua = utilization[a], ub = utilization[b];
      if (ua != ub) return ua > ub;
      double sa = residual[a] / static_cast<double>(flowsAfter(a));
      double sb = residual[b] / static_cast<double>(flowsAfter(b));
      if (sa != sb) return sa < sb;
      return a < b;
    };
    hot.clear();
    std::size_t unchanged = 0;
    for (DirectedLinkId d : baseByHeat) {
      if (unchanged == limits.hottestLinks) break;
      if (deltaSeen.marked(d)) continue;
      hot.push_back(d);
      ++unchanged;
    }
    if (unchanged < limits.hottestLinks) {  // the list ran out: every unchanged link
      hot.clear();
      for (DirectedLinkId d : touched) {
        if (!deltaSeen.marked(d)) hot.push_back(d);
      }
      work += touched.size() / 8;  // the scan, charged like link visits
    }
    for (DirectedLinkId d : deltaTouched) {
      if (flows[d] + delta[d] > 0) hot.push_back(d);
    }
    const std::size_t k = std::min(hot.size(), limits.hottestLinks);
    std::partial_sort(hot.begin(), hot.begin() + static_cast<std::ptrdiff_t>(k), hot.end(), hotter);
    for (std::size_t i = 0; i < k; ++i) {
      e.hottest.emplace_back(hot[i], static_cast<std::uint32_t>(flowsAfter(hot[i])));
    }
    e.hasHottest = true;
    return true;
  }

  /// Residual capacity of a leaf's switch-facing ports, out of the leaf and into it.
  struct LeafResidual {
    bool known = false;
    double out = 0.0;
    double in = 0.0;
  };
  std::vector<LeafResidual> leafResidual;
  std::vector<double> leafFlows;

  /// An upper bound of evaluate(order, kAllToAll).objective, in O(HCAs): every flow between two
  /// leaves leaves its source leaf and enters its destination leaf through switch-facing ports,
  /// so some such port of leaf L carries a share of at most (their residual) / (flows crossing
  /// them); each HCA link carries m - 1 flows of its rail.
  double allToAllBound(const Order& order) {
    groupRails(order);
    if (leafResidual.empty()) {
      leafResidual.resize(ix.switchCount());
      leafFlows.assign(ix.switchCount(), 0.0);
    }
    double b = std::numeric_limits<double>::infinity();
    bool anyFlow = false;
    std::vector<Column>& leaves = walked;  // scratch
    leaves.clear();
    for (std::size_t r = 0; r < railIds.size(); ++r) {
      const auto& members = railMembers[r];
      const auto m = static_cast<std::uint32_t>(members.size());
      if (m < 2) continue;
      anyFlow = true;
      const double flowsPerHca = m - 1;
      for (const auto* hca : members) {
        b = std::min({b, residual[hca->tx] / flowsPerHca, residual[hca->rx] / flowsPerHca});
      }
      countLeaves(members);
      for (const auto& [leaf, count] : srcLeaves) {
        if (leafFlows[leaf] == 0.0) leaves.push_back(leaf);
        leafFlows[leaf] += static_cast<double>(count) * static_cast<double>(m - count);
      }
    }
    for (Column leaf : leaves) {
      LeafResidual& lr = leafResidual[leaf];
      if (!lr.known) {
        lr.known = true;
        for (int p = 0;; ++p) {
          const PlacementIndex::Hop* h = ix.hop(leaf, p);
          if (!h) break;
          if (h->tx == PlacementIndex::kNoLink || !h->toSwitch()) continue;
          lr.out += residual[h->tx];
          lr.in += residual[h->tx ^ 1u];
        }
      }
      const double f = leafFlows[leaf];
      leafFlows[leaf] = 0.0;
      if (f > 0) b = std::min({b, lr.out / f, lr.in / f});
    }
    // Charged like the link visits of an evaluation: one per HCA, comparable time.
    for (std::size_t r = 0; r < railIds.size(); ++r) work += railMembers[r].size();
    if (!anyFlow || b == std::numeric_limits<double>::infinity()) b = ix.referenceBytesPerSecond();
    // The hop term: maxHops is at least the length of any one flow's route, so trace two flows
    // per rail (the first rank's leaf to the last rank and back: they usually cross the most
    // switches). A flow without a route makes the bottleneck 0.
    int hops = 0;
    for (std::size_t r = 0; r < railIds.size(); ++r) {
      const auto& members = railMembers[r];
      if (members.size() < 2) continue;
      for (int k = 0; k < 2; ++k) {
        const auto* src = k == 0 ? members.front() : members.back();
        const auto* dst = k == 0 ? members.back() : members.front();
        int h = ix.traceFromSwitch(src->leaf, dst->lid, dst->node, [](DirectedLinkId) {});
        if (h < 0) return 0.0;  // a flow without a route: bottleneck 0
        hops = std::max(hops, h);
      }
    }
    return objectiveOf(b / ix.referenceBytesPerSecond(), leafSets(order), order.size(), hops);
  }

  /// A tighter upper bound of evaluate(order, kAllToAll).objective, for the candidates the cheap
  /// one cannot rule out (+infinity without the LFT copy's rows). A flow leaves its source leaf
  /// on the port the leaf's table gives for its destination, so the job's flows on every leaf's
  /// switch-facing links are known exactly from one table byte per (source leaf, destination),
  /// without walking the routes; the bottleneck is at most their smallest share. Sharper than the
  /// cheap bound when routes load a leaf's up-links unevenly against their residuals (a hot
  /// up-link carries its share of the destinations whatever its load).
  std::vector<std::uint32_t> firstHopFlows;
  std::vector<DirectedLinkId> firstHopTouched;
  double allToAllFirstHopBound(const Order& order) {
    groupRails(order);
    if (firstHopFlows.empty()) firstHopFlows.assign(load.size(), 0);
    for (std::size_t r = 0; r < railIds.size(); ++r) {
      for (const auto* dst : railMembers[r]) {
        if (!ix.destinationRow(dst->lid)) return std::numeric_limits<double>::infinity();
      }
    }
    for (std::size_t r = 0; r < railIds.size(); ++r) {
      const auto& members = railMembers[r];
      if (members.size() < 2) continue;
      countLeaves(members);
      for (const auto* dst : members) {
        const std::uint8_t* row = ix.destinationRow(dst->lid);
        for (const auto& [leaf, count] : srcLeaves) {
          if (leaf == dst->leafColumn || row[leaf] == SwitchTable::kNoPort) continue;
          const PlacementIndex::Hop* hop = ix.hop(leaf, row[leaf]);
          if (!hop || hop->tx == PlacementIndex::kNoLink) continue;
          if (firstHopFlows[hop->tx] == 0) firstHopTouched.push_back(hop->tx);
          firstHopFlows[hop->tx] += count;
        }
      }
      work += srcLeaves.size() * members.size() / 8;  // table bytes, not walks
    }
    double b = std::numeric_limits<double>::infinity();
    for (DirectedLinkId d : firstHopTouched) {
      b = std::min(b, residual[d] / firstHopFlows[d]);
      firstHopFlows[d] = 0;
    }
    firstHopTouched.clear();
    if (b == std::numeric_limits<double>::infinity()) return b;
    return objectiveOf(b / ix.referenceBytesPerSecond(), leafSets(order), order.size(), 0);
  }

  /// Leaf switches spanned / HCAs per host: the objective's leaf term.
  double leafSets(const Order& order) {
    ++stamp;
    int leafSwitches = 0, rails = 1;
    for (HostId h : order) {
      const auto& info = ix.hosts()[h];
      rails = std::max(rails, static_cast<int>(info.hcas.size()));
      for (const auto& hca : info.hcas) {
        if (!hca.cabled || nodeStamp[hca.leaf] == stamp) continue;
        nodeStamp[hca.leaf] = stamp;
        ++leafSwitches;
      }
    }
    return static_cast<double>(leafSwitches) / std::max(1, rails);
  }

  /// An upper bound of evaluate(order, pattern).objective (+infinity when none is cheap).
  double upperBound(const Order& order, CommPattern pattern) {
    if (pattern != CommPattern::kAllToAll || order.size() < 2) {
      return std::numeric_limits<double>::infinity();
    }
    return allToAllBound(order);
  }

  void addHostLinks(const Order& order) {
    for (HostId h : order) {
      for (const auto& hca : ix.hosts()[h].hcas) {
        add(hca.tx, 1);
        add(hca.rx, 1);
      }
    }
  }

  /// Scores `order`; leaves the flow counts in place (call reset()). The hottest links are
  /// listed when `withHottest`, and always for alltoall (few, costly evaluations: listing them
  /// is cheaper than evaluating the answer again).
  Eval evaluate(const Order& order, CommPattern pattern, bool withHottest = false) {
    const bool allToAll = pattern == CommPattern::kAllToAll && order.size() >= 2;
    if (allToAll && base.valid) {
      Eval e;
      const std::uint64_t before = work;
      if (allToAllFromBase(order, e)) {
        // Charged like the full evaluation it stands for: the work budget buys the same moves
        // as without the shortcut, in less time.
        work = std::max(work, before + base.work);
        finish(order, e);
        return e;
      }
    }
    Eval e;
    const bool ringAllreduce = pattern == CommPattern::kRingAllreduce && order.size() >= 2;
    if (!ringAllreduce || !ringFromState(order, e)) reset();
    if (pattern == CommPattern::kNone || order.size() < 2) {
      addHostLinks(order);
    } else if (ringAllreduce) {
      if (!ring.valid) addRing(order, e);
    } else {
      hopFlows.fill(0);
      const std::uint64_t before = work;
      addAllToAll(order, e);
      keepBase(order, e, work - before);
    }
    e.bottleneck = std::numeric_limits<double>::infinity();
    for (DirectedLinkId d : touched) {
      double share = residual[d] / flows[d];
      if (share < e.bottleneck ||
          (share == e.bottleneck &&
           (e.bottleneckLink == PlacementIndex::kNoLink || d < e.bottleneckLink))) {
        e.bottleneck = share;
        e.bottleneckLink = d;
      }
    }
    if (touched.empty()) e.bottleneck = ix.referenceBytesPerSecond();
    if (e.unroutedFlows > 0) e.bottleneck = 0.0;
    if (e.bottleneckLink != PlacementIndex::kNoLink) e.bottleneckFlows = flows[e.bottleneckLink];
    if (withHottest || pattern == CommPattern::kAllToAll) listHottest(e);
    finish(order, e);
    return e;
  }

  /// Leaves and groups spanned, and the objective.
  void finish(const Order& order, Eval& e) {
    ++stamp;
    std::set<int> groups;
    for (HostId h : order) {
      const auto& info = ix.hosts()[h];
      e.rails = std::max(e.rails, static_cast<int>(info.hcas.size()));
      for (const auto& hca : info.hcas) {
        if (!hca.cabled || nodeStamp[hca.leaf] == stamp) continue;
        nodeStamp[hca.leaf] = stamp;
        ++e.leafSwitches;
        groups.insert(ix.topology().node(hca.leaf).group);
      }
    }
    e.leafGroups = static_cast<int>(groups.size());
    e.objective = objectiveOf(e.bottleneck / ix.referenceBytesPerSecond(),
                              static_cast<double>(e.leafSwitches) / std::max(1, e.rails),
                              order.size(), e.maxHops);
  }

  /// The hottest links: highest utilization, then smallest share, then id.
  void listHottest(Eval& e) {
    auto hotter = [&](DirectedLinkId a, DirectedLinkId b) {
      double ua = utilization[a], ub = utilization[b];
      if (ua != ub) return ua > ub;
      double sa = residual[a] / flows[a], sb = residual[b] / flows[b];
      if (sa != sb) return sa < sb;
      return a < b;
    };
    hot.assign(touched.begin(), touched.end());
    const std::size_t k = std::min(hot.size(), limits.hottestLinks);
    std::partial_sort(hot.begin(), hot.begin() + static_cast<std::ptrdiff_t>(k), hot.end(), hotter);
    for (std::size_t i = 0; i < k; ++i) e.hottest.emplace_back(hot[i], flows[hot[i]]);
    e.hasHottest = true;
  }

  std::string linkName(DirectedLinkId d) const {
    const Topology& t = ix.topology();
    PortRef s = load.sender(d);
    PortRef r = load.receiver(d);
    return t.node(s.node).description + "[" + std::to_string(s.port.value()) + "] -> " +
           t.node(r.node).description + "[" + std::to_string(r.port.value()) + "]";
  }

  LinkLoad linkLoad(DirectedLinkId d, std::uint32_t jobFlows) const {
    const Topology& t = ix.topology();
    PortRef s = load.sender(d);
    PortRef r = load.receiver(d);
    LinkLoad l;
    l.fromNode = t.node(s.node).description;
    l.fromGuid = t.node(s.node).guid.value();
    l.fromPort = s.port.value();
    l.toNode = t.node(r.node).description;
    l.toGuid = t.node(r.node).guid.value();
    l.toPort = r.port.value();
    l.utilization = load.at(d).utilization;
    l.congestion = load.at(d).congestion;
    l.residualBytesPerSecond = residual[d];
    l.jobFlows = static_cast<int>(jobFlows);
    return l;
  }

  // --- Ring entry hosts.
  //
  // In a ring, only the edges between blocks cross the fabric: from the last host of one block's
  // run to the first host of the next (within a block every host hangs off the same leaves). The
  // sender's leaves are the block's whichever host sends, but LID routing picks the path by
  // destination: each host that could receive at a boundary (its "entry") takes other up-links
  // and spines. Per boundary, with every other boundary's flows fixed, takes the block's host
  // (one of the ring's, or an eligible one not in it) whose routes leave the largest share on
  // their worst link; passes until nothing changes. The result is kept only when the exact
  // evaluation says it is better.

  /// Links of the flows from host `from` to host `to`, rail by rail (without `from`'s own HCA
  /// links: they are the same for every candidate `to`). False when a flow has no route.
  bool boundaryLinks(HostId from, HostId to, std::vector<DirectedLinkId>& out) {
    out.clear();
    const bool routed =
        forEachRail(from, to, [&](const PlacementIndex::Hca& src, const PlacementIndex::Hca& dst) {
          return src.cabled && dst.cabled &&
                 ix.traceFromSwitch(src.leaf, dst.lid, dst.node,
                                    [&](DirectedLinkId d) { out.push_back(d); }) >= 0;
        });
    work += out.size();
    return routed;
  }

  /// The smallest share of the links in `links` (sorted in place) if their flows were added to
  /// `flows`.
  double shareWith(std::vector<DirectedLinkId>& links) const {
    std::sort(links.begin(), links.end());
    double share = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < links.size();) {
      std::size_t j = i;
      while (j < links.size() && links[j] == links[i]) ++j;
      share = std::min(share, residual[links[i]] / static_cast<double>(flows[links[i]] + (j - i)));
      i = j;
    }
    return share;
  }

  /// Improves the entry host of each block boundary of the ring `order` (evaluated as `e`);
  /// `eligibleByBlock` are the hosts that may join. True when `order` and `e` changed.
  bool refineRingEntries(Order& order, Eval& e,
                         const std::vector<std::vector<HostId>>& eligibleByBlock,
                         std::uint64_t workLimit) {
    const auto& hosts = ix.hosts();
    const std::size_t n = order.size();
    std::vector<std::size_t> runStart;
    for (std::size_t i = 0; i < n; ++i) {
      if (i == 0 || hosts[order[i]].block != hosts[order[i - 1]].block) runStart.push_back(i);
    }
    if (runStart.size() < 2) return false;
    Order trial = order;
    evaluate(trial, CommPattern::kRingAllreduce);  // the flows of every boundary, in place
    ring.valid = false;                            // changed by hand below
    inRing.clear(hosts.size());
    for (HostId h : trial) inRing.mark(h);
    std::vector<DirectedLinkId> path, candidatePath, bestPath;
    bool changed = false;
    for (int pass = 0; pass < 4 && work < workLimit; ++pass) {
      bool passChanged = false;
      for (std::size_t r = 0; r < runStart.size() && work < workLimit; ++r) {
        const std::size_t s = runStart[r];
        const std::size_t end = r + 1 < runStart.size() ? runStart[r + 1] : n;
        const HostId from = trial[(s + n - 1) % n];
        const HostId entry = trial[s];
        if (!boundaryLinks(from, entry, path)) continue;
        for (DirectedLinkId d : path) --flows[d];
        double bestShare = shareWith(path);
        HostId bestHost = entry;
        auto consider = [&](HostId c) {
          if (!boundaryLinks(from, c, candidatePath)) return;
          double share = shareWith(candidatePath);
          if (share > bestShare * (1.0 + 1e-9)) {
            bestShare = share;
            bestHost = c;
            bestPath.swap(candidatePath);
          }
        };
        for (std::size_t i = s + 1; i < end; ++i) consider(trial[i]);
        if (hosts[entry].block >= 0) {
          for (HostId c : eligibleByBlock[static_cast<std::size_t>(hosts[entry].block)]) {
            if (!inRing.marked(c)) consider(c);
          }
        }
        if (bestHost == entry) {
          for (DirectedLinkId d : path) ++flows[d];
          continue;
        }
        for (DirectedLinkId d : bestPath) add(d, 1);
        if (inRing.marked(bestHost)) {
          std::swap(trial[s],
                    *std::find(trial.begin() + static_cast<std::ptrdiff_t>(s),
                               trial.begin() + static_cast<std::ptrdiff_t>(end), bestHost));
        } else {
          inRing.stamp[entry] = 0;
          inRing.mark(bestHost);
          trial[s] = bestHost;
        }
        passChanged = true;
      }
      if (!passChanged) break;
      changed = true;
    }
    if (!changed) return false;
    Eval refined = evaluate(trial, CommPattern::kRingAllreduce);
    if (refined.objective <= e.objective + 1e-12) return false;
    order = std::move(trial);
    e = std::move(refined);
    return true;
  }

  /// The full score of `order`.
  PlacementScore score(const Order& order, CommPattern pattern) {
    Eval e = evaluate(order, pattern, true);
    reset();
    return scoreOf(order, pattern, e);
  }

  /// The full score of `order` from its evaluation `e`.
  PlacementScore scoreOf(const Order& order, CommPattern pattern, const Eval& e) const {
    PlacementScore s;
    s.leafSwitches = e.leafSwitches;
    s.maxHops = e.maxHops;
    s.bottleneckBytesPerSecond = e.bottleneck;
    s.objective = e.objective;
    for (const auto& [d, n] : e.hottest) s.hottestLinks.push_back(linkLoad(d, n));

    std::string text = std::to_string(order.size()) + (order.size() == 1 ? " host" : " hosts") +
                       " on " + std::to_string(e.leafSwitches) + " leaf switch" +
                       (e.leafSwitches == 1 ? "" : "es") + " in " + std::to_string(e.leafGroups) +
                       " leaf group" + (e.leafGroups == 1 ? "" : "s") + "; " +
                       std::string(toString(pattern)) + " bottleneck " + gbps(e.bottleneck) +
                       " GB/s per flow";
    if (e.bottleneckLink != PlacementIndex::kNoLink) {
      text += " at " + linkName(e.bottleneckLink) + " (" +
              percent(load.at(e.bottleneckLink).utilization) + " used, " +
              std::to_string(e.bottleneckFlows) + " job flow" +
              (e.bottleneckFlows == 1 ? "" : "s") + ")";
    }
    text += "; max " + std::to_string(e.maxHops) + " switch hop" + (e.maxHops == 1 ? "" : "s");
    if (e.unroutedFlows > 0) {
      text += "; " + std::to_string(e.unroutedFlows) + " flows have no route";
    }
    s.explanation = std::move(text);
    return s;
  }
};

// ---------------------------------------------------------------------------------------------
// PlacementEngine

PlacementEngine::PlacementEngine(PlacementIndexPtr index, std::shared_ptr<const LinkLoadModel> load,
                                 PlacementLimits limits)
    : index_(std::move(index)), load_(std::move(load)), limits_(limits) {
  if (!index_) throw PlacementError(PlacementError::Kind::kNotReady, "no placement index");
  if (!load_) {
    load_ = std::make_shared<const LinkLoadModel>(index_->topologyPtr());
  } else if (load_->size() != index_->topology().links().size() * 2) {
    throw PlacementError(PlacementError::Kind::kNotReady,
                         "link load belongs to another topology snapshot");
  }
  residual_.resize(load_->size());
  utilization_.resize(load_->size());
  for (DirectedLinkId d = 0; d < load_->size(); ++d) {
    residual_[d] = load_->at(d).residualBytesPerSecond();
    utilization_[d] = load_->at(d).utilization;
  }
}

PlacementScore PlacementEngine::score(const std::vector<std::string>& hostsInRankOrder,
                                      CommPattern pattern) const {
  const Topology& topo = index_->topology();
  Order order;
  for (const auto& name : hostsInRankOrder) {
    const Host* h = topo.findHost(name);
    if (!h) {
      throw PlacementError(PlacementError::Kind::kInvalidRequest, "unknown host '" + name + "'");
    }
    order.push_back(static_cast<HostId>(h - topo.hosts().data()));
  }
  Impl impl(*index_, *load_, limits_, residual_, utilization_);
  return impl.score(order, pattern);
}

namespace {

struct Candidate {
  Order order;
  Eval eval;  // exact, when evaluated
  double bound = std::numeric_limits<double>::infinity();
  bool evaluated = false;
  bool baseline = false;  ///< topology-only best fit: never skipped on a near tie
};

/// Margin for comparing an upper bound with exact objectives (rounding of two different sums).
constexpr double kBoundSlack = 1e-9;

}  // namespace

PlacementAnswer PlacementEngine::place(const PlacementRequest& request) const {
  using Kind = PlacementError::Kind;
  const PlacementIndex& ix = *index_;
  const Topology& topo = ix.topology();

  // --- Request.
  if (request.hosts < 0 || request.gpus < 0 || request.gpusPerHost < 0) {
    throw PlacementError(Kind::kInvalidRequest, "hosts, gpus and gpus_per_host must be >= 0");
  }
  int wanted = request.hosts;
  if (wanted == 0) {
    if (request.gpus == 0) {
      throw PlacementError(Kind::kInvalidRequest, "ask for hosts > 0 or gpus > 0");
    }
    if (request.gpusPerHost == 0) {
      throw PlacementError(Kind::kInvalidRequest, "gpus needs gpus_per_host > 0");
    }
    wanted = (request.gpus + request.gpusPerHost - 1) / request.gpusPerHost;
  }
  if (request.alternatives < 1 || request.alternatives > 16) {
    throw PlacementError(Kind::kInvalidRequest, "alternatives must be in 1..16");
  }
  const auto n = static_cast<std::size_t>(wanted);

  // --- Eligible hosts.
  PlacementAnswer answer;
  std::vector<std::string> warnings;
  std::size_t suppressed = 0;
  auto warn = [&](std::string w) {
    if (warnings.size() < limits_.maxWarnings) {
      warnings.push_back(std::move(w));
    } else {
      ++suppressed;
    }
  };
  std::vector<char> wantedHost(ix.hosts().size(), request.candidates.empty() ? 1 : 0);
  std::size_t candidateCount = request.candidates.empty() ? ix.hosts().size() : 0;
  for (const auto& name : request.candidates) {
    const Host* h = topo.findHost(name);
    if (!h) {
      warn(name + ": unknown host (candidate ignored)");
      continue;
    }
    auto id = static_cast<std::size_t>(h - topo.hosts().data());
    if (!wantedHost[id]) ++candidateCount;
    wantedHost[id] = 1;
  }
  std::size_t excluded = 0, down = 0, degraded = 0;
  for (const auto& name : request.exclude) {
    const Host* h = topo.findHost(name);
    if (!h) {
      warn(name + ": unknown host (exclude ignored)");
      continue;
    }
    auto id = static_cast<std::size_t>(h - topo.hosts().data());
    if (wantedHost[id]) ++excluded;
    wantedHost[id] = 0;
  }
  std::vector<char> eligible(ix.hosts().size(), 0);
  std::size_t eligibleCount = 0;
  for (std::size_t h = 0; h < ix.hosts().size(); ++h) {
    if (!wantedHost[h]) continue;
    const auto& info = ix.hosts()[h];
    std::string problem;
    bool isDegraded = false;
    if (info.hcas.empty()) problem = "no HCA";
    for (const auto& hca : info.hcas) {
      const std::string hcaName = topo.node(hca.node).description;
      if (!hca.cabled) {
        problem = "HCA " + hcaName + " has no link";
        break;
      }
      auto state = load_->at(hca.tx).health;
      if (state == telemetry::LinkState::kDown || state == telemetry::LinkState::kFaulty) {
        problem = "HCA " + hcaName + " link " + std::string(telemetry::toString(state));
        break;
      }
      if (state == telemetry::LinkState::kDegraded && !request.allowDegraded) {
        problem = "HCA " + hcaName + " link degraded";
        isDegraded = true;
      }
    }
    if (!problem.empty()) {
      ++(isDegraded ? degraded : down);
      warn(info.name + ": " + problem + " (left out)");
      continue;
    }
    eligible[h] = 1;
    ++eligibleCount;
  }
  if (eligibleCount < n) {
    std::string reason = "need " + std::to_string(n) + " hosts, only " +
                         std::to_string(eligibleCount) + " eligible among " +
                         std::to_string(candidateCount) +
                         (request.candidates.empty() ? " hosts" : " candidates");
    std::vector<std::string> why;
    if (excluded) why.push_back(std::to_string(excluded) + " excluded");
    if (down) why.push_back(std::to_string(down) + " with a down/faulty HCA link");
    if (degraded) why.push_back(std::to_string(degraded) + " with a degraded HCA link");
    if (!why.empty()) {
      reason += " (";
      for (std::size_t i = 0; i < why.size(); ++i) reason += (i ? ", " : "") + why[i];
      reason += ")";
    }
    throw PlacementError(Kind::kUnsatisfiable, reason);
  }

  Impl impl(ix, *load_, limits_, residual_, utilization_);
  const CommPattern pattern = request.pattern;

  // --- Blocks with their eligible hosts, best hosts first.
  const auto& blocks = ix.blocks();
  std::vector<double> hostQ(ix.hosts().size(), 0.0);
  std::vector<std::vector<HostId>> free(blocks.size());
  std::vector<double> blockQ(blocks.size(), 0.0);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    for (HostId h : blocks[b].hosts) {
      if (!eligible[h]) continue;
      hostQ[h] = impl.hostQuality(h);
      free[b].push_back(h);
    }
    std::stable_sort(free[b].begin(), free[b].end(), [&](HostId x, HostId y) {
      if (hostQ[x] != hostQ[y]) return hostQ[x] > hostQ[y];
      return ix.hosts()[x].name < ix.hosts()[y].name;
    });
    if (!free[b].empty()) blockQ[b] = impl.blockQuality(static_cast<int>(b));
  }
  std::vector<int> usable;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (!free[b].empty()) usable.push_back(static_cast<int>(b));
  }

  // Rank order: blocks by (group, block), hosts by name: ring neighbours share a leaf.
  auto canonical = [&](Order& order) {
    std::sort(order.begin(), order.end(),
              [&](HostId x, HostId y) { return ix.canonicalRank(x) < ix.canonicalRank(y); });
  };

  // Candidates are collected with an upper bound of their objective (Impl::upperBound) and
  // evaluated exactly later, best bound first, only while they can still rank among the best.
  std::vector<Candidate> candidates;
  std::set<std::vector<HostId>> seen;
  auto consider = [&](Order order, bool baseline = false) {
    canonical(order);
    std::vector<HostId> key = order;
    std::sort(key.begin(), key.end());
    if (!seen.insert(key).second) return;
    Candidate c;
    c.baseline = baseline;
    c.bound = impl.upperBound(order, pattern);
    c.order = std::move(order);
    candidates.push_back(std::move(c));
  };
  // Exact evaluation of the collected candidates: all of them but those whose bound is below the
  // `keep`-th best exact objective (they could not be among the answer's or the local search's
  // candidates). Unevaluated ones keep objective -infinity.
  auto evaluateCandidates = [&](std::size_t keep) {
    std::vector<std::size_t> byBound;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (!candidates[i].evaluated) byBound.push_back(i);
    }
    std::stable_sort(byBound.begin(), byBound.end(), [&](std::size_t x, std::size_t y) {
      return candidates[x].bound > candidates[y].bound;
    });
    std::vector<double> best;  // the `keep` best exact objectives so far, descending
    for (const auto& c : candidates) {
      if (c.evaluated) best.push_back(c.eval.objective);
    }
    std::sort(best.begin(), best.end(), std::greater<>());
    if (best.size() > keep) best.resize(keep);
    const std::uint64_t budget = impl.work + limits_.improvementWork;
    for (std::size_t i : byBound) {
      Candidate& c = candidates[i];
      // Beyond the `keep` best, a candidate is scored only within one work budget: one score of
      // a 512-host alltoall at 10,240 HCAs costs more than the budget, and two would take the
      // answer past 10 ms (not even the baseline, then).
      if (best.size() >= keep && impl.work >= budget) continue;
      const double tie = c.baseline ? 0.0 : limits_.nearTie;
      auto ruledOut = [&] {
        return best.size() >= keep && c.bound + kBoundSlack < best.back() * (1.0 + tie);
      };
      if (ruledOut()) continue;
      if (best.size() >= keep && pattern == CommPattern::kAllToAll) {
        c.bound = std::min(c.bound, impl.allToAllFirstHopBound(c.order));
        if (ruledOut()) continue;
      }
      c.eval = impl.evaluate(c.order, pattern);
      c.evaluated = true;
      best.insert(std::upper_bound(best.begin(), best.end(), c.eval.objective, std::greater<>()),
                  c.eval.objective);
      if (best.size() > keep) best.pop_back();
    }
  };
  // Takes whole blocks in `sequence` until n hosts; the last block gives its best hosts.
  auto fill = [&](const std::vector<int>& sequence) {
    Order order;
    for (int b : sequence) {
      for (HostId h : free[b]) {
        if (order.size() == n) break;
        order.push_back(h);
      }
      if (order.size() == n) break;
    }
    if (order.size() == n) consider(std::move(order));
  };

  // (0) Topology-only best fit, as a scheduler places without the load: the tightest block that
  // holds the job, else the blocks with the most free hosts first; hosts in the block's order.
  // First, so that it is marked as the baseline even when another order finds the same set: it is
  // never skipped on a near tie, so the answer is never below it on the objective whenever the
  // work budget affords its score (not for a 512-host alltoall at 10,240 HCAs, see
  // evaluateCandidates).
  {
    std::vector<int> sequence;
    for (int b : usable) {
      if (free[b].size() >= n && (sequence.empty() || free[b].size() < free[sequence[0]].size())) {
        sequence.assign(1, b);
      }
    }
    if (sequence.empty()) {
      sequence = usable;
      std::stable_sort(sequence.begin(), sequence.end(),
                       [&](int x, int y) { return free[x].size() > free[y].size(); });
    }
    Order order;
    for (int b : sequence) {
      for (HostId h : blocks[b].hosts) {
        if (order.size() < n && eligible[h]) order.push_back(h);
      }
    }
    if (order.size() == n) consider(std::move(order), true);
  }
  // (a) One block when one is big enough: best-fit among the healthiest.
  {
    std::vector<int> fits;
    for (int b : usable) {
      if (free[b].size() >= n) fits.push_back(b);
    }
    auto minQ = [&](int b) { return hostQ[free[b][n - 1]]; };
    std::stable_sort(fits.begin(), fits.end(), [&](int x, int y) {
      double qx = std::min(minQ(x), blockQ[x]), qy = std::min(minQ(y), blockQ[y]);
      if (n == 1 || pattern == CommPattern::kNone) qx = minQ(x), qy = minQ(y);
      if (qx != qy) return qx > qy;
      if (free[x].size() != free[y].size()) return free[x].size() < free[y].size();
      return x < y;
    });
    for (std::size_t i = 0; i < fits.size() && i < 4; ++i) fill({fits[i]});
  }
  // (b) Several blocks, per leaf group and fabric-wide, in three orders.
  {
    std::map<int, std::vector<int>> byGroup;
    for (int b : usable) byGroup[blocks[b].group].push_back(b);
    std::vector<std::pair<double, int>> groupRank;
    for (auto& [g, members] : byGroup) {
      std::size_t total = 0;
      double q = 0;
      for (int b : members) {
        total += free[b].size();
        q += blockQ[b] * static_cast<double>(free[b].size());
      }
      if (total >= n) groupRank.emplace_back(-q / static_cast<double>(total), g);
    }
    std::sort(groupRank.begin(), groupRank.end());
    std::vector<std::vector<int>> scopes;
    for (std::size_t i = 0; i < groupRank.size() && i < 3; ++i) {
      scopes.push_back(byGroup[groupRank[i].second]);
    }
    scopes.push_back(usable);
    for (const auto& scope : scopes) {
      std::vector<int> loadAware = scope, bestFit = scope, bucketed = scope;
      std::stable_sort(loadAware.begin(), loadAware.end(), [&](int x, int y) {
        if (blockQ[x] != blockQ[y]) return blockQ[x] > blockQ[y];
        if (free[x].size() != free[y].size()) return free[x].size() > free[y].size();
        return x < y;
      });
      std::stable_sort(bestFit.begin(), bestFit.end(), [&](int x, int y) {
        if (free[x].size() != free[y].size()) return free[x].size() > free[y].size();
        if (blockQ[x] != blockQ[y]) return blockQ[x] > blockQ[y];
        return x < y;
      });
      std::stable_sort(bucketed.begin(), bucketed.end(), [&](int x, int y) {
        long bx = std::lround(blockQ[x] * 10), by = std::lround(blockQ[y] * 10);
        if (bx != by) return bx > by;
        if (free[x].size() != free[y].size()) return free[x].size() > free[y].size();
        return x < y;
      });
      fill(loadAware);
      fill(bestFit);
      fill(bucketed);
    }
  }
  // (c) Small pools of eligible hosts: greedy construction on the exact objective from the best
  // few seed hosts (one host at a time, the one that scores best), bounded by the work budget.
  if (eligibleCount <= 64 && n >= 2) {
    std::vector<HostId> pool;
    for (int b : usable) pool.insert(pool.end(), free[b].begin(), free[b].end());
    std::stable_sort(pool.begin(), pool.end(),
                     [&](HostId x, HostId y) { return hostQ[x] > hostQ[y]; });
    const std::uint64_t budget = impl.work + limits_.improvementWork;
    for (std::size_t seed = 0; seed < pool.size() && seed < 8 && impl.work < budget; ++seed) {
      Order order{pool[seed]};
      std::vector<char> in(ix.hosts().size(), 0);
      in[pool[seed]] = 1;
      while (order.size() < n && impl.work < budget) {
        double bestObjective = -1e18;
        HostId bestHost = 0;
        for (HostId u : pool) {
          if (in[u]) continue;
          Order o = order;
          o.push_back(u);
          canonical(o);
          double obj = impl.evaluate(o, pattern).objective;
          if (obj > bestObjective) {
            bestObjective = obj;
            bestHost = u;
          }
        }
        order.push_back(bestHost);
        in[bestHost] = 1;
      }
      if (order.size() == n) consider(std::move(order));
    }
  }
  if (candidates.empty()) {
    throw PlacementError(Kind::kUnsatisfiable,
                         "no candidate set of " + std::to_string(n) + " hosts could be formed");
  }
  // The answer returns the best K; the local search below starts from the best 4, evaluated
  // when it gets to them.
  evaluateCandidates(limits_.pruneByBound ? static_cast<std::size_t>(request.alternatives)
                                          : candidates.size());
  auto better = [](const Candidate& x, const Candidate& y) {
    if (x.evaluated != y.evaluated) return x.evaluated;
    if (x.eval.objective != y.eval.objective) return x.eval.objective > y.eval.objective;
    return x.order < y.order;
  };
  std::sort(candidates.begin(), candidates.end(), better);

  // --- Local improvement of the best candidates (one work budget for all, best first): move the
  // hosts behind the bottleneck link.
  {
    std::vector<char> chosen(ix.hosts().size(), 0);
    const std::uint64_t budget = impl.work + limits_.improvementWork;
    const bool small = eligibleCount <= 64;
    std::vector<Candidate> improvedSet;
    for (std::size_t start = 0;
         start < std::min<std::size_t>(candidates.size(), 4) && impl.work < budget; ++start) {
      // An alltoall whose full score costs more than the whole budget (512 hosts at 10,240
      // HCAs): only the set whose flows are in place is improved. Any other start would spend
      // the budget on its own full score before its first move.
      if (pattern == CommPattern::kAllToAll && impl.base.valid &&
          impl.base.work >= limits_.improvementWork && !impl.isBase(candidates[start].order)) {
        continue;
      }
      if (!candidates[start].evaluated) {
        // The next best candidate exactly (the ones above stay in place), charged to the budget.
        evaluateCandidates(start + 1);
        std::sort(candidates.begin(), candidates.end(), better);
        if (impl.work >= budget) break;
      }
      Candidate best = candidates[start];
      bool improved = true;
      while (improved && impl.work < budget &&
             best.eval.bottleneckLink != PlacementIndex::kNoLink) {
        improved = false;
        std::fill(chosen.begin(), chosen.end(), 0);
        for (HostId h : best.order) chosen[h] = 1;
        // Hosts whose flows or HCA links meet the bottleneck link: its two ends' hosts, and for a
        // ring the two hosts of every edge that crosses it.
        const DirectedLinkId hot = best.eval.bottleneckLink;
        NodeIndex hotA = impl.load.sender(hot).node, hotB = impl.load.receiver(hot).node;
        std::vector<std::size_t> critical;
        const std::size_t size = best.order.size();
        for (std::size_t i = 0; i < size; ++i) {
          for (const auto& hca : ix.hosts()[best.order[i]].hcas) {
            if (hca.node == hotA || hca.node == hotB || hca.leaf == hotA || hca.leaf == hotB) {
              critical.push_back(i);
              break;
            }
          }
        }
        if (pattern == CommPattern::kRingAllreduce && size >= 2) {
          for (std::size_t i = 0; i < size; ++i) {
            const auto& a = ix.hosts()[best.order[i]].hcas;
            const auto& b = ix.hosts()[best.order[(i + 1) % size]].hcas;
            bool crosses = false;
            for (const auto& src : a) {
              for (const auto& dst : b) {
                if (src.hcaIndex != dst.hcaIndex || src.leaf == dst.leaf) continue;
                ix.traceFromSwitch(src.leaf, dst.lid, dst.node,
                                   [&](DirectedLinkId d) { crosses = crosses || d == hot; });
              }
            }
            if (crosses) {
              critical.push_back(i);
              critical.push_back((i + 1) % size);
            }
          }
        }
        if (small && size <= 16) {
          critical.resize(size);
          std::iota(critical.begin(), critical.end(), std::size_t{0});
        }
        std::sort(critical.begin(), critical.end());
        critical.erase(std::unique(critical.begin(), critical.end()), critical.end());
        if (critical.size() > 8 && !small) critical.resize(8);

        // Replacement pool: the best unchosen hosts of the blocks in use and of the best unused
        // blocks.
        std::vector<HostId> pool;
        std::set<int> used;
        for (HostId h : best.order) used.insert(ix.hosts()[h].block);
        std::vector<int> others;
        for (int b : usable) {
          if (!used.count(b)) others.push_back(b);
        }
        std::stable_sort(others.begin(), others.end(),
                         [&](int x, int y) { return blockQ[x] > blockQ[y]; });
        if (others.size() > 4) others.resize(4);
        std::vector<int> poolBlocks(used.begin(), used.end());
        poolBlocks.insert(poolBlocks.end(), others.begin(), others.end());
        if (small) poolBlocks = usable;
        for (int b : poolBlocks) {
          int taken = 0;
          for (HostId h : free[b]) {
            if (chosen[h]) continue;
            pool.push_back(h);
            if (++taken == 4 && !small) break;
          }
        }

        auto tryOrder = [&](Order order, bool reorder) {
          // An alltoall's bound and score do not depend on the rank order (every pair is a
          // flow): it is put in rank order only when kept.
          const bool sortLater = reorder && pattern == CommPattern::kAllToAll;
          if (reorder && !sortLater) canonical(order);
          // Not exactly evaluated when even its bound could not beat the current best.
          if (limits_.pruneByBound &&
              impl.upperBound(order, pattern) + kBoundSlack <= best.eval.objective + 1e-12) {
            return false;
          }
          Eval e = impl.evaluate(order, pattern);
          if (e.objective > best.eval.objective + 1e-12) {
            if (sortLater) canonical(order);
            best.order = std::move(order);
            best.eval = e;
            return true;
          }
          return false;
        };
        for (std::size_t i : critical) {
          if (impl.work >= budget) break;
          // Another host of the same block in this rank position (a ring edge then targets
          // another LID, so the leaf's tables send it up another port).
          if (pattern == CommPattern::kRingAllreduce) {
            for (std::size_t j = 0; j < size && !improved && impl.work < budget; ++j) {
              if (j == i || ix.hosts()[best.order[j]].block != ix.hosts()[best.order[i]].block) {
                continue;
              }
              Order o = best.order;
              std::swap(o[i], o[j]);
              improved = tryOrder(std::move(o), false);
            }
          }
          for (HostId u : pool) {
            if (improved || impl.work >= budget) break;
            Order o = best.order;
            o[i] = u;
            improved = tryOrder(std::move(o), true);
          }
          if (improved) break;
        }
        // Small pools: when no single replacement helps, two at once (an alltoall's bottleneck
        // often sits on a plateau of links whose flows change only when two hosts move).
        if (!improved && small && size <= 16 && pool.size() <= 16) {
          for (std::size_t i = 0; i < size && !improved && impl.work < budget; ++i) {
            for (std::size_t j = i + 1; j < size && !improved && impl.work < budget; ++j) {
              for (std::size_t u = 0; u < pool.size() && !improved && impl.work < budget; ++u) {
                for (std::size_t v = u + 1; v < pool.size() && !improved && impl.work < budget;
                     ++v) {
                  Order o = best.order;
                  o[i] = pool[u];
                  o[j] = pool[v];
                  improved = tryOrder(std::move(o), true);
                }
              }
            }
          }
        }
      }
      // The ring's block boundaries: the best entry host per block (its own budget: cheap next
      // to the moves above, and worth most when they ran out of budget on a large ring).
      if (pattern == CommPattern::kRingAllreduce) {
        impl.refineRingEntries(best.order, best.eval, free,
                               impl.work + limits_.improvementWork / 4);
      }
      improvedSet.push_back(std::move(best));
    }
    for (auto& best : improvedSet) {
      std::vector<HostId> key = best.order;
      std::sort(key.begin(), key.end());
      if (seen.insert(key).second) {
        candidates.push_back(best);
        continue;
      }
      for (auto& c : candidates) {
        std::vector<HostId> k = c.order;
        std::sort(k.begin(), k.end());
        if (k == key && (!c.evaluated || best.eval.objective > c.eval.objective)) c = best;
      }
    }
    std::sort(candidates.begin(), candidates.end(), better);
  }

  // --- Answer.
  const auto k = static_cast<std::size_t>(request.alternatives);
  for (std::size_t i = 0; i < candidates.size() && i < k; ++i) {
    PlacementOption option;
    for (HostId h : candidates[i].order) option.hosts.push_back(ix.hosts()[h].name);
    const Candidate& c = candidates[i];
    option.score =
        c.eval.hasHottest ? impl.scoreOf(c.order, pattern, c.eval) : impl.score(c.order, pattern);
    answer.options.push_back(std::move(option));
  }
  if (suppressed) warnings.push_back("... and " + std::to_string(suppressed) + " more");
  answer.warnings = std::move(warnings);
  return answer;
}

PlacementAnswer place(const PlacementInput& input, const PlacementRequest& request) {
  auto index = std::make_shared<const PlacementIndex>(input.topology, input.tables);
  PlacementEngine engine(std::move(index), input.load);
  return engine.place(request);
}

}  // namespace ibfabric::routing
