// PlacementIndex (placement_engine.h): the per-(topology, tables) structure the engine
// precomputes once: port table, hosts and blocks, canonical rank order, switch columns and the
// destination-major copy of the forwarding tables.
#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "routing/placement_engine.h"

namespace ibfabric::routing {

namespace {

/// The HCA `ca` of a host, at `position` among its HCAs (its HCA index when the node has none),
/// with its first cabled port; raises `fastest` to its link's data rate (bytes/s).
PlacementIndex::Hca hcaOf(const PlacementIndex& ix, NodeIndex ca, std::size_t position,
                          double& fastest) {
  const Topology& topo = ix.topology();
  const Node& node = topo.node(ca);
  PlacementIndex::Hca hca;
  hca.node = ca;
  hca.hcaIndex = node.hcaIndex < 0 ? static_cast<int>(position) : node.hcaIndex;
  for (std::size_t p = 1; p < node.ports.size(); ++p) {
    const auto& port = node.ports[p];
    if (!port || !port->remote || !port->link) continue;
    hca.port = PortRef{ca, PortNum(static_cast<std::uint8_t>(p))};
    hca.lid = port->lid;
    hca.leaf = port->remote->node;
    hca.link = *port->link;
    hca.cabled = true;
    hca.tx = ix.slot(ca, static_cast<int>(p)).tx;
    hca.rx = hca.tx ^ 1u;
    const Link& link = topo.links()[hca.link];
    if (link.rate) fastest = std::max(fastest, link.rate->dataGbps() * 1e9 / 8.0);
    break;
  }
  return hca;
}

/// The distinct leaves of a host's cabled HCAs, sorted: its block's key.
std::vector<NodeIndex> leavesOf(const PlacementIndex::HostInfo& info) {
  std::vector<NodeIndex> leaves;
  for (const auto& h : info.hcas) {
    if (h.cabled) leaves.push_back(h.leaf);
  }
  std::sort(leaves.begin(), leaves.end());
  leaves.erase(std::unique(leaves.begin(), leaves.end()), leaves.end());
  return leaves;
}

/// The host HCAs' LIDs ordered by (HCA index, LID), each once: the rows of the LFT copy.
std::vector<std::uint16_t> rowLids(const std::vector<PlacementIndex::HostInfo>& hosts) {
  std::vector<std::pair<int, std::uint16_t>> railLids;
  for (const auto& h : hosts) {
    for (const auto& hca : h.hcas) {
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
  return lids;
}

}  // namespace

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
  buildPortTable();
  buildHostsAndBlocks();
  buildRankOrder();
  buildSwitchColumns();
  buildDestinationRows();
}

void PlacementIndex::buildPortTable() {
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
}

void PlacementIndex::buildHostsAndBlocks() {
  const Topology& topo = *topology_;
  double reference = 0.0;
  std::map<std::vector<NodeIndex>, int> blockOf;
  hosts_.reserve(topo.hosts().size());
  for (const Host& host : topo.hosts()) {
    HostInfo info;
    info.name = host.name;
    for (NodeIndex ca : host.hcas)
      info.hcas.push_back(hcaOf(*this, ca, info.hcas.size(), reference));
    std::vector<NodeIndex> leaves = leavesOf(info);
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
}

// Canonical rank order: leaf group, block, host name (ring neighbours share a leaf).
void PlacementIndex::buildRankOrder() {
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
}

// Switches numbered densely, with their ports as 8-byte hops.
void PlacementIndex::buildSwitchColumns() {
  const auto& nodes = topology_->nodes();
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
}

// Destination-major copy of the tables for the host HCAs' LIDs. Rows by (HCA index, LID): an
// alltoall walks the destinations of one rail in row order, so it streams through the copy.
void PlacementIndex::buildDestinationRows() {
  const std::vector<std::uint16_t> lids = rowLids(hosts_);
  if (lids.empty() || columns_ == 0 || lids.size() * columns_ > kMaxRowBytes) return;
  rowOfLid_.assign(static_cast<std::size_t>(*std::max_element(lids.begin(), lids.end())) + 1,
                   kNoRow);
  rows_.assign(lids.size() * columns_, SwitchTable::kNoPort);
  for (std::size_t r = 0; r < lids.size(); ++r) rowOfLid_[lids[r]] = static_cast<std::uint32_t>(r);
  std::vector<const SwitchTable*> byColumn(columns_, nullptr);
  for (std::size_t i = 0; i < column_.size(); ++i) {
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

}  // namespace ibfabric::routing
