// Routes, validation and balance on in-memory fabrics with hand-edited forwarding tables:
// healthy shortest-path tables, a black hole, a dead egress port, a loop, a missing table, an
// unbalanced leaf; OpenSM's LFT dump of a real ibsim fabric.
#include "routing/routes.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "discovery/net_topology.h"
#include "discovery/netfile.h"
#include "discovery/topogen.h"
#include "routing/lft_reader.h"
#include "routing/synthetic_tables.h"
#include "tests/support/fabrics.h"

namespace ibfabric::routing {
namespace {

// Two-level fat tree: 4 leaves x 2 spines x 3 hosts per leaf (12 CAs), LIDs 1.. in file order.
NetFabric smallNet() { return testing::routableNet(testing::twoLevel(4, 2, 3)); }

TopologyPtr smallFabric() { return testing::routableTopology(testing::twoLevel(4, 2, 3)); }

// A mutable copy of the tables of `t` to edit.
std::vector<std::optional<SwitchTable>> copyTables(const ForwardingTables& t) {
  std::vector<std::optional<SwitchTable>> v(t.topology()->nodes().size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (auto* s = t.table(static_cast<NodeIndex>(i))) v[i] = *s;
  }
  return v;
}

const Node& byName(const Topology& t, std::string_view desc) {
  for (const Node& n : t.nodes()) {
    if (n.description.find(desc) != std::string::npos) return n;
  }
  throw std::runtime_error("no node " + std::string(desc));
}

PortRef caPort(const Node& ca) { return PortRef{ca.index, PortNum{1}}; }

TEST(RoutingRoutes, ShortestPathTablesValidateClean) {
  auto topo = smallFabric();
  auto tables = computeShortestPathTables(topo);
  EXPECT_EQ(tables->switchesWithTables(), 6u);
  auto report = validateRoutes(*topo, *tables);
  EXPECT_EQ(report.pairsChecked, 12u * 11u);
  EXPECT_EQ(report.pairsOk, report.pairsChecked);
  EXPECT_TRUE(report.problems.empty());
  EXPECT_EQ(report.loops + report.blackHoles + report.missingTables, 0u);
}

TEST(RoutingRoutes, TraceCrossesLeafSpineLeaf) {
  auto topo = smallFabric();
  auto tables = computeShortestPathTables(topo);
  const Node& a = byName(*topo, "dgx0001 ");
  const Node& b = byName(*topo, "dgx0012 ");
  auto route = traceRoute(*topo, *tables, caPort(a), b.lid());
  ASSERT_TRUE(route.ok()) << route.problem;
  ASSERT_EQ(route.hops.size(), 4u);
  EXPECT_EQ(route.switchHops(), 3);
  EXPECT_EQ(route.hops.front().from, caPort(a));
  EXPECT_EQ(route.hops.back().to, caPort(b));
  EXPECT_EQ(topo->node(route.hops[0].to.node).level, 1);
  EXPECT_EQ(topo->node(route.hops[1].to.node).level, 2);
  EXPECT_EQ(topo->node(route.hops[2].to.node).level, 1);
  for (const auto& h : route.hops) {
    const Link& l = topo->links()[h.link];
    EXPECT_TRUE((l.a == h.from && l.b == h.to) || (l.b == h.from && l.a == h.to));
  }
  // Same leaf: two cables, one switch.
  const Node& c = byName(*topo, "dgx0002 ");
  auto local = traceRoute(*topo, *tables, caPort(a), c.lid());
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local.hops.size(), 2u);
  // To a switch LID, and from a switch's port 0.
  const Node& spine = byName(*topo, "spine-01");
  auto toSpine = traceRoute(*topo, *tables, caPort(a), spine.lid());
  ASSERT_TRUE(toSpine.ok()) << toSpine.problem;
  EXPECT_EQ(toSpine.hops.back().to.node, spine.index);
  auto fromSpine = traceRoute(*topo, *tables, PortRef{spine.index, PortNum{0}}, a.lid());
  ASSERT_TRUE(fromSpine.ok()) << fromSpine.problem;
  EXPECT_EQ(fromSpine.hops.size(), 2u);
  // Unknown LID.
  auto unknown = traceRoute(*topo, *tables, caPort(a), Lid{999});
  EXPECT_EQ(unknown.status, Route::Status::kUnknownLid);
  EXPECT_EQ(toString(unknown.status), "unknown_lid");
}

TEST(RoutingRoutes, MissingEntryIsABlackHole) {
  auto topo = smallFabric();
  auto good = computeShortestPathTables(topo);
  const Node& spine = byName(*topo, "spine-01");
  const Node& dst = byName(*topo, "dgx0012 ");
  auto edited = copyTables(*good);
  edited[spine.index]->ports[dst.lid().value()] = SwitchTable::kNoPort;
  ForwardingTables tables(topo, std::move(edited), "memory");

  auto report = validateRoutes(*topo, tables);
  EXPECT_GT(report.blackHoles, 0u);
  EXPECT_EQ(report.loops, 0u);
  EXPECT_EQ(report.pairsOk + report.blackHoles, report.pairsChecked);
  ASSERT_FALSE(report.problems.empty());
  for (const auto& p : report.problems) {
    EXPECT_EQ(p.dst, dst.lid());
    EXPECT_EQ(p.status, Route::Status::kBlackHole);
    EXPECT_NE(p.detail.find("spine-01"), std::string::npos) << p.detail;
    EXPECT_NE(p.detail.find("no LFT entry"), std::string::npos) << p.detail;
    // Each listed problem agrees with a full trace.
    const auto src = topo->findLid(p.src);
    ASSERT_TRUE(src);
    EXPECT_EQ(traceRoute(*topo, tables, *src, p.dst).status, Route::Status::kBlackHole);
  }
  // Problems are capped, counts stay exact.
  auto capped = validateRoutes(*topo, tables, 1);
  EXPECT_EQ(capped.problems.size(), 1u);
  EXPECT_EQ(capped.blackHoles, report.blackHoles);
}

TEST(RoutingRoutes, UnlinkedSpineCableBeforeRerouteIsABlackHole) {
  // Tables as programmed on the healthy fabric, judged against the fabric after one leaf-spine
  // cable went away (what the fabric looks like before the SM reroutes).
  NetFabric net = smallNet();
  auto healthy = topologyFromNetFabric(net, "memory");
  auto tables = computeShortestPathTables(healthy);
  for (NetNode& n : net.nodes) {
    if (n.id != "leaf-04") continue;
    std::erase_if(n.ports, [](const NetPort& p) { return p.remoteId == "spine-01"; });
  }
  for (NetNode& n : net.nodes) {
    if (n.id != "spine-01") continue;
    std::erase_if(n.ports, [](const NetPort& p) { return p.remoteId == "leaf-04"; });
  }
  net.reindex();
  auto broken = topologyFromNetFabric(net, "memory");
  auto rebased = rebaseTables(*tables, broken);
  EXPECT_EQ(rebased->switchesWithTables(), 6u);
  auto report = validateRoutes(*broken, *rebased);
  EXPECT_GT(report.blackHoles, 0u);
  bool sawDeadPort = false;
  for (const auto& p : report.problems) {
    if (p.detail.find("which is") != std::string::npos) sawDeadPort = true;
  }
  EXPECT_TRUE(sawDeadPort);
  // Recomputed tables (the SM's reroute) are clean again.
  auto rerouted = computeShortestPathTables(broken);
  EXPECT_TRUE(validateRoutes(*broken, *rerouted).problems.empty());
  EXPECT_FALSE(tableDifferences(*rebased, *rerouted).empty());
  EXPECT_TRUE(tableDifferences(*tables, *tables).empty());
}

TEST(RoutingRoutes, LoopIsFoundAndReported) {
  auto topo = smallFabric();
  auto good = computeShortestPathTables(topo);
  const Node& spine = byName(*topo, "spine-01");
  const Node& leaf = byName(*topo, "leaf-01");
  const Node& dst = byName(*topo, "dgx0012 ");  // on leaf-04
  auto edited = copyTables(*good);
  // spine-01 sends dst down to leaf-01, leaf-01 sends it up to spine-01.
  PortNum spineToLeaf{0}, leafToSpine{0};
  for (const auto& p : spine.ports) {
    if (p && p->remote && p->remote->node == leaf.index) spineToLeaf = p->num;
  }
  for (const auto& p : leaf.ports) {
    if (p && p->remote && p->remote->node == spine.index) leafToSpine = p->num;
  }
  edited[spine.index]->ports[dst.lid().value()] = spineToLeaf.value();
  edited[leaf.index]->ports[dst.lid().value()] = leafToSpine.value();
  ForwardingTables tables(topo, std::move(edited), "memory");
  auto route = traceRoute(*topo, tables, caPort(byName(*topo, "dgx0001 ")), dst.lid());
  EXPECT_EQ(route.status, Route::Status::kLoop);
  EXPECT_NE(route.problem.find("loop"), std::string::npos);
  auto report = validateRoutes(*topo, tables);
  EXPECT_GT(report.loops, 0u);
  for (const auto& p : report.problems) EXPECT_EQ(p.status, Route::Status::kLoop);
}

TEST(RoutingRoutes, MissingTableIsCounted) {
  auto topo = smallFabric();
  auto edited = copyTables(*computeShortestPathTables(topo));
  const Node& spine = byName(*topo, "spine-02");
  edited[spine.index].reset();
  ForwardingTables tables(topo, std::move(edited), "memory");
  EXPECT_EQ(tables.switchesWithTables(), 5u);
  auto report = validateRoutes(*topo, tables);
  EXPECT_GT(report.missingTables, 0u);
  EXPECT_EQ(report.blackHoles + report.loops, 0u);
  ASSERT_FALSE(report.problems.empty());
  EXPECT_EQ(report.problems[0].status, Route::Status::kNoTable);
  EXPECT_NE(report.problems[0].detail.find("spine-02"), std::string::npos);
}

TEST(RoutingRoutes, BalanceCountsDestinationsPerUpPort) {
  auto topo = smallFabric();
  auto good = computeShortestPathTables(topo);
  auto balance = routeBalance(*topo, *good);
  ASSERT_EQ(balance.size(), 4u);
  for (const auto& b : balance) {
    ASSERT_EQ(b.destinationsPerUpPort.size(), 2u);
    std::uint32_t total = 0;
    for (auto [port, n] : b.destinationsPerUpPort) total += n;
    EXPECT_EQ(total, 9u);  // 12 CAs minus the 3 on the leaf itself
    EXPECT_LE(b.imbalance, 10.0 / 9.0 * 1.0001);
  }
  // Everything of leaf-01 up one port: imbalance 2.
  const Node& leaf = byName(*topo, "leaf-01");
  auto edited = copyTables(*good);
  const PortNum first = [&] {
    for (const auto& p : leaf.ports) {
      if (p && p->direction == PortDirection::kUp) return p->num;
    }
    return PortNum{0};
  }();
  for (const Node& n : topo->nodes()) {
    if (n.isCa() && n.port(PortNum{1})->remote->node != leaf.index) {
      edited[leaf.index]->ports[n.lid().value()] = first.value();
    }
  }
  ForwardingTables skewed(topo, std::move(edited), "memory");
  for (const auto& b : routeBalance(*topo, skewed)) {
    if (b.leaf != leaf.index) continue;
    EXPECT_DOUBLE_EQ(b.imbalance, 2.0);
    EXPECT_EQ(b.destinationsPerUpPort[0].second, 9u);
    EXPECT_EQ(b.destinationsPerUpPort[1].second, 0u);
  }
}

const std::filesystem::path kData = std::filesystem::path(IBFABRIC_TEST_DATA_DIR) / "routing";

TEST(RoutingOpensmDump, RealDumpValidatesAndMatchesTheLeafEntries) {
  auto topo = topologyFromNetFabric(parseNetFile(kData / "fat-4x2.ibnetdiscover"));
  auto tables = parseOpensmLftDump(kData / "fat-4x2.opensm-lfts.dump", topo);
  EXPECT_EQ(tables->switchesWithTables(), 6u);
  EXPECT_TRUE(tables->failures.empty());
  EXPECT_TRUE(tables->source().starts_with("opensm-dump "));
  const Node* leaf0 = topo->findNode(Guid{0x200000});
  ASSERT_NE(leaf0, nullptr);
  const SwitchTable* t = tables->table(leaf0->index);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->switchLid, Lid{2});
  EXPECT_EQ(t->linearFdbTop, 14);
  EXPECT_EQ(t->egress(Lid{1}), PortNum{1});   // host0-0
  EXPECT_EQ(t->egress(Lid{14}), PortNum{4});  // host3-1 via spine1
  EXPECT_EQ(t->egress(Lid{2}), PortNum{0});   // itself
  auto report = validateRoutes(*topo, *tables);
  EXPECT_EQ(report.pairsChecked, 8u * 7u);
  EXPECT_EQ(report.pairsOk, report.pairsChecked);
  // ftree spreads the 6 remote CAs over the two up-ports.
  const auto balance = routeBalance(*topo, *tables);
  ASSERT_EQ(balance.size(), 4u);  // every leaf, not none (imbalance defaults to 1.0)
  for (const auto& b : balance) {
    ASSERT_EQ(b.destinationsPerUpPort.size(), 2u);
    EXPECT_EQ(b.destinationsPerUpPort[0].second + b.destinationsPerUpPort[1].second, 6u);
    EXPECT_DOUBLE_EQ(b.imbalance, 1.0);
  }
}

TEST(RoutingOpensmDump, BadInputIsAClearError) {
  auto topo = topologyFromNetFabric(parseNetFile(kData / "fat-4x2.ibnetdiscover"));
  try {
    parseOpensmLftDumpText("0x0001 001 # before any header\n", topo, "x.dump");
    FAIL() << "no error";
  } catch (const LftDumpError& e) {
    EXPECT_STREQ(e.what(), "x.dump:1: LFT entry before any table header");
  }
  EXPECT_THROW(parseOpensmLftDumpText(
                   "Unicast lids [0-1] of switch Lid 2 guid 0x200000 ('a'):\n0x0001 zz\n", topo),
               LftDumpError);
  EXPECT_THROW(parseOpensmLftDumpText("garbage\n", topo), LftDumpError);
  EXPECT_THROW(parseOpensmLftDump("/nonexistent/lfts.dump", topo), LftDumpError);
  // A switch that is not in the topology is skipped and reported.
  auto t = parseOpensmLftDumpText(
      "Unicast lids [0-1] of switch Lid 9 guid 0x999999 ('other'):\n0x0001 001 # x\n1 lids "
      "dumped\n",
      topo);
  EXPECT_EQ(t->switchesWithTables(), 0u);
  ASSERT_EQ(t->failures.size(), 1u);
  EXPECT_NE(t->failures[0].find("0x0000000000999999"), std::string::npos);
}

}  // namespace
}  // namespace ibfabric::routing
