#include "discovery/link_health.h"

#include <gtest/gtest.h>

#include "tests/support/fabrics.h"

namespace ibfabric {
namespace {

constexpr Guid kSwitch{0x200000};
constexpr Guid kCa{0x100000};
constexpr WidthMask k1x = static_cast<WidthMask>(LinkWidth::k1x);
constexpr WidthMask k4x = static_cast<WidthMask>(LinkWidth::k4x);
constexpr WidthMask k12x = static_cast<WidthMask>(LinkWidth::k12x);
constexpr SpeedMask kUpToHdr = speedBit(LinkSpeed::kSdr) | speedBit(LinkSpeed::kDdr) |
                               speedBit(LinkSpeed::kQdr) | speedBit(LinkSpeed::kFdr) |
                               speedBit(LinkSpeed::kEdr) | speedBit(LinkSpeed::kHdr);
constexpr SpeedMask kUpToEdr = kUpToHdr & ~speedBit(LinkSpeed::kHdr);

Port port(int num, WidthMask widthEnabled, SpeedMask speedEnabled, std::optional<LinkRate> active,
          PortState state = PortState::kActive, PhysPortState phys = PhysPortState::kLinkUp) {
  Port p;
  p.num = PortNum{static_cast<std::uint8_t>(num)};
  p.state = state;
  p.physState = phys;
  p.widthSupported = k1x | k4x | k12x;  // like ibsim: supports more than it enables
  p.widthEnabled = widthEnabled;
  p.speedSupported = kUpToHdr;
  p.speedEnabled = speedEnabled;
  p.activeRate = active;
  return p;
}

// A switch (2 ports) whose port 1 is cabled to a CA, plus a spare switch port 2.
TopologyPtr switchAndCa(const Port& swPort, const Port& caPort,
                        std::optional<Port> spare = std::nullopt) {
  TopologyBuilder b;
  b.addNode(
      {NodeType::kSwitch, kSwitch, kSwitch, "MF0;leaf-01:MQM8790-HS2F/U1", 0x2c9, 0xd2f0, 0, 2});
  b.addNode({NodeType::kCa, kCa, kCa, "dgx0001 mlx5_0", 0x2c9, 0x101b, 0, 1});
  Port p0;
  p0.num = PortNum{0};
  p0.guid = kSwitch;
  p0.lid = Lid{1};
  p0.state = PortState::kActive;
  p0.physState = PhysPortState::kLinkUp;
  b.addPort(kSwitch, p0);
  b.addPort(kSwitch, swPort);
  if (spare) b.addPort(kSwitch, *spare);
  Port cp = caPort;
  cp.guid = Guid{kCa.value() + 1};
  cp.lid = Lid{2};
  b.addPort(kCa, cp);
  b.connect(kSwitch, swPort.num, kCa, caPort.num);
  return b.build();
}

const LinkRate k4xHdr{LinkWidth::k4x, LinkSpeed::kHdr};
const LinkRate k1xHdr{LinkWidth::k1x, LinkSpeed::kHdr};
const LinkRate k4xEdr{LinkWidth::k4x, LinkSpeed::kEdr};

TEST(LinkHealth, GeneratedFabricIsHealthy) {
  auto topo = testing::netfileTopology(testing::twoLevel(2, 2, 2));
  EXPECT_TRUE(checkLinkHealth(*topo).empty());
}

TEST(LinkHealth, JudgesOnEnabledNotSupported) {
  // Both ends support 12x but enable only 1x|4x: a 4x link is as good as it gets.
  auto topo =
      switchAndCa(port(1, k1x | k4x, kUpToHdr, k4xHdr), port(1, k1x | k4x, kUpToHdr, k4xHdr));
  EXPECT_TRUE(checkLinkHealth(*topo).empty());
}

TEST(LinkHealth, WidthBelowEnabled) {
  auto topo =
      switchAndCa(port(1, k1x | k4x, kUpToHdr, k1xHdr), port(1, k1x | k4x, kUpToHdr, k1xHdr));
  auto issues = checkLinkHealth(*topo);
  ASSERT_EQ(issues.size(), 1u);
  const auto& i = issues[0];
  EXPECT_EQ(i.kind, LinkHealthKind::kBelowEnabled);
  EXPECT_EQ(topo->node(i.port.node).guid, kCa);  // the link's `a` end is the CA
  ASSERT_TRUE(i.remote);
  EXPECT_EQ(topo->node(i.remote->node).guid, kSwitch);
  EXPECT_EQ(i.remote->port, PortNum{1});
  ASSERT_TRUE(i.link);
  EXPECT_EQ(i.active, k1xHdr);
  EXPECT_EQ(i.enabled, k4xHdr);
  EXPECT_NE(i.text.find("active 1x HDR, both ends enable 4x HDR"), std::string::npos) << i.text;
  EXPECT_NE(i.text.find("\"dgx0001 mlx5_0\"[1] <-> \"MF0;leaf-01:MQM8790-HS2F/U1\"[1]"),
            std::string::npos)
      << i.text;
}

TEST(LinkHealth, SpeedBelowEnabled) {
  auto topo = switchAndCa(port(1, k4x, kUpToHdr, k4xEdr), port(1, k4x, kUpToHdr, k4xEdr));
  auto issues = checkLinkHealth(*topo);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].kind, LinkHealthKind::kBelowEnabled);
  EXPECT_NE(issues[0].text.find("active 4x EDR, both ends enable 4x HDR"), std::string::npos);
}

TEST(LinkHealth, OneEndHoldsTheLinkBack) {
  // The switch port enables only 1x: the link runs at the best common rate, but is held back.
  auto topo = switchAndCa(port(1, k1x, kUpToHdr, k1xHdr), port(1, k1x | k4x, kUpToHdr, k1xHdr));
  auto issues = checkLinkHealth(*topo);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].kind, LinkHealthKind::kEnableMismatch);
  EXPECT_NE(issues[0].text.find("enables up to 4x HDR"), std::string::npos) << issues[0].text;
  EXPECT_NE(issues[0].text.find("up to 1x HDR"), std::string::npos) << issues[0].text;

  // Mixed generations: an EDR HCA on an HDR switch port.
  topo = switchAndCa(port(1, k4x, kUpToHdr, k4xEdr), port(1, k4x, kUpToEdr, k4xEdr));
  issues = checkLinkHealth(*topo);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].kind, LinkHealthKind::kEnableMismatch);
}

TEST(LinkHealth, EndsDisagreeOnRate) {
  auto topo = switchAndCa(port(1, k4x, kUpToHdr, k4xEdr), port(1, k4x, kUpToHdr, k4xHdr));
  auto issues = checkLinkHealth(*topo);
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].kind, LinkHealthKind::kEndsDisagree);
  EXPECT_NE(issues[0].text.find("reports 4x HDR"), std::string::npos) << issues[0].text;
  EXPECT_NE(issues[0].text.find("reports 4x EDR"), std::string::npos) << issues[0].text;
}

TEST(LinkHealth, EndsDisagreeOnStateAndNotActive) {
  auto topo = switchAndCa(port(1, k4x, kUpToHdr, k4xHdr, PortState::kArmed),
                          port(1, k4x, kUpToHdr, k4xHdr, PortState::kActive));
  auto issues = checkLinkHealth(*topo);
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[0].kind, LinkHealthKind::kEndsDisagree);
  EXPECT_NE(issues[0].text.find("is Armed"), std::string::npos) << issues[0].text;
  EXPECT_EQ(issues[1].kind, LinkHealthKind::kNotActive);
  auto c = countLinkHealth(issues);
  EXPECT_EQ(c.endsDisagree, 1u);
  EXPECT_EQ(c.notActive, 1u);
  EXPECT_EQ(c.total(), 2u);
}

TEST(LinkHealth, LinkUpButInitIsOneFindingPerLink) {
  auto topo = switchAndCa(port(1, k4x, kUpToHdr, k4xHdr, PortState::kInit),
                          port(1, k4x, kUpToHdr, k4xHdr, PortState::kInit));
  auto issues = checkLinkHealth(*topo);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].kind, LinkHealthKind::kNotActive);
  EXPECT_NE(issues[0].text.find("Initialize"), std::string::npos) << issues[0].text;
}

TEST(LinkHealth, UnconnectedPortUpButNotActive) {
  auto spare = port(2, k4x, kUpToHdr, std::nullopt, PortState::kInit);
  auto topo = switchAndCa(port(1, k4x, kUpToHdr, k4xHdr), port(1, k4x, kUpToHdr, k4xHdr), spare);
  auto issues = checkLinkHealth(*topo);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].kind, LinkHealthKind::kNotActive);
  EXPECT_EQ(issues[0].port.port, PortNum{2});
  EXPECT_FALSE(issues[0].remote);
  EXPECT_FALSE(issues[0].link);
}

TEST(LinkHealth, DownPortsAreNotFindings) {
  auto spare = port(2, k4x, kUpToHdr, std::nullopt, PortState::kDown, PhysPortState::kPolling);
  auto topo = switchAndCa(port(1, k4x, kUpToHdr, k4xHdr), port(1, k4x, kUpToHdr, k4xHdr), spare);
  EXPECT_TRUE(checkLinkHealth(*topo).empty());
}

TEST(LinkHealth, NamesAndLabels) {
  EXPECT_EQ(toString(LinkHealthKind::kBelowEnabled), "below-enabled");
  EXPECT_EQ(toString(LinkHealthKind::kEnableMismatch), "enable-mismatch");
  EXPECT_EQ(toString(LinkHealthKind::kEndsDisagree), "ends-disagree");
  EXPECT_EQ(toString(LinkHealthKind::kNotActive), "not-active");
  EXPECT_EQ(rateLabel(k1xHdr), "1x HDR");
}

}  // namespace
}  // namespace ibfabric

namespace ibfabric {
namespace {

TopologyPtr twoLevel(std::vector<std::string> degrade) {
  auto shape = testing::twoLevel(4, 2, 4);
  shape.options.degrade = std::move(degrade);
  return testing::netfileTopology(shape);
}

TEST(LinkHealthPeers, OneXCableAmongFourXPeersIsBelowPeers) {
  // Both ends of the cable enable only 1x (what `topo gen --degrade` and a port limited after a
  // bad lane look like): nothing is below what the ends enable, but its tier runs 4x.
  auto topo = twoLevel({"leaf-01[5]=1x"});
  auto issues = checkLinkHealth(*topo);
  std::vector<LinkHealthIssue> peers;
  for (const auto& i : issues)
    if (i.kind == LinkHealthKind::kBelowPeers) peers.push_back(i);
  ASSERT_EQ(peers.size(), 1u);
  EXPECT_NE(peers[0].text.find("active 1x HDR while 7 of 8 leaf-spine links run 4x HDR"),
            std::string::npos)
      << peers[0].text;
  EXPECT_EQ(countLinkHealth(issues).belowPeers, 1u);
  ASSERT_TRUE(peers[0].link);
  const Link& l = topo->links()[*peers[0].link];
  EXPECT_EQ(topo->node(l.a.node).level, kLeafLevel);
  EXPECT_EQ(l.a.port, PortNum{5});
}

TEST(LinkHealthPeers, SlowerSpeedAmongPeersIsBelowPeers) {
  auto topo = twoLevel({"dgx0001-mlx5_0[1]=4xEDR"});
  auto issues = checkLinkHealth(*topo);
  std::size_t peers = 0;
  for (const auto& i : issues)
    if (i.kind == LinkHealthKind::kBelowPeers) {
      ++peers;
      EXPECT_NE(i.text.find("ca-leaf links run 4x HDR"), std::string::npos) << i.text;
    }
  EXPECT_EQ(peers, 1u);
}

TEST(LinkHealthPeers, NoDominantRateNoFinding) {
  // Half the leaf-spine links at 1x: no rate is held by more than half, nothing to judge by.
  auto topo = twoLevel({"leaf-01[5]=1x", "leaf-01[6]=1x", "leaf-02[5]=1x", "leaf-02[6]=1x"});
  for (const auto& i : checkLinkHealth(*topo)) EXPECT_NE(i.kind, LinkHealthKind::kBelowPeers);
}

}  // namespace
}  // namespace ibfabric
