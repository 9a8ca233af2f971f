// Fabric changes on real simulated fabrics: cables unlinked and rewired through ibsim's console,
// links that train below their plan, subnets without an SM. Each crawl runs our CLI through the
// harness (`ibfabric sim run -- ibfabric discover|topo compare`); deltas are computed between
// crawls, comparisons against the planned file the fabric was started from.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "discovery/link_health.h"
#include "discovery/topology.h"
#include "discovery/topology_delta.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"

namespace ibfabric::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

const std::filesystem::path kPlan = testDataDir() / "changes-plan.net";

constexpr Guid kLeaf01{0x200000};
constexpr Guid kSpine01{0x200002};

Guid guidOf(const json& j) { return *parseGuid(j.get<std::string>()); }

WidthMask widthMask(const json& list) {
  WidthMask m = 0;
  for (const auto& w : list)
    if (auto v = parseLinkWidth(w.get<std::string>())) m |= static_cast<WidthMask>(*v);
  return m;
}

SpeedMask speedMask(const json& list) {
  SpeedMask m = 0;
  for (const auto& s : list)
    if (auto v = parseLinkSpeed(s.get<std::string>())) m |= speedBit(*v);
  return m;
}

PortState portState(const std::string& s) {
  for (auto v : {PortState::kDown, PortState::kInit, PortState::kArmed, PortState::kActive})
    if (toString(v) == s) return v;
  return PortState::kNoChange;
}

PhysPortState physState(const std::string& s) {
  for (int i = 1; i <= 7; ++i)
    if (toString(static_cast<PhysPortState>(i)) == s) return static_cast<PhysPortState>(i);
  return PhysPortState::kNoChange;
}

// Rebuilds the snapshot `discover --format json` printed (schema ibfabric.topology/1).
TopologyPtr topologyFromDiscoverJson(const json& j) {
  TopologyBuilder b;
  for (const auto& n : j.at("nodes")) {
    TopologyBuilder::NodeInfo info;
    const std::string type = n.at("type");
    info.type = type == "switch" ? NodeType::kSwitch
                : type == "ca"   ? NodeType::kCa
                                 : NodeType::kRouter;
    info.guid = guidOf(n.at("guid"));
    info.sysImageGuid = guidOf(n.at("sys_image_guid"));
    info.nodeDescription = n.at("node_description");
    info.numPorts = n.at("num_ports");
    b.addNode(info);
    for (const auto& p : n.at("ports")) {
      Port port;
      port.num = PortNum{p.at("num").get<std::uint8_t>()};
      port.guid = guidOf(p.at("guid"));
      port.lid = Lid{p.at("lid").get<std::uint16_t>()};
      port.state = portState(p.at("state"));
      port.physState = physState(p.at("phys_state"));
      port.widthSupported = widthMask(p.at("width_supported"));
      port.widthEnabled = widthMask(p.at("width_enabled"));
      port.speedSupported = speedMask(p.at("speed_supported"));
      port.speedEnabled = speedMask(p.at("speed_enabled"));
      if (!p.at("active_rate").is_null())
        port.activeRate = parseLinkRate(p.at("active_rate").get<std::string>());
      b.addPort(info.guid, port);
    }
  }
  for (const auto& l : j.at("links"))
    b.connect(guidOf(l.at("a").at("guid")), PortNum{l.at("a").at("port").get<std::uint8_t>()},
              guidOf(l.at("b").at("guid")), PortNum{l.at("b").at("port").get<std::uint8_t>()});
  return b.build();
}

TopologyPtr crawl(const SimFabric& fabric) {
  auto r = fabric.run({cliPath().string(), "discover", "--format", "json"}, 120s);
  if (r.exitCode != 0) throw std::runtime_error("discover failed: " + r.describe());
  return topologyFromDiscoverJson(json::parse(r.out));
}

struct Compared {
  ProcessResult process;
  json report;
};

Compared compare(const SimFabric& fabric, const std::filesystem::path& expected) {
  Compared c;
  c.process = fabric.run(
      {cliPath().string(), "topo", "compare", "--expected", expected.string(), "--format", "json"},
      120s);
  if (c.process.exitCode == 0 || c.process.exitCode == 3) c.report = json::parse(c.process.out);
  return c;
}

// Crawls until `done` holds for a comparison (ibsim and OpenSM settle asynchronously after a
// console command), at most `timeout`; returns the last comparison.
Compared compareUntil(const SimFabric& fabric, const std::filesystem::path& expected,
                      const std::function<bool(const json&)>& done,
                      std::chrono::milliseconds timeout = 60s) {
  Compared last;
  waitFor(
      [&] {
        last = compare(fabric, expected);
        return !last.report.is_null() && done(last.report);
      },
      timeout, 200ms);
  return last;
}

std::vector<std::string> findingKinds(const json& report) {
  std::vector<std::string> out;
  for (const auto& f : report.at("findings")) out.push_back(f.at("kind"));
  return out;
}

TEST(DiscoveryChanges, UnlinkedCableIsRemovedInDeltaAndMissingInCompare) {
  SimFabric fabric(kPlan, "chg-unlink");
  auto before = crawl(fabric);
  auto same = compare(fabric, kPlan);
  ASSERT_EQ(same.process.exitCode, 0) << same.process.describe();
  EXPECT_EQ(same.report.at("identical"), true);

  auto unlinked = fabric.cmd(R"(Unlink "leaf-01"[3])");
  ASSERT_EQ(unlinked.exitCode, 0) << unlinked.describe();

  TopologyPtr after;
  ASSERT_TRUE(waitFor(
      [&] {
        after = crawl(fabric);
        return after->links().size() + 1 == before->links().size();
      },
      60s, 200ms))
      << "the crawl still sees " << after->links().size() << " links";
  TopologyDelta delta(before, after);
  ASSERT_EQ(delta.linksRemoved().size(), 1u) << ::testing::PrintToString(delta.describeAll());
  const LinkRemoved& removed = delta.linksRemoved()[0];
  EXPECT_EQ(removed.link.key(), LinkKey::of(kLeaf01, PortNum{3}, kSpine01, PortNum{1}));
  EXPECT_EQ(removed.link.a.node.description, "MF0;leaf-01:MQM8790-HS2F/U1");
  EXPECT_EQ(removed.link.b.node.description, "MF0;spine-01:MQM8790-HS2F/U1");
  EXPECT_EQ(removed.link.a.state, PortState::kActive);
  EXPECT_FALSE(removed.aNodeGone || removed.bNodeGone);
  EXPECT_TRUE(delta.linksAdded().empty());
  EXPECT_TRUE(delta.nodesRemoved().empty());
  EXPECT_TRUE(delta.nodesAdded().empty());

  auto c = compareUntil(fabric, kPlan, [](const json& r) {
    return r.at("counts").at("missing_links") == 1 && r.at("findings").size() == 1;
  });
  ASSERT_EQ(c.process.exitCode, 3) << c.process.describe();
  ASSERT_EQ(findingKinds(c.report), std::vector<std::string>{"missing-link"}) << c.report.dump(2);
  const auto& f = c.report.at("findings")[0];
  EXPECT_EQ(f.at("planned_a").at("id"), "leaf-01");
  EXPECT_EQ(f.at("planned_a").at("port"), 3);
  EXPECT_EQ(f.at("planned_b").at("id"), "spine-01");
  EXPECT_EQ(f.at("planned_b").at("port"), 1);

  // The text report says the same, with the planned file's line.
  auto text = fabric.run(
      {cliPath().string(), "topo", "compare", "--expected", kPlan.string(), "--match", "guid"});
  EXPECT_EQ(text.exitCode, 3) << text.describe();
  EXPECT_NE(text.out.find("missing link: \"MF0;leaf-01:MQM8790-HS2F/U1\"[3] <-> "
                          "\"MF0;spine-01:MQM8790-HS2F/U1\"[1] (" +
                          kPlan.string() + ":"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("result: different"), std::string::npos) << text.out;
}

TEST(DiscoveryChanges, RewiredCableIsMiswired) {
  SimFabric fabric(kPlan, "chg-rewire");
  auto before = crawl(fabric);
  auto r = fabric.cmd(R"(Unlink "leaf-01"[3])");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  r = fabric.cmd(R"(Link "leaf-01"[3] "spine-01"[5])");
  ASSERT_EQ(r.exitCode, 0) << r.describe();

  // ibsim's `Link` cables the ports at its default speed (4x QDR), so the new cable also runs
  // slower than its HDR peers: that is reported as well, on the cable as it now is.
  auto c = compareUntil(fabric, kPlan, [](const json& rep) {
    return rep.at("counts").at("miswired") == 1 && rep.at("findings").size() == 2;
  });
  ASSERT_EQ(c.process.exitCode, 3) << c.process.describe();
  ASSERT_EQ(findingKinds(c.report), (std::vector<std::string>{"miswired", "degraded"}))
      << c.report.dump(2);
  const auto& slow = c.report.at("findings")[1];
  EXPECT_EQ(slow.at("health"), "below-peers");
  EXPECT_EQ(slow.at("live_rate"), "4xQDR");
  EXPECT_EQ(slow.at("live_a").at("port"), 3);
  EXPECT_EQ(slow.at("live_b").at("port"), 5);
  const auto& f = c.report.at("findings")[0];
  EXPECT_EQ(f.at("planned_a").at("id"), "leaf-01");
  EXPECT_EQ(f.at("planned_b").at("id"), "spine-01");
  EXPECT_EQ(f.at("planned_b").at("port"), 1);
  EXPECT_EQ(f.at("actual_remote_a").at("description"), "MF0;spine-01:MQM8790-HS2F/U1");
  EXPECT_EQ(f.at("actual_remote_a").at("port"), 5);
  EXPECT_TRUE(f.at("actual_remote_b").is_null());  // spine-01[1] is left unconnected

  TopologyDelta delta(before, crawl(fabric));
  ASSERT_EQ(delta.linksRemoved().size(), 1u) << ::testing::PrintToString(delta.describeAll());
  ASSERT_EQ(delta.linksAdded().size(), 1u) << ::testing::PrintToString(delta.describeAll());
  EXPECT_EQ(delta.linksRemoved()[0].link.key(),
            LinkKey::of(kLeaf01, PortNum{3}, kSpine01, PortNum{1}));
  EXPECT_EQ(delta.linksAdded()[0].link.key(),
            LinkKey::of(kLeaf01, PortNum{3}, kSpine01, PortNum{5}));
}

TEST(DiscoveryChanges, GeneratorDegradedLinkRunsBelowPlan) {
  // `topo gen --degrade` makes both ends of one cable enable 1x only: nothing on the live fabric
  // alone says it is wrong, the plan does.
  const auto file = scratchDir() / "changes-degraded-gen.net";
  auto g = runCli({"topo", "gen", "--preset", "two-level", "--leaves", "2", "--spines", "2",
                   "--hosts-per-leaf", "2", "--degrade", "leaf-01[4]=1x", "-o", file.string()});
  ASSERT_EQ(g.exitCode, 0) << g.describe();
  SimFabric fabric(file, "chg-gen1x");

  // The crawl shows the cable at 1x HDR. Both ends enable only 1x, so it is not below what its
  // ends enable, but it is below the 4x HDR its leaf-spine peers run: link health alone (no
  // plan) reports it degraded.
  auto live = crawl(fabric);
  const Node* leaf = live->findNode(kLeaf01);
  ASSERT_NE(leaf, nullptr);
  ASSERT_NE(leaf->port(PortNum{4}), nullptr);
  EXPECT_EQ(leaf->port(PortNum{4})->activeRate, (LinkRate{LinkWidth::k1x, LinkSpeed::kHdr}));
  auto health = checkLinkHealth(*live);
  ASSERT_EQ(health.size(), 1u);
  EXPECT_EQ(health[0].kind, LinkHealthKind::kBelowPeers);
  EXPECT_EQ(live->node(health[0].port.node).guid, kLeaf01);
  EXPECT_EQ(health[0].port.port, PortNum{4});
  EXPECT_NE(health[0].text.find("active 1x HDR while 3 of 4 leaf-spine links run 4x HDR"),
            std::string::npos)
      << health[0].text;

  auto c = compare(fabric, kPlan);
  ASSERT_EQ(c.process.exitCode, 3) << c.process.describe();
  ASSERT_EQ(findingKinds(c.report), std::vector<std::string>{"rate-mismatch"}) << c.report.dump(2);
  EXPECT_EQ(c.report.at("findings")[0].at("planned_a").at("id"), "leaf-01");
  EXPECT_EQ(c.report.at("findings")[0].at("planned_a").at("port"), 4);
  EXPECT_EQ(c.report.at("findings")[0].at("live_rate"), "1xHDR");

  // Compared to its own file the fabric is as planned.
  auto self = compare(fabric, file);
  EXPECT_EQ(self.process.exitCode, 0) << self.process.describe();
}

TEST(DiscoveryChanges, WithoutSubnetManagerLinksAreNotActive) {
  SimFabric::Options options;
  options.upArgs = {"--no-sm"};
  SimFabric fabric(kPlan, "chg-nosm", options);
  auto c = compare(fabric, kPlan);
  ASSERT_EQ(c.process.exitCode, 3) << c.process.describe();
  EXPECT_EQ(c.report.at("counts").at("degraded"), 8) << c.report.dump(2);
  EXPECT_EQ(c.report.at("intact_links"), 8);
  for (const auto& f : c.report.at("findings")) EXPECT_EQ(f.at("health"), "not-active");
}

TEST(DiscoveryChanges, MalformedExpectedFileIsAOneLineError) {
  // Checked before any crawl: no fabric needed.
  const auto bad = testDataDir() / "changes-malformed.net";
  auto r = runCli({"topo", "compare", "--expected", bad.string(), "--live", kPlan.string()});
  EXPECT_EQ(r.exitCode, 2) << r.describe();
  ASSERT_EQ(r.errLines().size(), 1u) << r.describe();
  EXPECT_NE(r.errLines()[0].find(bad.string() + ":5: "), std::string::npos) << r.describe();
  EXPECT_TRUE(r.out.empty()) << r.describe();

  auto missing = runCli({"topo", "compare", "--expected", (scratchDir() / "nope.net").string()});
  EXPECT_EQ(missing.exitCode, 2) << missing.describe();
  ASSERT_EQ(missing.errLines().size(), 1u) << missing.describe();
  EXPECT_NE(missing.errLines()[0].find("cannot read expected file"), std::string::npos);

  // Through the harness, on a live fabric, the same.
  SimFabric fabric(kPlan, "chg-bad");
  auto live = fabric.run({cliPath().string(), "topo", "compare", "--expected", bad.string()});
  EXPECT_EQ(live.exitCode, 2) << live.describe();
  EXPECT_NE(live.err.find(bad.string() + ":5: "), std::string::npos) << live.describe();
}

}  // namespace
}  // namespace ibfabric::testing
