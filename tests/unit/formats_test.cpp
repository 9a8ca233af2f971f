// `discover --format summary|json`: degraded links come from checkLinkHealth() — the summary
// counts them and lists the first few with their reasons, the JSON has every finding.
#include "discovery/formats.h"

#include <gtest/gtest.h>

#include <string>

#include "discovery/link_health.h"

namespace ibfabric {
namespace {

using nlohmann::json;

constexpr Guid kLeaf{0x200000};
constexpr Guid kFirstCa{0x100000};
constexpr WidthMask k1x4x =
    static_cast<WidthMask>(LinkWidth::k1x) | static_cast<WidthMask>(LinkWidth::k4x);
const LinkRate k4xHdr{LinkWidth::k4x, LinkSpeed::kHdr};
const LinkRate k1xHdr{LinkWidth::k1x, LinkSpeed::kHdr};

Port port(int num, std::optional<LinkRate> active) {
  Port p;
  p.num = PortNum{static_cast<std::uint8_t>(num)};
  p.state = PortState::kActive;
  p.physState = PhysPortState::kLinkUp;
  p.widthSupported = p.widthEnabled = k1x4x;
  p.speedSupported = p.speedEnabled = speedBit(LinkSpeed::kHdr);
  p.activeRate = active;
  return p;
}

// One leaf with `cas` single-port CAs "hostN mlx5_0" on ports 1..cas; the first `narrow` of
// them trained at 1x although both ends enable 4x.
TopologyPtr leafWithCas(int cas, int narrow) {
  TopologyBuilder b;
  b.addNode({NodeType::kSwitch, kLeaf, kLeaf, "leaf-01", 0x2c9, 0xd2f0, 0, static_cast<int>(cas)});
  Port p0 = port(0, std::nullopt);
  p0.guid = kLeaf;
  p0.lid = Lid{1};
  b.addPort(kLeaf, p0);
  for (int i = 1; i <= cas; ++i) {
    const Guid ca{kFirstCa.value() + 2u * static_cast<unsigned>(i)};
    const LinkRate rate = i <= narrow ? k1xHdr : k4xHdr;
    b.addNode({NodeType::kCa, ca, ca, "host" + std::to_string(i) + " mlx5_0", 0x2c9, 0x101b, 0, 1});
    Port sp = port(i, rate);
    sp.guid = kLeaf;
    sp.lid = Lid{1};
    b.addPort(kLeaf, sp);
    Port cp = port(1, rate);
    cp.guid = Guid{ca.value() + 1};
    cp.lid = Lid{static_cast<std::uint16_t>(1 + i)};
    b.addPort(ca, cp);
    b.connect(kLeaf, PortNum{static_cast<std::uint8_t>(i)}, ca, PortNum{1});
  }
  return b.build();
}

TEST(FormatSummary, HealthyFabricHasNoDegradedLinks) {
  auto topo = leafWithCas(2, 0);
  const std::string s = formatSummary(*topo);
  EXPECT_NE(s.find("Links: 2 x 4xHDR; 0 degraded\n"), std::string::npos) << s;
  EXPECT_EQ(s.find("Degraded links"), std::string::npos) << s;
  json j = toJson(*topo);
  EXPECT_EQ(j["findings"], json::array());
  EXPECT_EQ(j["counts"]["degraded_links"], 0);
}

TEST(FormatSummary, OneXLinkIsCountedAndListedWithItsReason) {
  auto topo = leafWithCas(2, 1);
  const std::string s = formatSummary(*topo);
  EXPECT_NE(s.find("Links: 1 x 1xHDR 1 x 4xHDR; 1 degraded\n"), std::string::npos) << s;
  EXPECT_NE(s.find("Degraded links: 1 (1 below-enabled)\n"), std::string::npos) << s;
  EXPECT_NE(s.find("  below-enabled: \"host1 mlx5_0\"[1] <-> \"leaf-01\"[1]: active 1x HDR, both "
                   "ends enable 4x HDR\n"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.find("host2"), std::string::npos) << s;
}

TEST(FormatJson, FindingsArrayNamesBothEndsRatesAndLink) {
  auto topo = leafWithCas(2, 1);
  json j = toJson(*topo);
  ASSERT_EQ(j["findings"].size(), 1u) << j["findings"].dump(1);
  const json& f = j["findings"][0];
  EXPECT_EQ(f["kind"], "below-enabled");
  EXPECT_EQ(f["port"]["guid"], toString(Guid{kFirstCa.value() + 2}));
  EXPECT_EQ(f["port"]["port"], 1);
  EXPECT_EQ(f["remote"]["guid"], toString(kLeaf));
  EXPECT_EQ(f["remote"]["port"], 1);
  EXPECT_EQ(f["active_rate"], "1xHDR");
  EXPECT_EQ(f["enabled_rate"], "4xHDR");
  ASSERT_TRUE(f["link"].is_number());
  const json& link = j["links"][f["link"].get<std::size_t>()];
  EXPECT_EQ(link["below_enabled"], true);
  EXPECT_EQ(link["a"], f["port"]);
  EXPECT_EQ(f["text"], checkLinkHealth(*topo)[0].text);
  EXPECT_EQ(j["counts"]["degraded_links"], 1);
}

TEST(FormatSummary, ListsTheFirstFindingsAndCountsTheRest) {
  const int narrow = static_cast<int>(kSummaryFindings) + 2;
  auto topo = leafWithCas(narrow, narrow);
  const std::string s = formatSummary(*topo);
  const std::string n = std::to_string(narrow);
  EXPECT_NE(s.find("; " + n + " degraded\n"), std::string::npos) << s;
  EXPECT_NE(s.find("Degraded links: " + n + " (" + n + " below-enabled)\n"), std::string::npos)
      << s;
  std::size_t listed = 0;
  for (auto at = s.find("\n  below-enabled: "); at != std::string::npos;
       at = s.find("\n  below-enabled: ", at + 1))
    ++listed;
  EXPECT_EQ(listed, kSummaryFindings) << s;
  EXPECT_NE(s.find("  ... 2 more findings (--format json lists all)\n"), std::string::npos) << s;
  EXPECT_EQ(toJson(*topo)["findings"].size(), static_cast<std::size_t>(narrow));
}

}  // namespace
}  // namespace ibfabric
