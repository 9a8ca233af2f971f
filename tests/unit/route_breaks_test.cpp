// Route breaks (api/service/route_breaks.h): the lost destinations of a sweep, the hops of their
// routes read by directed route along the routes, ranked by how many lost routes share them, and
// the switches whose egress port reads Down while the model has it up.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "api/service/route_breaks.h"
#include "routing/routes.h"
#include "routing/synthetic_tables.h"
#include "tests/support/fabrics.h"

namespace ibfabric::api {
namespace {

using telemetry::PortStatus;

const Node& byName(const Topology& t, std::string_view desc) {
  for (const Node& n : t.nodes())
    if (n.description.find(desc) != std::string::npos) return n;
  throw std::runtime_error("no node " + std::string(desc));
}

Lid caLid(const Node& ca) { return ca.port(PortNum{1})->lid; }

/// Answers directed-route PortInfo probes: Down for `down`, Active otherwise; nothing for
/// `silent`; throws when `cannot`.
class DirectedSource final : public CounterSource {
 public:
  void setTopology(TopologyPtr) override {}
  telemetry::CounterSnapshotPtr sweep() override { return nullptr; }
  std::string describe() const override { return "directed"; }
  std::vector<std::optional<mad::PortInfo>> probePortInfoDirected(
      const std::vector<DirectedPortProbe>& probes) override {
    if (cannot) throw SweepError("no SMPs here");
    asked = probes;
    std::vector<std::optional<mad::PortInfo>> out;
    for (const auto& p : probes) {
      if (silent) {
        out.emplace_back();
        continue;
      }
      mad::PortInfo info;
      const bool isDown = down && p.path == down->path && p.port == down->port;
      info.portState = static_cast<std::uint8_t>(isDown ? PortState::kDown : PortState::kActive);
      out.push_back(info);
    }
    return out;
  }
  std::optional<RouteBreakProbe> down;
  bool silent = false;
  bool cannot = false;
  std::vector<DirectedPortProbe> asked;
};

class RouteBreaks : public ::testing::Test {
 protected:
  TopologyPtr topo = testing::routableTopology(testing::twoLevel(4, 2, 3));
  routing::ForwardingTablesPtr tables = routing::computeShortestPathTables(topo);
  Lid local = caLid(byName(*topo, "dgx0001 "));
};

TEST_F(RouteBreaks, EveryHopOfALostRouteAlongTheRouteItself) {
  const Node& far = byName(*topo, "dgx0012 ");
  const auto probes = routeBreakProbes(*tables, local, {caLid(far)});
  const auto route = routing::traceRoute(*topo, *tables, *topo->findLid(local), caLid(far));
  ASSERT_TRUE(route.ok());
  ASSERT_EQ(route.hops.size(), 4u);  // CA, leaf, spine, leaf
  ASSERT_EQ(probes.size(), 3u);      // the three switches' egress ports
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const auto& hop = route.hops[i + 1];
    EXPECT_EQ(probes[i].switchGuid, topo->node(hop.from.node).guid);
    EXPECT_EQ(probes[i].port, hop.from.port);
    ASSERT_EQ(probes[i].path.ports.size(), i + 1);  // nearest first (equal route counts)
    for (std::size_t k = 0; k <= i; ++k)
      EXPECT_EQ(probes[i].path.ports[k], route.hops[k].from.port.value());
    EXPECT_EQ(probes[i].routes, 1u);
  }
}

TEST_F(RouteBreaks, HopsSharedByMostLostRoutesComeFirstAndTheCountIsBounded) {
  // Everything on leaf 4 lost: its hosts and the leaf share the hops up to it.
  std::vector<Lid> lost;
  for (const char* h : {"dgx0010 ", "dgx0011 ", "dgx0012 "})
    lost.push_back(caLid(byName(*topo, h)));
  const auto probes = routeBreakProbes(*tables, local, lost);
  ASSERT_FALSE(probes.empty());
  // Spread over both spines, two of the three routes share one up-port and one spine: a hop
  // on two routes comes first.
  EXPECT_EQ(probes.front().routes, 2u);
  for (std::size_t i = 1; i < probes.size(); ++i) EXPECT_GE(probes[i - 1].routes, probes[i].routes);
  EXPECT_LE(routeBreakProbes(*tables, local, lost, 8, 2).size(), 2u);
  EXPECT_LE(routeBreakProbes(*tables, local, lost, 1).size(), 3u);  // one route traced
  EXPECT_TRUE(routeBreakProbes(*tables, Lid{999}, lost).empty());   // we are not in it
  EXPECT_TRUE(routeBreakProbes(*tables, local, {}).empty());
}

TEST_F(RouteBreaks, TheSwitchWhosePortReadsDownIsProbed) {
  const Node& far = byName(*topo, "dgx0012 ");
  const auto probes = routeBreakProbes(*tables, local, {caLid(far)});
  ASSERT_EQ(probes.size(), 3u);
  DirectedSource source;
  source.down = probes[1];  // the spine's port towards leaf 4
  const auto found = probeRouteBreaks(source, *topo, probes);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(*found.begin(), topo->findNode(probes[1].switchGuid)->lid());
  EXPECT_EQ(source.asked.size(), 3u);
  // No answer, or a source without SMPs: nothing.
  source.silent = true;
  EXPECT_TRUE(probeRouteBreaks(source, *topo, probes).empty());
  source.silent = false;
  source.cannot = true;
  EXPECT_TRUE(probeRouteBreaks(source, *topo, probes).empty());
  EXPECT_TRUE(probeRouteBreaks(source, *topo, {}).empty());
}

TEST_F(RouteBreaks, LostLidsAreThoseThatAnsweredBefore) {
  telemetry::CounterSnapshot before, now;
  const Node& a = byName(*topo, "dgx0002 ");
  const Node& b = byName(*topo, "dgx0003 ");
  const Node& leaf = byName(*topo, "leaf-01");
  auto sample = [](Guid g, int port, Lid lid, PortStatus st) {
    telemetry::PortSample s;
    s.key = {g, PortNum{static_cast<std::uint8_t>(port)}};
    s.lid = lid;
    s.status = st;
    return s;
  };
  before.ports = {sample(a.guid, 1, caLid(a), PortStatus::kOk),
                  sample(b.guid, 1, caLid(b), PortStatus::kTimeout),
                  sample(leaf.guid, 1, leaf.lid(), PortStatus::kOk),
                  sample(leaf.guid, 2, leaf.lid(), PortStatus::kOk)};
  now.ports = {sample(a.guid, 1, caLid(a), PortStatus::kTimeout),
               sample(b.guid, 1, caLid(b), PortStatus::kTimeout),
               sample(leaf.guid, 1, leaf.lid(), PortStatus::kTimeout),
               sample(leaf.guid, 2, leaf.lid(), PortStatus::kTimeout)};
  auto byKey = [](const auto& x, const auto& y) { return x.key < y.key; };
  std::sort(before.ports.begin(), before.ports.end(), byKey);
  std::sort(now.ports.begin(), now.ports.end(), byKey);
  const auto lost = lostLids(&before, now);
  EXPECT_EQ(std::set<Lid>(lost.begin(), lost.end()), (std::set<Lid>{caLid(a), leaf.lid()}));
  EXPECT_EQ(lost.size(), 2u);  // the leaf once
  EXPECT_TRUE(lostLids(nullptr, now).empty());
}

}  // namespace
}  // namespace ibfabric::api
