// Drain impact (routing/drain_impact.h) on a 1-SU superpod (32 hosts of 8 HCAs, 8 rail leaves,
// 4 spines) with shortest-path tables: an HCA cable loses that HCA on its rail and reroutes
// nothing; a leaf loses its HCAs; a spine takes one up-link from every leaf of the group and
// reroutes the destinations routed over it; every spine leaves the leaves without up-links, so
// every host is cut off.
#include "routing/drain_impact.h"

#include <gtest/gtest.h>

#include "routing/synthetic_tables.h"
#include "tests/support/fabrics.h"

namespace ibfabric::routing {
namespace {

struct Superpod {
  TopologyPtr t = testing::routableTopology(testing::superpod(1));  // with LIDs
  ForwardingTablesPtr tables = computeShortestPathTables(t);
  std::vector<NodeIndex> level(int l) const { return t->nodesAtLevel(l); }
};

TEST(DrainImpact, AnHcaCableLosesThatHcaOnItsRailAndReroutesNothing) {
  Superpod f;
  const Host& host = f.t->hosts().front();
  const Node& hca = f.t->node(host.hcas.at(3));
  DrainSet d;
  d.links.insert(*hca.port(PortNum{1})->link);
  const auto impact = drainImpact(*f.t, f.tables.get(), d);
  ASSERT_EQ(impact.hosts.size(), 1u);
  EXPECT_EQ(f.t->hosts()[impact.hosts[0].host].name, host.name);
  ASSERT_EQ(impact.hosts[0].lost.size(), 1u);
  EXPECT_EQ(impact.hosts[0].lost[0].hca, hca.index);
  EXPECT_EQ(impact.hosts[0].lost[0].rail, hca.rail);
  EXPECT_EQ(impact.hosts[0].lost[0].why, "cable drained");
  EXPECT_FALSE(impact.hosts[0].cutOff());
  EXPECT_EQ(impact.hostsCutOff(), 0u);
  EXPECT_TRUE(impact.leaves.empty());
  EXPECT_TRUE(impact.routesKnown);
  EXPECT_TRUE(impact.reroute.empty());  // only the lost HCA's own LID was routed over it
}

TEST(DrainImpact, ALeafLosesItsHcas) {
  Superpod f;
  const NodeIndex leaf = f.level(kLeafLevel).front();
  DrainSet d;
  d.switches.insert(leaf);
  const auto impact = drainImpact(*f.t, f.tables.get(), d);
  std::size_t onLeaf = 0;
  for (const auto& p : f.t->node(leaf).ports)
    onLeaf += p && p->remote && f.t->node(p->remote->node).isCa();
  EXPECT_EQ(impact.hcasLost(), onLeaf);
  EXPECT_EQ(impact.hosts.size(), onLeaf);  // one HCA (its rail's) of each host
  for (const auto& h : impact.hosts) EXPECT_EQ(h.lost.at(0).why, "leaf drained");
  ASSERT_EQ(impact.leaves.size(), 1u);  // the drained leaf's own up-links
  EXPECT_DOUBLE_EQ(impact.leaves[0].fractionLost(), 1.0);
  EXPECT_TRUE(impact.reroute.empty());  // only its own HCAs' LIDs were routed into it
}

TEST(DrainImpact, ASpineTakesOneUplinkFromEveryLeafAndReroutesWhatCrossedIt) {
  Superpod f;
  const auto spines = f.level(kLeafLevel + 1);
  ASSERT_GE(spines.size(), 2u);
  DrainSet d;
  d.switches.insert(spines.front());
  const auto impact = drainImpact(*f.t, f.tables.get(), d);
  EXPECT_TRUE(impact.hosts.empty());
  const auto leaves = f.level(kLeafLevel);
  ASSERT_EQ(impact.leaves.size(), leaves.size());
  for (const auto& u : impact.leaves) {
    EXPECT_GT(u.upLinks, u.drained);
    EXPECT_NEAR(u.fractionLost(), double(u.drained) / double(u.upLinks), 1e-9);
  }
  ASSERT_EQ(impact.groups.size(), 1u);
  EXPECT_GT(impact.groups[0].gbpsLost, 0.0);
  EXPECT_LT(impact.groups[0].fractionLost(), 1.0);
  EXPECT_FALSE(impact.reroute.empty());
  EXPECT_GE(impact.rerouteEntries, impact.reroute.size());
  // Without tables the routes are not guessed.
  const auto blind = drainImpact(*f.t, nullptr, d);
  EXPECT_FALSE(blind.routesKnown);
  EXPECT_TRUE(blind.reroute.empty());
  EXPECT_EQ(blind.leaves.size(), impact.leaves.size());
}

TEST(DrainImpact, EverySpineCutsEveryHostOff) {
  Superpod f;
  DrainSet d;
  for (NodeIndex s : f.level(kLeafLevel + 1)) d.switches.insert(s);
  const auto impact = drainImpact(*f.t, f.tables.get(), d);
  EXPECT_EQ(impact.hostsCutOff(), f.t->hosts().size());
  for (const auto& h : impact.hosts) {
    EXPECT_TRUE(h.cutOff());
    for (const auto& l : h.lost) EXPECT_EQ(l.why, "leaf keeps no up-link");
  }
}

}  // namespace
}  // namespace ibfabric::routing
