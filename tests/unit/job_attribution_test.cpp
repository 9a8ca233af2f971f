// Job attribution (routing/job_attribution.h) on a 2-SU superpod (64 hosts of 8 HCAs, a rail
// leaf per rail and SU: flows between SUs cross the spines) with shortest-path tables, checked
// against an independent oracle: every flow of the pattern traced hop by hop with
// routing::traceRoute. A ring puts rank i's HCA k on the route to rank i+1's HCA k (weight 1 each),
// alltoall every ordered pair rail by rail (weight 1 / (n - 1)); shares on a link sum to 1 and
// follow the weights; unknown hosts are listed and skipped; hottest links are ordered by
// utilization now.
#include "routing/job_attribution.h"

#include <gtest/gtest.h>

#include <map>

#include "routing/link_load.h"
#include "routing/routes.h"
#include "routing/synthetic_tables.h"
#include "tests/support/fabrics.h"

namespace ibfabric::routing {
namespace {

struct Fabric {
  explicit Fabric(const testing::FabricShape& shape = testing::superpod(2))
      : t(testing::routableTopology(shape)), tables(computeShortestPathTables(t)) {}
  TopologyPtr t;
  ForwardingTablesPtr tables;
  PlacementIndex index{t, tables};
  LinkLoadModel load{t};

  std::string host(std::size_t i) const { return t->hosts().at(i).name; }
};

struct Expected {
  std::uint32_t flows = 0;
  double weight = 0.0;
};

/// The oracle: flows of `from` -> `to`, rail by rail, traced with traceRoute.
void traceFlows(const Fabric& f, const std::string& from, const std::string& to, double weight,
                std::map<DirectedLinkId, Expected>& out) {
  const Host& a = *f.t->findHost(from);
  const Host& b = *f.t->findHost(to);
  ASSERT_EQ(a.hcas.size(), b.hcas.size());
  for (std::size_t k = 0; k < a.hcas.size(); ++k) {
    const PortRef src{a.hcas[k], PortNum(1)};
    const Lid dst = f.t->node(b.hcas[k]).port(PortNum(1))->lid;
    const Route r = traceRoute(*f.t, *f.tables, src, dst);
    ASSERT_TRUE(r.ok()) << r.problem;
    for (const auto& hop : r.hops) {
      auto& e = out[*f.load.transmitting(hop.from)];
      ++e.flows;
      e.weight += weight;
    }
  }
}

void expectSame(const JobRouting& job, const std::map<DirectedLinkId, Expected>& expected) {
  ASSERT_EQ(job.links.size(), expected.size());
  for (const auto& u : job.links) {
    auto it = expected.find(u.link);
    ASSERT_NE(it, expected.end()) << "link " << u.link << " not on the traced routes";
    EXPECT_EQ(u.flows, it->second.flows) << "link " << u.link;
    EXPECT_NEAR(u.weight, it->second.weight, 1e-12) << "link " << u.link;
  }
}

TEST(JobAttribution, RingFollowsTheTracedRoutesRailByRail) {
  Fabric f;
  // Hosts of both SUs (the ring crosses the spines twice per rail).
  const std::vector<std::string> hosts = {f.host(0), f.host(5), f.host(40), f.host(60)};
  auto a = JobAttribution::compute(f.index, {{"ring", hosts, CommPattern::kRingAllreduce}});
  ASSERT_EQ(a.jobs().size(), 1u);
  const JobRouting& job = a.jobs()[0];
  EXPECT_EQ(job.flows, 4u * 8u);  // 4 ring edges x 8 rails
  EXPECT_EQ(job.unrouted, 0u);
  EXPECT_TRUE(job.unknownHosts.empty());
  std::map<DirectedLinkId, Expected> expected;
  for (std::size_t i = 0; i < hosts.size(); ++i)
    traceFlows(f, hosts[i], hosts[(i + 1) % hosts.size()], 1.0, expected);
  expectSame(job, expected);
  for (const auto& u : job.links) EXPECT_DOUBLE_EQ(u.share, 1.0);  // alone on every link
}

TEST(JobAttribution, AllToAllIsEveryOrderedPairWeightedByItsSendersPeers) {
  Fabric f;
  const std::vector<std::string> hosts = {f.host(1), f.host(9), f.host(50)};
  auto a = JobAttribution::compute(f.index, {{"a2a", hosts, CommPattern::kAllToAll}});
  const JobRouting& job = a.jobs()[0];
  EXPECT_EQ(job.flows, 3u * 2u * 8u);
  std::map<DirectedLinkId, Expected> expected;
  for (const auto& from : hosts)
    for (const auto& to : hosts)
      if (from != to) traceFlows(f, from, to, 0.5, expected);
  expectSame(job, expected);
  // Each HCA injects weight 1 in total: its own up-link carries its two flows of 1/2.
  const Node& hca = f.t->node(f.t->findHost(hosts[0])->hcas[0]);
  const auto up = f.load.transmitting(PortRef{hca.index, PortNum(1)});
  const auto on = a.jobsOn(*up);
  ASSERT_EQ(on.size(), 1u);
  EXPECT_EQ(on[0].flows, 2u);
  EXPECT_DOUBLE_EQ(on[0].weight, 1.0);
}

TEST(JobAttribution, SharesOnALinkFollowTheJobsWeightsAndSumToOne) {
  // Two leaves under one spine: every flow between the leaves crosses the same two up-links.
  Fabric f(testing::twoLevel(2, 1, 4));
  auto a = JobAttribution::compute(
      f.index, {{"j1", {"dgx0001", "dgx0005"}, CommPattern::kRingAllreduce},
                {"j2", {"dgx0002", "dgx0006", "dgx0007"}, CommPattern::kRingAllreduce},
                {"j3", {"dgx0003", "dgx0004", "dgx0008"}, CommPattern::kAllToAll}});
  ASSERT_EQ(a.jobs().size(), 3u);
  std::map<DirectedLinkId, double> total;
  for (const auto& job : a.jobs())
    for (const auto& u : job.links) total[u.link] += u.weight;
  EXPECT_EQ(a.linksUsed(), total.size());
  bool shared = false;
  for (const auto& [link, weight] : total) {
    const auto on = a.jobsOn(link);
    ASSERT_FALSE(on.empty());
    double sum = 0.0;
    for (std::size_t k = 0; k < on.size(); ++k) {
      EXPECT_NEAR(on[k].share, on[k].weight / weight, 1e-12);
      if (k > 0) {
        EXPECT_GE(on[k - 1].share, on[k].share);  // highest share first
      }
      sum += on[k].share;
      // The job's own entry agrees.
      const auto& links = a.jobs()[on[k].job].links;
      auto it = std::find_if(links.begin(), links.end(), [&](auto& u) { return u.link == link; });
      ASSERT_NE(it, links.end());
      EXPECT_DOUBLE_EQ(it->share, on[k].share);
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
    shared = shared || on.size() > 1;
  }
  EXPECT_TRUE(shared) << "the three jobs share no link: the test shows nothing";
  // leaf 1's up-link: j1 1 flow (weight 1), j2 1 (1), j3 2 of weight 1/2 (1): a third each.
  const Host& h0 = *f.t->findHost("dgx0001");
  const NodeIndex leaf = f.t->node(h0.hcas[0]).port(PortNum(1))->remote->node;
  for (const auto& p : f.t->node(leaf).ports) {
    if (!p || !p->remote || !f.t->node(p->remote->node).isSwitch()) continue;
    const auto on = a.jobsOn(*f.load.transmitting(PortRef{leaf, p->num}));
    ASSERT_EQ(on.size(), 3u);
    for (const auto& u : on) EXPECT_NEAR(u.share, 1.0 / 3.0, 1e-12);
  }
  EXPECT_TRUE(a.jobsOn(0xFFFFFFF0u).empty());
}

TEST(JobAttribution, UnknownHostsAreListedAndSkipped) {
  Fabric f;
  auto a = JobAttribution::compute(
      f.index, {{"j", {f.host(0), "nosuchhost", f.host(8)}, CommPattern::kRingAllreduce},
                {"alone", {f.host(3)}, CommPattern::kAllToAll}});
  EXPECT_EQ(a.jobs()[0].unknownHosts, std::vector<std::string>{"nosuchhost"});
  EXPECT_EQ(a.jobs()[0].flows, 2u * 8u);   // a ring of the two known hosts
  EXPECT_TRUE(a.jobs()[1].links.empty());  // one host: no inter-host flows
  EXPECT_EQ(a.jobs()[1].flows, 0u);
}

TEST(JobAttribution, HottestLinksAreOrderedByUtilizationNow) {
  Fabric f;
  auto a = JobAttribution::compute(
      f.index, {{"j", {f.host(0), f.host(16), f.host(24)}, CommPattern::kRingAllreduce}});
  const auto& links = a.jobs()[0].links;
  ASSERT_GE(links.size(), 4u);
  f.load.setUtilization(links[2].link, 0.9);
  f.load.setUtilization(links[0].link, 0.5, 0.2);
  f.load.setUtilization(links[3].link, 0.5, 0.1);
  const auto hot = hottestLinks(a.jobs()[0], f.load, 3);
  ASSERT_EQ(hot.size(), 3u);
  EXPECT_EQ(hot[0].use.link, links[2].link);
  EXPECT_DOUBLE_EQ(hot[0].load.utilization, 0.9);
  EXPECT_EQ(hot[1].use.link, links[0].link);  // same utilization, more congestion
  EXPECT_EQ(hot[2].use.link, links[3].link);
  EXPECT_EQ(hottestLinks(a.jobs()[0], f.load, 100).size(), links.size());
}

}  // namespace
}  // namespace ibfabric::routing
