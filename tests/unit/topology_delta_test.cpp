#include "discovery/topology_delta.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <type_traits>
#include <vector>

#include "discovery/net_topology.h"
#include "discovery/topogen.h"
#include "tests/support/fabrics.h"
#include "tests/support/net_edits.h"

namespace ibfabric {
namespace {

const LinkRate k4xHdr{LinkWidth::k4x, LinkSpeed::kHdr};
const LinkRate k1xHdr{LinkWidth::k1x, LinkSpeed::kHdr};

NetFabric twoLevel() { return testing::generate(testing::twoLevel(2, 2, 2)).fabric; }

using testing::link;
using testing::nodeById;
using testing::unlink;

Guid guidOf(NetFabric& f, const std::string& id) { return *nodeById(f, id).guid; }

void setRate(NetFabric& f, const std::string& id, int port, LinkRate rate) {
  NetNode& n = nodeById(f, id);
  for (NetPort& p : n.ports) {
    if (p.port.value() != port) continue;
    p.rate = rate;
    for (NetPort& q : nodeById(f, p.remoteId).ports)
      if (q.port == p.remotePort) q.rate = rate;
  }
}

TopologyPtr topo(const NetFabric& f) { return topologyFromNetFabric(f); }

TEST(TopologyDelta, IdenticalSnapshotsHaveNoChanges) {
  auto f = twoLevel();
  TopologyDelta d(topo(f), topo(f));
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.size(), 0u);
  EXPECT_TRUE(d.describeAll().empty());
}

TEST(TopologyDelta, UnlinkedCableIsRemoved) {
  auto f = twoLevel();
  auto before = topo(f);
  unlink(f, "leaf-01", 3);  // to spine-01[1]
  TopologyDelta d(before, topo(f));
  ASSERT_EQ(d.linksRemoved().size(), 1u);
  EXPECT_EQ(d.size(), 1u);
  const LinkRemoved& r = d.linksRemoved()[0];
  // Oriented like Topology::Link: the leaf (lower level) first; everything an event needs.
  EXPECT_EQ(r.link.a.node.guid, guidOf(f, "leaf-01"));
  EXPECT_EQ(r.link.a.node.description, "MF0;leaf-01:MQM8790-HS2F/U1");
  EXPECT_EQ(r.link.a.node.type, NodeType::kSwitch);
  EXPECT_EQ(r.link.a.port, PortNum{3});
  EXPECT_EQ(r.link.b.node.guid, guidOf(f, "spine-01"));
  EXPECT_EQ(r.link.b.port, PortNum{1});
  EXPECT_EQ(r.link.a.state, PortState::kActive);
  EXPECT_EQ(r.link.rate, k4xHdr);
  EXPECT_FALSE(r.aNodeGone);
  EXPECT_FALSE(r.bNodeGone);
  EXPECT_EQ(r.link.key(),
            LinkKey::of(guidOf(f, "spine-01"), PortNum{1}, guidOf(f, "leaf-01"), PortNum{3}));
  EXPECT_EQ(describe(r),
            "link removed: \"MF0;leaf-01:MQM8790-HS2F/U1\"[3] <-> "
            "\"MF0;spine-01:MQM8790-HS2F/U1\"[1] (was Active 4x HDR)");

  // And back: the cable is added.
  TopologyDelta back(d.after(), d.before());
  ASSERT_EQ(back.linksAdded().size(), 1u);
  EXPECT_EQ(back.size(), 1u);
  EXPECT_EQ(back.linksAdded()[0].link.key(), r.link.key());
}

TEST(TopologyDelta, RewiredCableIsRemovedPlusAdded) {
  auto f = twoLevel();
  auto before = topo(f);
  unlink(f, "leaf-01", 3);
  link(f, "leaf-01", 3, "spine-01", 7);
  TopologyDelta d(before, topo(f));
  ASSERT_EQ(d.linksRemoved().size(), 1u);
  ASSERT_EQ(d.linksAdded().size(), 1u);
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d.linksRemoved()[0].link.b.port, PortNum{1});
  EXPECT_EQ(d.linksAdded()[0].link.a.port, PortNum{3});
  EXPECT_EQ(d.linksAdded()[0].link.b.port, PortNum{7});
  EXPECT_FALSE(d.linksAdded()[0].aNodeNew);
}

TEST(TopologyDelta, RemovedNodeTakesItsCable) {
  auto f = twoLevel();
  auto before = topo(f);
  Guid host = guidOf(f, "dgx0001-mlx5_0");
  unlink(f, "dgx0001-mlx5_0", 1);
  std::erase_if(f.nodes, [](const NetNode& n) { return n.id == "dgx0001-mlx5_0"; });
  f.reindex();
  TopologyDelta d(before, topo(f));
  ASSERT_EQ(d.nodesRemoved().size(), 1u);
  EXPECT_EQ(d.nodesRemoved()[0].node.guid, host);
  EXPECT_EQ(d.nodesRemoved()[0].node.description, "dgx0001 mlx5_0");
  ASSERT_EQ(d.linksRemoved().size(), 1u);
  EXPECT_TRUE(d.linksRemoved()[0].aNodeGone);  // the CA end
  EXPECT_FALSE(d.linksRemoved()[0].bNodeGone);
  EXPECT_EQ(d.size(), 2u);

  TopologyDelta back(d.after(), d.before());
  ASSERT_EQ(back.nodesAdded().size(), 1u);
  ASSERT_EQ(back.linksAdded().size(), 1u);
  EXPECT_TRUE(back.linksAdded()[0].aNodeNew);
  EXPECT_EQ(describe(back.nodesAdded()[0]), "node added: CA \"dgx0001 mlx5_0\" " + toString(host));
}

TEST(TopologyDelta, MatchesByGuidNotIndex) {
  // A switch with a GUID below all others shifts every NodeIndex; only it and its cable change.
  auto f = twoLevel();
  auto before = topo(f);
  NetNode extra;
  extra.type = NodeType::kSwitch;
  extra.numPorts = 8;
  extra.id = "spare";
  extra.desc = "MF0;spare:MQM8790-HS2F/U1";
  extra.guid = Guid{0x10};
  f.nodes.push_back(extra);
  link(f, "spare", 1, "spine-02", 9);
  auto after = topo(f);
  ASSERT_NE(before->findNode(guidOf(f, "leaf-01"))->index,
            after->findNode(guidOf(f, "leaf-01"))->index);
  TopologyDelta d(before, after);
  EXPECT_EQ(d.nodesAdded().size(), 1u);
  EXPECT_EQ(d.linksAdded().size(), 1u);
  EXPECT_EQ(d.size(), 2u) << ::testing::PrintToString(d.describeAll());
}

TEST(TopologyDelta, RateChangeKeepsTheCable) {
  auto f = twoLevel();
  auto before = topo(f);
  setRate(f, "leaf-02", 4, k1xHdr);
  TopologyDelta d(before, topo(f));
  ASSERT_EQ(d.linksChanged().size(), 1u);
  EXPECT_EQ(d.size(), 1u);
  const LinkChanged& c = d.linksChanged()[0];
  EXPECT_TRUE(c.widthChanged);
  EXPECT_FALSE(c.speedChanged);
  EXPECT_FALSE(c.stateChanged);
  EXPECT_EQ(c.before.rate, k4xHdr);
  EXPECT_EQ(c.after.rate, k1xHdr);
  EXPECT_EQ(c.before.a.node.guid, c.after.a.node.guid);
  EXPECT_NE(describe(c).find("link changed (width)"), std::string::npos) << describe(c);
  EXPECT_NE(describe(c).find("Active 4x HDR -> Active 1x HDR"), std::string::npos) << describe(c);
}

TEST(TopologyDelta, DescriptionAndLidChanges) {
  auto f = twoLevel();
  for (NetPort& p : nodeById(f, "dgx0002-mlx5_0").ports) p.lid = Lid{5};
  nodeById(f, "leaf-01").lid = Lid{1};
  auto before = topo(f);
  nodeById(f, "dgx0002-mlx5_0").desc = "dgx0099 mlx5_0";
  for (NetPort& p : nodeById(f, "dgx0002-mlx5_0").ports) p.lid = Lid{9};
  nodeById(f, "leaf-01").lid = Lid{2};
  TopologyDelta d(before, topo(f));
  ASSERT_EQ(d.descriptionsChanged().size(), 1u);
  EXPECT_EQ(d.descriptionsChanged()[0].before.nodeDescription, "dgx0002 mlx5_0");
  EXPECT_EQ(d.descriptionsChanged()[0].after.nodeDescription, "dgx0099 mlx5_0");
  ASSERT_EQ(d.lidsChanged().size(), 2u) << ::testing::PrintToString(d.describeAll());
  // Switch port 0 (switches first in node order), then the CA port.
  EXPECT_EQ(d.lidsChanged()[0].port, PortNum{0});
  EXPECT_EQ(d.lidsChanged()[0].before, Lid{1});
  EXPECT_EQ(d.lidsChanged()[0].after, Lid{2});
  EXPECT_EQ(d.lidsChanged()[1].port, PortNum{1});
  EXPECT_EQ(d.lidsChanged()[1].before, Lid{5});
  EXPECT_EQ(d.lidsChanged()[1].after, Lid{9});
  EXPECT_EQ(d.size(), 3u);
}

// Same two-node fabric, with the ports in a chosen state.
TopologyPtr pair(PortState state, std::optional<LinkRate> rate) {
  Port p;
  p.state = state;
  p.physState = PhysPortState::kLinkUp;
  p.activeRate = rate;
  return testing::switchCaPair(p, true, "host mlx5_0");
}

TEST(TopologyDelta, StateChange) {
  TopologyDelta d(pair(PortState::kInit, k4xHdr), pair(PortState::kActive, k4xHdr));
  ASSERT_EQ(d.linksChanged().size(), 1u);
  const LinkChanged& c = d.linksChanged()[0];
  EXPECT_TRUE(c.stateChanged);
  EXPECT_FALSE(c.widthChanged);
  EXPECT_EQ(c.before.a.state, PortState::kInit);
  EXPECT_EQ(c.after.a.state, PortState::kActive);
  EXPECT_EQ(c.before.a.node.description, "host mlx5_0");
  EXPECT_EQ(c.before.b.node.description, "sw");
}

TEST(TopologyDelta, NullBeforeMeansEverythingAdded) {
  auto f = twoLevel();
  auto t = topo(f);
  TopologyDelta d(nullptr, t);
  EXPECT_EQ(d.nodesAdded().size(), t->nodes().size());
  EXPECT_EQ(d.linksAdded().size(), t->links().size());
  TopologyDelta gone(t, nullptr);
  EXPECT_EQ(gone.nodesRemoved().size(), t->nodes().size());
  EXPECT_EQ(gone.linksRemoved().size(), t->links().size());
}

TEST(TopologyDelta, Walks) {
  auto f = twoLevel();
  auto before = topo(f);
  unlink(f, "leaf-01", 3);
  link(f, "leaf-01", 3, "spine-01", 7);
  setRate(f, "leaf-02", 4, k1xHdr);
  nodeById(f, "spine-02").desc = "renamed";
  TopologyDelta d(before, topo(f));

  std::vector<std::string> order;
  d.forEachChange([&](const auto& c) {
    using T = std::decay_t<decltype(c)>;
    if constexpr (std::is_same_v<T, LinkRemoved>) order.push_back("removed");
    if constexpr (std::is_same_v<T, LinkAdded>) order.push_back("added");
    if constexpr (std::is_same_v<T, LinkChanged>) order.push_back("changed");
    if constexpr (std::is_same_v<T, NodeDescriptionChanged>) order.push_back("desc");
  });
  EXPECT_EQ(order, (std::vector<std::string>{"desc", "removed", "added", "changed"}));

  int added = 0, removed = 0, changed = 0;
  d.forEachLinkChange([&](const LinkAdded&) { ++added; }, [&](const LinkRemoved&) { ++removed; },
                      [&](const LinkChanged&) { ++changed; });
  EXPECT_EQ(added, 1);
  EXPECT_EQ(removed, 1);
  EXPECT_EQ(changed, 1);
  int nodeChanges = 0;
  d.forEachNodeChange(nullptr, nullptr, [&](const NodeDescriptionChanged&) { ++nodeChanges; });
  EXPECT_EQ(nodeChanges, 1);
  EXPECT_EQ(d.describeAll().size(), 4u);
}

TEST(TopologyDelta, TenThousandHcasOneCableDown) {
  TopoOptions o;
  o.sus = 40;  // 40 x 32 nodes x 8 HCAs = 10,240 HCAs
  auto f = generateTopology("superpod", o).fabric;
  auto before = topo(f);
  ASSERT_GE(before->caCount(), 10000u);
  const NetNode& leaf = *std::find_if(f.nodes.begin(), f.nodes.end(), [](const NetNode& n) {
    return n.type == NodeType::kSwitch && n.id.rfind("leaf", 0) == 0;
  });
  std::string leafId = leaf.id;
  int port = leaf.ports.back().port.value();
  unlink(f, leafId, port);
  auto after = topo(f);
  auto started = std::chrono::steady_clock::now();
  TopologyDelta d(before, after);
  auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(d.linksRemoved().size(), 1u);
  EXPECT_EQ(d.size(), 1u);
  // Linear with hash lookups: a few ms normally; generous for sanitizer builds.
  EXPECT_LT(took, std::chrono::seconds(2));
  RecordProperty("delta_ms",
                 std::to_string(std::chrono::duration<double, std::milli>(took).count()));
}

}  // namespace
}  // namespace ibfabric
