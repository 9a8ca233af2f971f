// Topology snapshot and fat-tree analysis, on fabrics built in memory (TopologyBuilder by hand,
// and generated NetFabrics through topologyFromNetFabric).
#include "discovery/topology.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "discovery/fat_tree.h"
#include "discovery/net_topology.h"
#include "discovery/node_name_map.h"
#include "discovery/topogen.h"
#include "tests/support/fabrics.h"

namespace ibfabric {
namespace {

// A hand-built rail-optimized fabric: 2 spines; leaves L0 (rail 0) and L1 (rail 1); hosts
// "h1", "h2" with mlx5_0 on L0 and mlx5_1 on L1. Switch GUIDs 0x10.., CA GUIDs 0x20..
class SmallRailFabric : public ::testing::Test {
 protected:
  static constexpr Guid kSpine0{0x10}, kSpine1{0x11}, kLeaf0{0x12}, kLeaf1{0x13};
  static Guid ca(int host, int hca) { return Guid{0x20u + std::uint64_t(host) * 2 + hca}; }

  static Port port(int num, Guid guid, std::uint16_t lid, std::uint8_t lmc = 0) {
    Port p;
    p.num = PortNum{std::uint8_t(num)};
    p.guid = guid;
    p.lid = Lid{lid};
    p.lmc = lmc;
    p.state = PortState::kActive;
    p.physState = PhysPortState::kLinkUp;
    p.widthSupported = p.widthEnabled = static_cast<WidthMask>(LinkWidth::k4x);
    p.speedSupported = p.speedEnabled = speedBit(LinkSpeed::kHdr) | speedBit(LinkSpeed::kEdr);
    p.activeRate = LinkRate{LinkWidth::k4x, LinkSpeed::kHdr};
    return p;
  }

  static TopologyBuilder builder() {
    TopologyBuilder b;
    std::uint16_t lid = 1;
    for (auto [g, name] : {std::pair{kSpine0, "spine0"}, std::pair{kSpine1, "spine1"},
                           std::pair{kLeaf0, "leaf0"}, std::pair{kLeaf1, "leaf1"}}) {
      b.addNode({NodeType::kSwitch, g, g, name, 0x2c9, 0xd2f0, 0, 8});
      Port p0 = port(0, g, lid++);
      p0.activeRate.reset();
      b.addPort(g, p0);
    }
    for (int h = 1; h <= 2; ++h) {
      for (int k = 0; k < 2; ++k) {
        Guid g = ca(h, k);
        b.addNode({NodeType::kCa, g, Guid{0x900u + std::uint64_t(h)},
                   "h" + std::to_string(h) + " mlx5_" + std::to_string(k), 0x2c9, 0x101b, 0, 1});
        b.addPort(g, port(1, Guid{g.value() + 0x1000}, lid, k == 0 ? 2 : 0));
        lid += 4;
        Guid leaf = k == 0 ? kLeaf0 : kLeaf1;
        b.addPort(leaf, port(h, Guid{}, 0));
        b.connect(g, PortNum{1}, leaf, PortNum{std::uint8_t(h)});
      }
    }
    // Leaf port 5 -> spine0, 6 -> spine1; spine port 1 -> leaf0, 2 -> leaf1.
    for (auto [leaf, sp] : {std::pair{kLeaf0, 1}, std::pair{kLeaf1, 2}}) {
      for (int lp : {5, 6}) b.addPort(leaf, port(lp, Guid{}, 0));
      for (Guid spine : {kSpine0, kSpine1}) b.addPort(spine, port(sp, Guid{}, 0));
      b.connect(leaf, PortNum{5}, kSpine0, PortNum{std::uint8_t(sp)});
      b.connect(kSpine1, PortNum{std::uint8_t(sp)}, leaf, PortNum{6});  // from the other end
    }
    return b;
  }
};

TEST_F(SmallRailFabric, CountsOrderAndLinks) {
  auto t = builder().build();
  EXPECT_EQ(t->switchCount(), 4u);
  EXPECT_EQ(t->caCount(), 4u);
  EXPECT_EQ(t->routerCount(), 0u);
  EXPECT_EQ(t->links().size(), 8u);
  // Switches first, by GUID.
  EXPECT_EQ(t->node(0).guid, kSpine0);
  EXPECT_EQ(t->node(3).guid, kLeaf1);
  EXPECT_TRUE(t->node(4).isCa());
  for (std::size_t i = 0; i < t->nodes().size(); ++i) EXPECT_EQ(t->node(NodeIndex(i)).index, i);
  // Each link: a is the lower level, both ports point back at it.
  for (std::uint32_t li = 0; li < t->links().size(); ++li) {
    const Link& l = t->links()[li];
    EXPECT_LT(t->node(l.a.node).level, t->node(l.b.node).level);
    EXPECT_EQ(t->port(l.a)->link, li);
    EXPECT_EQ(t->port(l.b)->link, li);
    EXPECT_EQ(t->port(l.a)->remote, l.b);
    ASSERT_TRUE(l.rate);
    EXPECT_EQ(l.rate->toString(), "4xHDR");
    EXPECT_DOUBLE_EQ(l.gbps(), 200.0);
    EXPECT_FALSE(l.belowEnabled());
  }
}

TEST_F(SmallRailFabric, LevelsAndDirections) {
  auto t = builder().build();
  EXPECT_EQ(t->maxLevel(), 2);
  const Node& leaf0 = *t->findNode(kLeaf0);
  const Node& spine0 = *t->findNode(kSpine0);
  EXPECT_EQ(leaf0.level, kLeafLevel);
  EXPECT_EQ(spine0.level, 2);
  EXPECT_EQ(t->findNode(ca(1, 0))->level, kCaLevel);
  EXPECT_EQ(leaf0.port(PortNum{1})->direction, PortDirection::kDown);
  EXPECT_EQ(leaf0.port(PortNum{5})->direction, PortDirection::kUp);
  EXPECT_EQ(spine0.port(PortNum{1})->direction, PortDirection::kDown);
  EXPECT_EQ(t->findNode(ca(2, 1))->port(PortNum{1})->direction, PortDirection::kUp);
  EXPECT_EQ(leaf0.port(PortNum{0})->direction, PortDirection::kNone);
  EXPECT_EQ(t->nodesAtLevel(2).size(), 2u);
  EXPECT_EQ(t->nodesAtLevel(kLeafLevel).size(), 2u);
}

TEST_F(SmallRailFabric, HostsRailsGroups) {
  auto t = builder().build();
  ASSERT_EQ(t->hosts().size(), 2u);
  const Host* h2 = t->findHost("h2");
  ASSERT_NE(h2, nullptr);
  EXPECT_TRUE(h2->namedFromDescription);
  ASSERT_EQ(h2->hcas.size(), 2u);
  EXPECT_EQ(t->node(h2->hcas[0]).guid, ca(2, 0));
  EXPECT_EQ(t->node(h2->hcas[1]).hcaIndex, 1);
  EXPECT_EQ(t->findHost("nope"), nullptr);

  ASSERT_EQ(t->rails().size(), 2u);
  EXPECT_TRUE(t->railOptimized());
  EXPECT_EQ(t->rails()[0].leaves, std::vector<NodeIndex>{t->findNode(kLeaf0)->index});
  EXPECT_EQ(t->rails()[1].hcas.size(), 2u);
  EXPECT_EQ(t->findNode(kLeaf1)->rail, 1);
  EXPECT_EQ(t->findNode(ca(1, 1))->rail, 1);

  ASSERT_EQ(t->groups().size(), 1u);
  EXPECT_EQ(t->groups()[0].leaves.size(), 2u);
  EXPECT_EQ(t->groups()[0].spines.size(), 2u);
  EXPECT_EQ(t->findNode(kSpine1)->group, 0);
}

TEST_F(SmallRailFabric, Lookups) {
  auto t = builder().build();
  // Port GUIDs: CA ports, and a switch's port-0 GUID.
  auto p = t->findPort(Guid{ca(1, 1).value() + 0x1000});
  ASSERT_TRUE(p);
  EXPECT_EQ(t->node(p->node).guid, ca(1, 1));
  EXPECT_EQ(p->port, PortNum{1});
  auto s = t->findPort(kLeaf0);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->port, PortNum{0});
  EXPECT_FALSE(t->findPort(Guid{0xdead}));
  EXPECT_EQ(t->findNode(Guid{0xdead}), nullptr);

  // LIDs: switches 1..4; h1 mlx5_0 has LID 5 with LMC 2 (5..8).
  EXPECT_EQ(t->node(t->findLid(Lid{3})->node).guid, kLeaf0);
  for (std::uint16_t l = 5; l <= 8; ++l) {
    auto r = t->findLid(Lid{l});
    ASSERT_TRUE(r) << l;
    EXPECT_EQ(t->node(r->node).guid, ca(1, 0));
  }
  EXPECT_EQ(t->node(t->findLid(Lid{9})->node).guid, ca(1, 1));
  EXPECT_FALSE(t->findLid(Lid{10}));
  EXPECT_EQ(t->findNode(kLeaf0)->lid(), Lid{3});

  // Switch external ports inherit the switch's GUID and LID.
  const Port* ext = t->port(t->findNode(kLeaf0)->index, PortNum{1});
  ASSERT_NE(ext, nullptr);
  EXPECT_EQ(ext->guid, kLeaf0);
  EXPECT_EQ(ext->lid, Lid{3});
  EXPECT_EQ(t->port(t->findNode(kLeaf0)->index, PortNum{7}), nullptr);  // never reported
  EXPECT_EQ(t->remote(PortRef{t->findNode(kLeaf0)->index, PortNum{1}})->guid,
            Guid{ca(1, 0).value() + 0x1000});
}

TEST_F(SmallRailFabric, NodeNameMapReplacesDescriptions) {
  auto b = builder();
  auto map = std::make_shared<NodeNameMap>(NodeNameMap::parse(
      "0x12 \"leaf-renamed\"\n0x22 \"gpu001 mlx5_0\"\n0x23 \"gpu001 mlx5_1\"\n", "map"));
  b.setNodeNameMap(map);
  auto t = b.build();
  EXPECT_EQ(t->findNode(kLeaf0)->description, "leaf-renamed");
  EXPECT_EQ(t->findNode(kLeaf0)->nodeDescription, "leaf0");
  EXPECT_EQ(t->findNode(kLeaf1)->description, "leaf1");
  // The mapped names regroup the hosts.
  const Host* gpu = t->findHost("gpu001");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->hcas.size(), 2u);
  EXPECT_EQ(t->findHost("h1"), nullptr);
  EXPECT_EQ(t->findHost("h2")->hcas.size(), 2u);
}

TEST_F(SmallRailFabric, DegradedLinkIsBelowEnabled) {
  auto b = builder();
  Port slow = port(1, Guid{ca(2, 0).value() + 0x1000}, 13);
  slow.activeRate = LinkRate{LinkWidth::k1x, LinkSpeed::kHdr};
  b.addPort(ca(2, 0), slow);
  auto t = b.build();
  int below = 0;
  for (const Link& l : t->links()) {
    if (!l.belowEnabled()) continue;
    ++below;
    EXPECT_EQ(t->node(l.a.node).guid, ca(2, 0));
    EXPECT_EQ(l.enabledRate->toString(), "4xHDR");
    EXPECT_EQ(l.rate->toString(), "1xHDR");
  }
  EXPECT_EQ(below, 1);
}

TEST(TopologyBuilder, RejectsDuplicatesAndConflicts) {
  TopologyBuilder b;
  b.addNode({NodeType::kSwitch, Guid{1}, Guid{1}, "s", 0, 0, 0, 4});
  EXPECT_THROW(b.addNode({NodeType::kCa, Guid{1}, Guid{1}, "x", 0, 0, 0, 1}),
               std::invalid_argument);
  b.addNode({NodeType::kCa, Guid{2}, Guid{2}, "a", 0, 0, 0, 1});
  b.addNode({NodeType::kCa, Guid{3}, Guid{3}, "b", 0, 0, 0, 1});
  EXPECT_THROW(b.connect(Guid{2}, PortNum{1}, Guid{9}, PortNum{1}), std::invalid_argument);
  EXPECT_THROW(b.connect(Guid{2}, PortNum{2}, Guid{1}, PortNum{1}), std::invalid_argument);
  EXPECT_THROW(b.connect(Guid{2}, PortNum{0}, Guid{1}, PortNum{1}), std::invalid_argument);
  Port p;
  p.num = PortNum{5};
  EXPECT_THROW(b.addPort(Guid{1}, p), std::invalid_argument);
  b.connect(Guid{2}, PortNum{1}, Guid{1}, PortNum{1});
  b.connect(Guid{3}, PortNum{1}, Guid{1}, PortNum{1});  // port 1 of the switch again
  EXPECT_THROW(b.build(), std::invalid_argument);
}

TEST(TopologyBuilder, EmptyAndIsolated) {
  TopologyBuilder b;
  auto empty = b.build();
  EXPECT_TRUE(empty->nodes().empty());
  EXPECT_EQ(empty->maxLevel(), 0);

  TopologyBuilder b2;
  b2.addNode({NodeType::kSwitch, Guid{1}, Guid{1}, "lonely", 0, 0, 0, 4});
  b2.addNode({NodeType::kCa, Guid{2}, Guid{7}, "no-host-pattern", 0, 0, 0, 1});
  auto t = b2.build();
  EXPECT_EQ(t->node(0).level, kUnknownLevel);
  EXPECT_EQ(t->node(1).level, kCaLevel);
  ASSERT_EQ(t->hosts().size(), 1u);
  EXPECT_FALSE(t->hosts()[0].namedFromDescription);
  EXPECT_EQ(t->hosts()[0].name, toString(Guid{7}));
  EXPECT_TRUE(t->rails().empty());
  EXPECT_FALSE(t->railOptimized());
}

TEST(FatTree, ParseHcaDescription) {
  auto a = parseHcaDescription("dgx0001 mlx5_3");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "dgx0001");
  EXPECT_EQ(a->index, 3);
  auto b = parseHcaDescription("  node 12 hfi1_0 ");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, "node 12");
  EXPECT_EQ(b->index, 0);
  EXPECT_FALSE(parseHcaDescription("MF0;leaf-01:MQM8790/U1"));
  EXPECT_FALSE(parseHcaDescription("host HCA-1"));
  EXPECT_FALSE(parseHcaDescription("mlx5_0"));
  EXPECT_FALSE(parseHcaDescription("host mlx5_"));
  EXPECT_FALSE(parseHcaDescription("host mlx5_x1"));
}

// --- Generated fabrics ----------------------------------------------------------------------

std::set<std::string> descriptions(const Topology& t, const std::vector<NodeIndex>& v) {
  std::set<std::string> out;
  for (NodeIndex i : v) out.insert(t.node(i).description);
  return out;
}

TEST(GeneratedTopology, TwoLevelNotRailOptimized) {
  auto shape = testing::twoLevel(4, 2, 4);
  shape.options.hcasPerHost = 2;
  auto t = testing::netfileTopology(shape);
  EXPECT_EQ(t->switchCount(), 6u);
  EXPECT_EQ(t->caCount(), 32u);
  EXPECT_EQ(t->links().size(), 40u);
  EXPECT_EQ(t->maxLevel(), 2);
  EXPECT_EQ(t->nodesAtLevel(kLeafLevel).size(), 4u);
  EXPECT_EQ(t->nodesAtLevel(2).size(), 2u);
  EXPECT_EQ(t->hosts().size(), 16u);
  for (const Host& h : t->hosts()) {
    EXPECT_EQ(h.hcas.size(), 2u) << h.name;
    // Both HCAs of a host hang off the same leaf here: one rail.
    EXPECT_EQ(t->node(h.hcas[0]).rail, t->node(h.hcas[1]).rail);
  }
  EXPECT_EQ(t->rails().size(), 1u);
  EXPECT_FALSE(t->railOptimized());
  ASSERT_EQ(t->groups().size(), 1u);
  EXPECT_EQ(t->groups()[0].leaves.size(), 4u);
  EXPECT_EQ(t->groups()[0].spines.size(), 2u);
  ASSERT_NE(t->findHost("dgx0001"), nullptr);
}

TEST(GeneratedTopology, ThreeLevelPods) {
  auto t = testing::netfileTopology(testing::threeLevel(2, 2, 2, 2, 2));
  EXPECT_EQ(t->maxLevel(), 3);
  EXPECT_EQ(t->nodesAtLevel(1).size(), 4u);
  EXPECT_EQ(t->nodesAtLevel(2).size(), 4u);
  EXPECT_EQ(t->nodesAtLevel(3).size(), 2u);
  for (NodeIndex c : t->nodesAtLevel(3)) {
    EXPECT_EQ(t->node(c).description.find("core"), 4u) << t->node(c).description;
    for (const auto& p : t->node(c).ports) {
      if (p && p->remote) {
        EXPECT_EQ(p->direction, PortDirection::kDown);
      }
    }
  }
  // Pods are the leaf groups; each pod's spines are its own.
  ASSERT_EQ(t->groups().size(), 2u);
  for (const LeafGroup& g : t->groups()) {
    EXPECT_EQ(g.leaves.size(), 2u);
    EXPECT_EQ(g.spines.size(), 2u);
    auto names = descriptions(*t, g.leaves);
    std::string pod = names.begin()->substr(names.begin()->find("leaf-p"), 7);
    for (const auto& n : names) EXPECT_NE(n.find(pod), std::string::npos) << n;
    for (NodeIndex s : g.spines) EXPECT_EQ(t->node(s).group, t->node(g.leaves[0]).group);
  }
  EXPECT_EQ(t->hosts().size(), 8u);
}

TEST(GeneratedTopology, SuperpodRails) {
  auto t = testing::netfileTopology(testing::superpod(2));
  EXPECT_EQ(t->caCount(), 512u);
  EXPECT_EQ(t->hosts().size(), 64u);
  ASSERT_EQ(t->rails().size(), 8u);
  EXPECT_TRUE(t->railOptimized());
  for (const Rail& r : t->rails()) {
    EXPECT_EQ(r.leaves.size(), 2u);  // one leaf per SU
    EXPECT_EQ(r.hcas.size(), 64u);
    // Leaf names say the rail ("leaf-su1-r3" is rail index 2): detected from wiring alone.
    for (const auto& name : descriptions(*t, r.leaves))
      EXPECT_NE(name.find("-r" + std::to_string(r.index + 1) + ":"), std::string::npos) << name;
    for (NodeIndex h : r.hcas) EXPECT_EQ(t->node(h).hcaIndex, r.index);
  }
  for (const Host& h : t->hosts()) EXPECT_EQ(h.hcas.size(), 8u);
}

TEST(GeneratedTopology, MiswiredHcaKeepsTheLeafsRail) {
  NetFabric f = testing::generate(testing::superpod(1)).fabric;
  // Swap the descriptions of dgx0001's mlx5_0 and mlx5_1: the leaves' rails come from the
  // majority of their cabled HCAs, so they stay; the two swapped HCAs take their leaf's rail.
  NetNode* a = nullptr;
  NetNode* b = nullptr;
  for (auto& n : f.nodes) {
    if (n.desc == "dgx0001 mlx5_0") a = &n;
    if (n.desc == "dgx0001 mlx5_1") b = &n;
  }
  ASSERT_TRUE(a && b);
  std::swap(a->desc, b->desc);
  auto t = topologyFromNetFabric(f);
  ASSERT_EQ(t->rails().size(), 8u);
  const Host* h = t->findHost("dgx0001");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(t->node(h->hcas[0]).rail, 1);  // mlx5_0 (by name) sits on the rail-1 leaf
  EXPECT_EQ(t->node(h->hcas[1]).rail, 0);
  for (const Rail& r : t->rails()) EXPECT_EQ(r.leaves.size(), 1u);
}

TEST(GeneratedTopology, NetFabricRoundTrip) {
  auto t = testing::netfileTopology(testing::twoLevel(3, 2, 2));
  NetFabric back = netFabricFromTopology(*t);
  auto t2 = topologyFromNetFabric(back);
  ASSERT_EQ(t2->nodes().size(), t->nodes().size());
  ASSERT_EQ(t2->links().size(), t->links().size());
  for (std::size_t i = 0; i < t->nodes().size(); ++i) {
    const Node& x = t->node(NodeIndex(i));
    const Node& y = t2->node(NodeIndex(i));
    EXPECT_EQ(x.guid, y.guid);
    EXPECT_EQ(x.description, y.description);
    EXPECT_EQ(x.level, y.level);
    EXPECT_EQ(x.rail, y.rail);
  }
  for (std::size_t i = 0; i < t->links().size(); ++i) {
    EXPECT_EQ(t->links()[i].a, t2->links()[i].a);
    EXPECT_EQ(t->links()[i].b, t2->links()[i].b);
    EXPECT_EQ(t->links()[i].rate, t2->links()[i].rate);
  }
  // And through the text format.
  auto t3 = topologyFromNetFabric(parseNetText(formatNetFile(back), "rt"));
  EXPECT_EQ(t3->links().size(), t->links().size());
  EXPECT_EQ(t3->hosts().size(), t->hosts().size());
}

}  // namespace
}  // namespace ibfabric
