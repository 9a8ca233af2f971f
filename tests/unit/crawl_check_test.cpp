// The crawl check: gaps (MADs that failed) in a crawl, what it lost against the last believed
// topology, the verdict, and the kept model of a suspect crawl with its confirmed removals.
#include "api/service/crawl_check.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "api/service/fabric_service.h"
#include "discovery/topology_delta.h"
#include "discovery/topology_edit.h"
#include "tests/fakes/fake_sources.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

enum class Missing { kGap, kDown };  // how a missing node's neighbours read their port to it

Guid spine(int s) { return Guid{0x100u + static_cast<std::uint64_t>(s)}; }
Guid leaf(int l) { return Guid{0x200u + static_cast<std::uint64_t>(l)}; }
Guid host(int l, int h) { return Guid{0x1000u + static_cast<std::uint64_t>(l * 16 + h)}; }
PortNum pn(int p) { return PortNum{static_cast<std::uint8_t>(p)}; }

/// 2 spines, 4 leaves, 2 hosts per leaf (14 nodes, 16 cables); `missing` nodes were not read,
/// and their neighbours' ports to them read as `how`.
TopologyPtr fabric(const std::set<Guid>& missing = {}, Missing how = Missing::kGap) {
  constexpr int kSpines = 2, kLeaves = 4, kHosts = 2;
  TopologyBuilder b;
  auto node = [&](Guid g, NodeType type, int ports, const std::string& name) {
    if (missing.count(g)) return;
    TopologyBuilder::NodeInfo n;
    n.type = type;
    n.guid = g;
    n.nodeDescription = name;
    n.numPorts = ports;
    b.addNode(n);
  };
  for (int s = 1; s <= kSpines; ++s)
    node(spine(s), NodeType::kSwitch, kLeaves, "spine" + std::to_string(s));
  for (int l = 1; l <= kLeaves; ++l) {
    node(leaf(l), NodeType::kSwitch, kHosts + kSpines, "leaf" + std::to_string(l));
    for (int h = 1; h <= kHosts; ++h)
      node(host(l, h), NodeType::kCa, 1, "host" + std::to_string(l) + "-" + std::to_string(h));
  }
  auto cable = [&](Guid a, int pa, Guid c, int pc) {
    for (auto [g, p, other] : {std::tuple{a, pa, c}, std::tuple{c, pc, a}}) {
      if (missing.count(g)) continue;
      Port port;
      port.num = pn(p);
      const bool up = !missing.count(other) || how == Missing::kGap;
      port.state = up ? PortState::kActive : PortState::kDown;
      port.physState = up ? PhysPortState::kLinkUp : PhysPortState::kPolling;
      b.addPort(g, port);
    }
    if (!missing.count(a) && !missing.count(c)) b.connect(a, pn(pa), c, pn(pc));
  };
  for (int l = 1; l <= kLeaves; ++l) {
    for (int h = 1; h <= kHosts; ++h) cable(leaf(l), h, host(l, h), 1);
    for (int s = 1; s <= kSpines; ++s) cable(leaf(l), kHosts + s, spine(s), l);
  }
  return b.build();
}

std::set<Guid> leafAndHosts(int l) { return {leaf(l), host(l, 1), host(l, 2)}; }

TEST(CrawlCheck, ACompleteCrawlHasNoGapsAndLosesNothing) {
  auto t = fabric();
  EXPECT_EQ(crawlGaps(*t).total(), 0u);
  const auto loss = crawlLoss(*t, *t);
  EXPECT_EQ(loss.nodesBefore, 14u);
  EXPECT_EQ(loss.linksBefore, 16u);
  EXPECT_EQ(loss.fraction(), 0.0);
  EXPECT_TRUE(judgeCrawl(*t, *t, {}).plausible);
}

TEST(CrawlCheck, ALossyCrawlThatLostMuchIsImplausible) {
  auto before = fabric();
  // leaf3 never answered: the spines' ports to it are up but unexplored.
  auto lossy = fabric(leafAndHosts(3), Missing::kGap);
  const auto gaps = crawlGaps(*lossy);
  EXPECT_EQ(gaps.unexploredPorts, 2u);
  const auto v = judgeCrawl(*before, *lossy, {});
  EXPECT_FALSE(v.plausible);
  EXPECT_EQ(v.loss.nodesLost, 3u);
  EXPECT_EQ(v.loss.linksLost, 4u);
  EXPECT_NE(v.reason.find("lost 3 of 14 nodes and 4 of 16 links"), std::string::npos) << v.reason;
  // A looser limit believes it.
  CrawlCheckOptions loose;
  loose.maxLoss = 0.5;
  EXPECT_TRUE(judgeCrawl(*before, *lossy, loose).plausible);
  CrawlCheckOptions off;
  off.enabled = false;
  EXPECT_TRUE(judgeCrawl(*before, *lossy, off).plausible);
}

TEST(CrawlCheck, AnEmptyCrawlIsImplausible) {
  // libibnetdisc returns an empty fabric when the first NodeInfo (to ourselves) was lost.
  auto before = fabric();
  auto empty = TopologyBuilder().build();
  EXPECT_TRUE(crawlGaps(*empty).empty);
  const auto v = judgeCrawl(*before, *empty, {});
  EXPECT_FALSE(v.plausible);
  EXPECT_NE(v.reason.find("not even the local node"), std::string::npos) << v.reason;
}

TEST(CrawlCheck, ARemovalTheNeighboursSeeIsBelieved) {
  // leaf3 powered off: the spines read their ports to it as Down, no gap.
  auto before = fabric();
  auto after = fabric(leafAndHosts(3), Missing::kDown);
  EXPECT_EQ(crawlGaps(*after).total(), 0u);
  EXPECT_TRUE(judgeCrawl(*before, *after, {}).plausible);
}

TEST(CrawlCheck, ASmallLossWithGapsIsBelieved) {
  auto before = fabric();
  auto after = fabric({host(2, 1)}, Missing::kGap);  // 1 of 14 nodes, 1 of 16 links
  EXPECT_GT(crawlGaps(*after).total(), 0u);
  EXPECT_TRUE(judgeCrawl(*before, *after, {}).plausible);
}

TEST(CrawlCheck, ASuspectCrawlKeepsTheBelievedModel) {
  auto before = fabric();
  CrawlChecker checker;
  auto kept = checker.keep(before, *fabric(leafAndHosts(3), Missing::kGap));
  EXPECT_EQ(kept.topology, before);
  EXPECT_EQ(kept.cablesRemoved, 0u);
}

TEST(CrawlCheck, ANodeMissingFromNConsecutiveSuspectCrawlsLosesItsCables) {
  auto before = fabric();
  CrawlCheckOptions o;
  o.removalAfter = 3;
  CrawlChecker checker(o);
  // Half the fabric is lost each time; host4-2 is missing every time.
  auto lossyA = fabric({leaf(1), host(1, 1), host(1, 2), leaf(2), host(4, 2)});
  auto lossyB = fabric({leaf(3), host(3, 1), host(3, 2), host(2, 2), host(4, 2)});
  EXPECT_EQ(checker.keep(before, *lossyA).cablesRemoved, 0u);
  EXPECT_EQ(checker.keep(before, *lossyB).cablesRemoved, 0u);
  auto third = checker.keep(before, *lossyA);
  ASSERT_EQ(third.cablesRemoved, 1u);
  TopologyDelta delta(before, third.topology);
  ASSERT_EQ(delta.size(), 1u);
  // Still 14 nodes: only the cable goes.
  EXPECT_EQ(third.topology->nodes().size(), 14u);
  const Node* h = third.topology->findNode(host(4, 2));
  ASSERT_NE(h, nullptr);
  EXPECT_FALSE(h->port(pn(1))->connected());
  // A believed crawl starts the count over.
  checker.believed();
  EXPECT_EQ(checker.keep(before, *lossyA).cablesRemoved, 0u);
}

TEST(CrawlCheck, ACableTheNeighbourReadsDownIsRemovedFromTheKeptModel) {
  auto before = fabric();
  CrawlChecker checker;
  // leaf3 lost to MAD failures, and host1-1's cable really down (leaf1 reads its port Down).
  auto now = fabric(leafAndHosts(3), Missing::kGap);
  TopologyEdit edit;
  edit.removeLinks.push_back(LinkKey::of(leaf(1), pn(1), host(1, 1), pn(1)));
  edit.ports.push_back({leaf(1), pn(1), PortState::kDown, PhysPortState::kPolling, std::nullopt});
  edit.ports.push_back(
      {host(1, 1), pn(1), PortState::kDown, PhysPortState::kPolling, std::nullopt});
  auto nowWithDown = applyTopologyEdit(*now, edit);
  auto kept = checker.keep(before, *nowWithDown);
  EXPECT_EQ(kept.cablesRemoved, 1u);
  EXPECT_EQ(kept.topology->links().size(), 15u);
  EXPECT_NE(kept.topology->findNode(leaf(3)), nullptr);  // the lost part is kept
}

std::uint64_t eventsOf(const FabricService& s, telemetry::EventType type) {
  telemetry::EventQuery q;
  q.types = {type};
  return s.events().query(q).size();
}

TEST(CrawlCheckService, ASuspectCrawlIsRetriedOnceThenKeepsTheModelWithoutEvents) {
  using namespace std::chrono_literals;
  testing::InProcessDaemon::Options o;
  o.service.crawlInterval = 40ms;
  testing::InProcessDaemon d(o);
  auto full = fabric();
  d.topology().push(full);
  ASSERT_TRUE(d.startAndWaitReady());
  const int callsBefore = d.topology().calls();
  d.topology().push(fabric(leafAndHosts(2), Missing::kGap));  // repeated from now on
  ASSERT_TRUE(
      testing::waitFor([&] { return d.service().state()->crawlCheck.suspectTotal >= 2; }, 5s));
  auto s = d.service().state();
  EXPECT_TRUE(s->crawlCheck.suspect);
  EXPECT_NE(s->crawlCheck.reason.find("MADs failing"), std::string::npos) << s->crawlCheck.reason;
  EXPECT_GE(s->crawlCheck.retries, 2u);
  // Each suspect crawl was crawled twice (the retry).
  EXPECT_GE(d.topology().calls() - callsBefore, 4);
  EXPECT_EQ(s->topology, full);
  EXPECT_EQ(eventsOf(d.service(), telemetry::EventType::kLinkDown), 0u);
  EXPECT_EQ(eventsOf(d.service(), telemetry::EventType::kPortGone), 0u);
  EXPECT_EQ(s->crawl.consecutiveFailures, 0u);

  // The MADs answer again: believed, no longer suspect, still no events.
  d.topology().push(full);
  ASSERT_TRUE(testing::waitFor([&] { return !d.service().state()->crawlCheck.suspect; }, 5s));
  EXPECT_EQ(eventsOf(d.service(), telemetry::EventType::kLinkDown), 0u);

  // A real removal (the spines read their ports to leaf2 as Down) shows at once.
  d.topology().push(fabric(leafAndHosts(2), Missing::kDown));
  ASSERT_TRUE(testing::waitFor(
      [&] { return eventsOf(d.service(), telemetry::EventType::kLinkDown) >= 4; }, 5s));
  EXPECT_FALSE(d.service().state()->crawlCheck.suspect);
  // Believed: leaf2 and its hosts are gone from the crawl and kept as missing.
  const TopologyPtr model = d.service().state()->topology;
  EXPECT_EQ(model->nodes().size(), full->nodes().size());
  EXPECT_EQ(model->nodes().size() - countMissing(*model).nodes(), 11u);
}

}  // namespace
}  // namespace ibfabric::api
