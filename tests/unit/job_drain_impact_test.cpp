// The drained model (routing/drained_model.h) and the jobs a drain hits
// (routing/job_drain_impact.h), on generated fabrics with shortest-path tables:
//   - rerouteShortestPaths gives the rerouted destinations routes that avoid the drained parts
//     and keeps every other entry;
//   - a ring of 8 hosts alternating between two leaves (every ring edge crosses the spines, 2
//     flows per up-link over 2 spines) loses half its bottleneck when one spine is drained (4
//     flows on the one up-link left), and its flows on the drained model avoid the spine;
//   - a job whose HCA cable is drained drops to 0, and its alternatives leave that host and the
//     other jobs' hosts out and predict a bottleneck above 0; jobs the drain misses are not
//     listed; the placement cap says who got no alternatives.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "routing/drain_impact.h"
#include "routing/drained_model.h"
#include "routing/job_drain_impact.h"
#include "routing/routes.h"
#include "routing/shortest_path_reroute.h"
#include "routing/synthetic_tables.h"
#include "tests/support/fabrics.h"

namespace ibfabric::routing {
namespace {

struct Fabric {
  explicit Fabric(const testing::FabricShape& shape)
      : t(testing::routableTopology(shape)), tables(computeShortestPathTables(t)) {}
  TopologyPtr t;
  ForwardingTablesPtr tables;
  PlacementEngine engine{std::make_shared<const PlacementIndex>(t, tables),
                         std::make_shared<const LinkLoadModel>(t)};

  /// Hosts by the leaf their first HCA hangs off, in leaf order.
  std::vector<std::vector<std::string>> hostsByLeaf() const {
    std::map<NodeIndex, std::vector<std::string>> by;
    for (const Host& h : t->hosts())
      by[t->node(h.hcas.at(0)).port(PortNum(1))->remote->node].push_back(h.name);
    std::vector<std::vector<std::string>> out;
    for (auto& [leaf, hosts] : by) out.push_back(hosts);
    return out;
  }
  NodeIndex firstSpine() const { return t->nodesAtLevel(kLeafLevel + 1).at(0); }
  std::uint32_t hcaCable(const std::string& host) const {
    return *t->node(t->findHost(host)->hcas.at(0)).port(PortNum(1))->link;
  }
};

struct Drained {
  Drained(const Fabric& f, DrainSet d)
      : drain(std::move(d)),
        impact(drainImpact(*f.t, f.tables.get(), drain)),
        model(drainedModel(f.engine, drain, impact)) {}
  DrainSet drain;
  DrainImpact impact;
  DrainedModel model;
};

TEST(DrainedModel, ReroutedDestinationsAvoidTheDrainedSpineAndOtherEntriesStay) {
  Fabric f(testing::superpod(2));
  DrainSet d;
  d.switches.insert(f.firstSpine());
  Drained x(f, d);
  ASSERT_FALSE(x.impact.reroute.empty());
  EXPECT_EQ(x.model.destinationsRerouted, x.impact.reroute.size());
  const ForwardingTables& after = x.model.engine->index().tables();
  const std::vector<char> out = linksOutOfService(*f.t, d);
  // Every host HCA still reaches every other one of its rail, never over a drained cable.
  const auto& hosts = f.t->hosts();
  for (std::size_t a = 0; a < hosts.size(); a += 7) {
    for (std::size_t b = 0; b < hosts.size(); b += 5) {
      if (a == b) continue;
      const PortRef src{hosts[a].hcas[2], PortNum(1)};
      const Lid dst = f.t->node(hosts[b].hcas[2]).port(PortNum(1))->lid;
      const Route r = traceRoute(*f.t, after, src, dst);
      ASSERT_TRUE(r.ok()) << hosts[a].name << " -> " << hosts[b].name << ": " << r.problem;
      for (const auto& hop : r.hops)
        EXPECT_FALSE(out[hop.link]) << hosts[a].name << " -> " << hosts[b].name;
    }
  }
  // Destinations not rerouted keep the SM's entries on every switch.
  std::vector<char> rerouted(65536, 0);
  for (Lid l : x.impact.reroute) rerouted[l.value()] = 1;
  std::size_t kept = 0;
  for (const Node& n : f.t->nodes()) {
    if (!n.isSwitch()) continue;
    const SwitchTable& before = *f.tables->table(n.index);
    const SwitchTable& now = *after.table(n.index);
    for (std::size_t lid = 1; lid < before.ports.size(); ++lid) {
      if (rerouted[lid]) continue;
      ASSERT_EQ(now.ports.at(lid), before.ports[lid]) << n.description << " lid " << lid;
      ++kept;
    }
  }
  EXPECT_GT(kept, 0u);
  // The spine's cables are down on the drained load, up on the current one.
  for (std::uint32_t l = 0; l < out.size(); ++l) {
    if (!out[l]) continue;
    EXPECT_EQ(x.model.engine->load().at(directedLink(l, false)).residualBytesPerSecond(), 0.0);
    EXPECT_GT(f.engine.load().at(directedLink(l, false)).residualBytesPerSecond(), 0.0);
  }
}

TEST(JobDrainImpact, ARingAcrossTwoLeavesLosesHalfItsBottleneckWithOneOfTwoSpines) {
  Fabric f(testing::twoLevel(2, 2, 4));
  const auto leaves = f.hostsByLeaf();
  ASSERT_EQ(leaves.size(), 2u);
  ASSERT_EQ(leaves[0].size(), 4u);
  JobTraffic ring{"ring", {}, CommPattern::kRingAllreduce};
  for (std::size_t i = 0; i < 4; ++i) {
    ring.hosts.push_back(leaves[0][i]);
    ring.hosts.push_back(leaves[1][i]);
  }
  const std::vector<JobTraffic> jobs{ring};
  const auto attribution = JobAttribution::compute(f.engine.index(), jobs);
  DrainSet d;
  d.switches.insert(f.firstSpine());
  Drained x(f, d);
  const auto hits = jobDrainImpact(f.engine, x.model, &attribution, jobs, x.impact);
  ASSERT_EQ(hits.size(), 1u);
  const JobDrainImpact& h = hits[0];
  EXPECT_TRUE(h.hostsHit.empty());
  EXPECT_EQ(h.drainedLinksUsed, 4u);  // up to the spine and down from it, from either leaf
  ASSERT_TRUE(h.bottleneckNow && h.bottleneckAfter);
  EXPECT_GT(*h.bottleneckAfter, 0.0);  // rerouted, not cut
  EXPECT_DOUBLE_EQ(*h.bottleneckAfter, *h.bottleneckNow / 2.0);
  EXPECT_DOUBLE_EQ(*h.dropFraction(), 0.5);
  // The same figure the job's own attribution gives on the drained model: no flow on the spine.
  const auto after = JobAttribution::compute(x.model.engine->index(), jobs);
  EXPECT_EQ(after.jobs()[0].unrouted, 0u);
  for (const auto& u : after.jobs()[0].links) EXPECT_FALSE(x.model.linkOut[linkOf(u.link)]);
  ASSERT_TRUE(h.placed);
  ASSERT_FALSE(h.alternatives.empty()) << h.note;
  // 8 hosts on the fabric's 8: the best the engine finds is no worse than the job's order.
  EXPECT_GE(h.alternatives[0].score.bottleneckBytesPerSecond, *h.bottleneckAfter);
}

TEST(JobDrainImpact, AJobWhoseCableIsDrainedDropsToZeroAndItsAlternativesAvoidThatHost) {
  Fabric f(testing::twoLevel(2, 2, 4));
  const auto leaves = f.hostsByLeaf();
  const std::vector<JobTraffic> jobs{
      {"hit", {leaves[0][0], leaves[0][1]}, CommPattern::kRingAllreduce},
      {"busy", {leaves[0][2], leaves[0][3]}, CommPattern::kRingAllreduce},
      {"spared", {leaves[1][0], leaves[1][1]}, CommPattern::kAllToAll}};
  const auto attribution = JobAttribution::compute(f.engine.index(), jobs);
  DrainSet d;
  d.links.insert(f.hcaCable(leaves[0][1]));
  Drained x(f, d);
  const auto hits = jobDrainImpact(f.engine, x.model, &attribution, jobs, x.impact);
  ASSERT_EQ(hits.size(), 1u);  // "busy" and "spared" route nothing over that cable
  const JobDrainImpact& h = hits[0];
  EXPECT_EQ(h.job, 0u);
  ASSERT_EQ(h.hostsHit.size(), 1u);
  EXPECT_EQ(h.hostsHit[0].host, leaves[0][1]);
  EXPECT_TRUE(h.hostsHit[0].cutOff);
  EXPECT_EQ(h.drainedLinksUsed, 2u);  // the cable, both ways
  ASSERT_TRUE(h.bottleneckNow && h.bottleneckAfter);
  EXPECT_GT(*h.bottleneckNow, 0.0);
  EXPECT_EQ(*h.bottleneckAfter, 0.0);
  EXPECT_DOUBLE_EQ(*h.dropFraction(), 1.0);
  ASSERT_FALSE(h.alternatives.empty()) << h.note;
  for (const auto& o : h.alternatives) {
    EXPECT_EQ(o.hosts.size(), 2u);
    EXPECT_GT(o.score.bottleneckBytesPerSecond, 0.0);
    for (const auto& host : o.hosts) {
      EXPECT_NE(host, leaves[0][1]);  // loses its HCA
      for (const auto& taken : jobs[1].hosts) EXPECT_NE(host, taken);
      for (const auto& taken : jobs[2].hosts) EXPECT_NE(host, taken);
    }
  }
  // With no placements allowed the hit is still reported, and says why it has no alternatives.
  JobDrainOptions none;
  none.maxPlacements = 0;
  const auto capped = jobDrainImpact(f.engine, x.model, &attribution, jobs, x.impact, none);
  ASSERT_EQ(capped.size(), 1u);
  EXPECT_FALSE(capped[0].placed);
  EXPECT_TRUE(capped[0].alternatives.empty());
  EXPECT_NE(capped[0].note.find("not computed"), std::string::npos) << capped[0].note;
}

TEST(JobDrainImpact, WithoutAttributionOnlyLostHcasCountAndRebaseKeepsTheDrain) {
  Fabric f(testing::twoLevel(2, 2, 4));
  const auto leaves = f.hostsByLeaf();
  const std::vector<JobTraffic> jobs{
      {"a", {leaves[0][0], leaves[1][0]}, CommPattern::kRingAllreduce}};
  DrainSet d;
  d.switches.insert(f.firstSpine());
  Drained x(f, d);
  EXPECT_TRUE(jobDrainImpact(f.engine, x.model, nullptr, jobs, x.impact).empty());
  // The same drain named on another snapshot of the fabric: the same parts.
  const TopologyPtr other = testing::routableTopology(testing::twoLevel(2, 2, 4));
  DrainSet cable;
  cable.links.insert(f.hcaCable(leaves[0][1]));
  const DrainSet moved = rebaseDrain(*f.t, cable, *other);
  ASSERT_EQ(moved.links.size(), 1u);
  const Link& l = other->links()[*moved.links.begin()];
  EXPECT_EQ(other->node(l.a.node).guid, f.t->node(f.t->links()[*cable.links.begin()].a.node).guid);
  EXPECT_EQ(rebaseDrain(*f.t, d, *other).switches.size(), 1u);
}

}  // namespace
}  // namespace ibfabric::routing
