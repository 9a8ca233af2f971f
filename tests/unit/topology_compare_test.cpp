#include "discovery/topology_compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "discovery/net_topology.h"
#include "discovery/node_name_map.h"
#include "discovery/topogen.h"
#include "tests/support/fabrics.h"
#include "tests/support/net_edits.h"

namespace ibfabric {
namespace {

const LinkRate k4xHdr{LinkWidth::k4x, LinkSpeed::kHdr};
const LinkRate k1xHdr{LinkWidth::k1x, LinkSpeed::kHdr};

NetFabric twoLevel() {
  // Through text, so that nodes carry source lines like a file given to `topo compare`.
  return parseNetText(formatNetFile(testing::generate(testing::twoLevel(2, 2, 2)).fabric),
                      "plan.net");
}

using testing::link;
using testing::nodeById;
using testing::unlink;

std::vector<CompareKind> kinds(const CompareResult& r) {
  std::vector<CompareKind> out;
  for (const auto& f : r.findings) out.push_back(f.kind);
  return out;
}

std::string texts(const CompareResult& r) { return formatCompareText(r); }

CompareResult compare(const NetFabric& plan, const NetFabric& live, CompareOptions o = {}) {
  o.expectedName = "plan.net";
  return compareTopology(plan, *topologyAsCrawled(live), o);
}

TEST(TopologyCompare, IdenticalFabric) {
  auto plan = twoLevel();
  auto r = compare(plan, plan);
  EXPECT_TRUE(r.identical()) << texts(r);
  EXPECT_EQ(r.matchedNodes, plan.nodes.size());
  EXPECT_EQ(r.intactLinks, plan.linkCount());
  EXPECT_EQ(r.expectedLinks, plan.linkCount());
  EXPECT_NE(texts(r).find("result: identical"), std::string::npos);
  auto j = compareToJson(r);
  EXPECT_EQ(j["schema"], "ibfabric.topology-compare/1");
  EXPECT_EQ(j["identical"], true);
  EXPECT_TRUE(j["findings"].empty());
}

TEST(TopologyCompare, MatchByGuidToo) {
  auto plan = twoLevel();
  CompareOptions o;
  o.match = MatchBy::kGuid;
  auto r = compare(plan, plan, o);
  EXPECT_TRUE(r.identical()) << texts(r);
  EXPECT_EQ(r.matchedNodes, plan.nodes.size());

  // Same descriptions, other GUIDs: by description identical, by GUID nothing matches.
  auto live = plan;
  for (NetNode& n : live.nodes) n.guid = Guid{n.guid->value() + 0x1000};
  EXPECT_TRUE(compare(plan, live).identical());
  auto byGuid = compare(plan, live, o);
  EXPECT_EQ(byGuid.matchedNodes, 0u);
  EXPECT_EQ(byGuid.counts().missingNodes, plan.nodes.size());
  EXPECT_EQ(byGuid.counts().unexpectedNodes, plan.nodes.size());
}

TEST(TopologyCompare, PlanWithoutDescriptionsMatchesIds) {
  // A hand-written plan: ids only. ibsim reports ids as descriptions.
  auto plan = twoLevel();
  for (NetNode& n : plan.nodes) n.desc.clear();
  auto r = compare(plan, plan);
  EXPECT_TRUE(r.identical()) << texts(r);
}

TEST(TopologyCompare, MissingLink) {
  auto plan = twoLevel();
  auto live = plan;
  unlink(live, "leaf-01", 3);
  auto r = compare(plan, live);
  ASSERT_EQ(kinds(r), std::vector<CompareKind>{CompareKind::kMissingLink}) << texts(r);
  const auto& f = r.findings[0];
  ASSERT_TRUE(f.plannedA && f.plannedB);
  EXPECT_EQ(f.plannedA->id, "leaf-01");
  EXPECT_EQ(f.plannedA->port, PortNum{3});
  EXPECT_GT(f.plannedA->line, 0);
  EXPECT_EQ(f.plannedB->id, "spine-01");
  EXPECT_EQ(f.plannedB->port, PortNum{1});
  EXPECT_EQ(f.text,
            "missing link: \"MF0;leaf-01:MQM8790-HS2F/U1\"[3] <-> "
            "\"MF0;spine-01:MQM8790-HS2F/U1\"[1] (plan.net:" +
                std::to_string(f.plannedA->line) + ")");
  EXPECT_EQ(r.counts().missingLinks, 1u);
  EXPECT_NE(texts(r).find("result: different"), std::string::npos);
}

TEST(TopologyCompare, UnexpectedLink) {
  auto plan = twoLevel();
  auto live = plan;
  link(live, "leaf-01", 9, "spine-02", 9);
  auto r = compare(plan, live);
  ASSERT_EQ(kinds(r), std::vector<CompareKind>{CompareKind::kUnexpectedLink}) << texts(r);
  ASSERT_TRUE(r.findings[0].liveA && r.findings[0].liveB);
  EXPECT_EQ(r.findings[0].liveA->port, PortNum{9});
  EXPECT_EQ(r.findings[0].liveA->description, "MF0;leaf-01:MQM8790-HS2F/U1");
}

TEST(TopologyCompare, CableMovedToAnotherPortIsMiswired) {
  auto plan = twoLevel();
  auto live = plan;
  unlink(live, "leaf-01", 3);  // planned to spine-01[1]
  link(live, "leaf-01", 3, "spine-01", 5);
  auto r = compare(plan, live);
  ASSERT_EQ(kinds(r), std::vector<CompareKind>{CompareKind::kMiswired}) << texts(r);
  const auto& f = r.findings[0];
  ASSERT_TRUE(f.actualRemoteA);
  EXPECT_EQ(f.actualRemoteA->description, "MF0;spine-01:MQM8790-HS2F/U1");
  EXPECT_EQ(f.actualRemoteA->port, PortNum{5});
  EXPECT_FALSE(f.actualRemoteB);  // spine-01[1] is left unconnected
  EXPECT_NE(f.text.find("\"MF0;leaf-01:MQM8790-HS2F/U1\"[3] now goes to "
                        "\"MF0;spine-01:MQM8790-HS2F/U1\"[5]"),
            std::string::npos)
      << f.text;
  EXPECT_NE(f.text.find("\"MF0;spine-01:MQM8790-HS2F/U1\"[1] is unconnected"), std::string::npos)
      << f.text;
}

TEST(TopologyCompare, SwappedCablesAreTwoMiswires) {
  auto plan = twoLevel();
  auto live = plan;
  unlink(live, "leaf-01", 3);  // spine-01[1]
  unlink(live, "leaf-01", 4);  // spine-02[1]
  link(live, "leaf-01", 3, "spine-02", 1);
  link(live, "leaf-01", 4, "spine-01", 1);
  auto r = compare(plan, live);
  EXPECT_EQ(kinds(r), (std::vector<CompareKind>{CompareKind::kMiswired, CompareKind::kMiswired}))
      << texts(r);
}

TEST(TopologyCompare, MissingAndUnexpectedNodes) {
  auto plan = twoLevel();
  auto live = plan;
  unlink(live, "dgx0004-mlx5_0", 1);
  std::erase_if(live.nodes, [](const NetNode& n) { return n.id == "dgx0004-mlx5_0"; });
  NetNode stranger;
  stranger.type = NodeType::kCa;
  stranger.numPorts = 1;
  stranger.id = "stranger";
  stranger.desc = "node77 mlx5_0";
  stranger.guid = Guid{0x300000};
  live.nodes.push_back(stranger);
  link(live, "stranger", 1, "leaf-02", 2);
  auto r = compare(plan, live);
  // The cable of the missing node is summarised in its finding, the stranger's in its own.
  ASSERT_EQ(kinds(r),
            (std::vector<CompareKind>{CompareKind::kMissingNode, CompareKind::kUnexpectedNode}))
      << texts(r);
  EXPECT_EQ(r.findings[0].plannedA->id, "dgx0004-mlx5_0");
  EXPECT_NE(r.findings[0].text.find("missing node: CA \"dgx0004 mlx5_0\" (plan.net:"),
            std::string::npos)
      << r.findings[0].text;
  EXPECT_NE(r.findings[0].text.find("planned cables to \"MF0;leaf-02:MQM8790-HS2F/U1\"[2]"),
            std::string::npos)
      << r.findings[0].text;
  EXPECT_EQ(r.findings[1].liveA->guid, Guid{0x300000});
  EXPECT_NE(r.findings[1].text.find("cabled to \"MF0;leaf-02:MQM8790-HS2F/U1\"[2]"),
            std::string::npos)
      << r.findings[1].text;
}

TEST(TopologyCompare, SlowerThanPlannedIsRateMismatch) {
  auto plan = twoLevel();
  auto live = plan;
  for (NetPort& p : nodeById(live, "leaf-01").ports)
    if (p.port.value() == 3) p.rate = k1xHdr;
  for (NetPort& p : nodeById(live, "spine-01").ports)
    if (p.port.value() == 1) p.rate = k1xHdr;
  auto r = compare(plan, live);
  ASSERT_EQ(kinds(r), std::vector<CompareKind>{CompareKind::kRateMismatch}) << texts(r);
  EXPECT_EQ(r.findings[0].plannedRate, k4xHdr);
  EXPECT_EQ(r.findings[0].liveRate, k1xHdr);
  EXPECT_NE(r.findings[0].text.find("runs 1x HDR, below the planned 4x HDR"), std::string::npos)
      << r.findings[0].text;
}

// A live snapshot with port details a net file cannot express, built by hand: leaf-01[3] enables
// only 1x, spine-01[1] 1x|4x, the link runs 1x HDR.
TopologyPtr liveWithHeldBackLink(const NetFabric& plan) {
  auto base = topologyAsCrawled(plan);
  TopologyBuilder b;
  for (const Node& n : base->nodes()) {
    b.addNode(
        {n.type, n.guid, n.sysImageGuid, n.nodeDescription, n.vendorId, n.deviceId, 0, n.numPorts});
    for (const auto& p : n.ports) {
      if (!p) continue;
      Port q = *p;
      q.widthEnabled =
          static_cast<WidthMask>(LinkWidth::k1x) | static_cast<WidthMask>(LinkWidth::k4x);
      bool leaf = n.nodeDescription.find("leaf-01") != std::string::npos && q.num.value() == 3;
      bool spine = n.nodeDescription.find("spine-01") != std::string::npos && q.num.value() == 1;
      if (leaf) q.widthEnabled = static_cast<WidthMask>(LinkWidth::k1x);
      if (leaf || spine) q.activeRate = k1xHdr;
      b.addPort(n.guid, q);
    }
  }
  for (const Link& l : base->links())
    b.connect(base->node(l.a.node).guid, l.a.port, base->node(l.b.node).guid, l.b.port);
  return b.build();
}

TEST(TopologyCompare, DegradedLinksFromLinkHealth) {
  auto plan = twoLevel();
  auto live = liveWithHeldBackLink(plan);
  CompareOptions o;
  o.expectedName = "plan.net";
  auto r = compareTopology(plan, *live, o);
  ASSERT_EQ(kinds(r),
            (std::vector<CompareKind>{CompareKind::kRateMismatch, CompareKind::kDegraded}))
      << formatCompareText(r);
  EXPECT_EQ(r.findings[1].health, LinkHealthKind::kEnableMismatch);
  EXPECT_NE(r.findings[1].text.find("degraded (enable-mismatch)"), std::string::npos);

  // When the plan says 1x for that cable, the plan is met: no finding.
  auto plan1x = plan;
  for (NetPort& p : nodeById(plan1x, "leaf-01").ports)
    if (p.port.value() == 3) p.rate = k1xHdr;
  for (NetPort& p : nodeById(plan1x, "spine-01").ports)
    if (p.port.value() == 1) p.rate = k1xHdr;
  EXPECT_TRUE(compareTopology(plan1x, *live, o).identical())
      << formatCompareText(compareTopology(plan1x, *live, o));

  o.linkHealth = false;
  EXPECT_EQ(kinds(compareTopology(plan, *live, o)),
            std::vector<CompareKind>{CompareKind::kRateMismatch});
}

TEST(TopologyCompare, DuplicateLiveNamesAreReported) {
  auto plan = twoLevel();
  auto live = plan;
  nodeById(live, "dgx0002-mlx5_0").desc = "dgx0001 mlx5_0";
  auto r = compare(plan, live);
  auto c = r.counts();
  EXPECT_EQ(c.duplicateNames, 1u) << texts(r);
  EXPECT_EQ(c.missingNodes, 1u) << texts(r);  // dgx0002 mlx5_0 is nowhere
}

TEST(TopologyCompare, NodeNameMapRenamesLiveNodes) {
  auto plan = twoLevel();
  auto live = plan;
  Guid leaf = *nodeById(live, "leaf-01").guid;
  nodeById(live, "leaf-01").desc = "MF0;unnamed:MQM8790-HS2F/U1";
  EXPECT_EQ(compare(plan, live).counts().missingNodes, 1u);
  auto map = std::make_shared<NodeNameMap>(
      NodeNameMap::parse(toString(leaf) + " \"MF0;leaf-01:MQM8790-HS2F/U1\"\n", "map"));
  auto r = compareTopology(plan, *topologyAsCrawled(live, map));
  EXPECT_TRUE(r.identical()) << formatCompareText(r);
}

TEST(TopologyCompare, JsonCarriesFindings) {
  auto plan = twoLevel();
  auto live = plan;
  unlink(live, "leaf-01", 3);
  link(live, "leaf-01", 3, "spine-01", 5);
  auto j = compareToJson(compare(plan, live));
  EXPECT_EQ(j["identical"], false);
  EXPECT_EQ(j["counts"]["miswired"], 1);
  ASSERT_EQ(j["findings"].size(), 1u);
  const auto& f = j["findings"][0];
  EXPECT_EQ(f["kind"], "miswired");
  EXPECT_EQ(f["planned_a"]["id"], "leaf-01");
  EXPECT_EQ(f["planned_a"]["port"], 3);
  EXPECT_EQ(f["actual_remote_a"]["port"], 5);
  EXPECT_TRUE(f["actual_remote_b"].is_null());
  EXPECT_EQ(f["planned_rate"], "4xHDR");
}

TEST(TopologyCompare, MatchByParses) {
  EXPECT_EQ(parseMatchBy("desc"), MatchBy::kDescription);
  EXPECT_EQ(parseMatchBy("description"), MatchBy::kDescription);
  EXPECT_EQ(parseMatchBy("guid"), MatchBy::kGuid);
  EXPECT_EQ(parseMatchBy("lid"), std::nullopt);
}

}  // namespace
}  // namespace ibfabric
