#include "discovery/types.h"

#include <gtest/gtest.h>

#include <unordered_set>

#include "discovery/link_rate.h"

namespace ibfabric {
namespace {

TEST(Types, GuidFormatsWithSixteenDigits) {
  EXPECT_EQ(toString(Guid{0x2c90300a1b2c3}), "0x0002c90300a1b2c3");
  EXPECT_EQ(toString(Guid{0}), "0x0000000000000000");
}

TEST(Types, GuidParsesWithAndWithoutPrefix) {
  EXPECT_EQ(parseGuid("0x0002c90300a1b2c3"), Guid{0x2c90300a1b2c3});
  EXPECT_EQ(parseGuid("2c90300a1b2c3"), Guid{0x2c90300a1b2c3});
  EXPECT_EQ(parseGuid("0x"), std::nullopt);
  EXPECT_EQ(parseGuid("0x12345678901234567"), std::nullopt);
  EXPECT_EQ(parseGuid("zz"), std::nullopt);
  EXPECT_EQ(parseGuid(""), std::nullopt);
}

TEST(Types, LidRejectsZeroAndMulticast) {
  EXPECT_EQ(parseLid("1"), Lid{1});
  EXPECT_EQ(parseLid("0x10"), Lid{16});
  EXPECT_EQ(parseLid("0"), std::nullopt);
  EXPECT_EQ(parseLid("0xC000"), std::nullopt);
  EXPECT_EQ(parseLid("-3"), std::nullopt);
}

TEST(Types, PortNumRange) {
  EXPECT_EQ(parsePortNum("0"), PortNum{0});
  EXPECT_EQ(parsePortNum("254"), PortNum{254});
  EXPECT_EQ(parsePortNum("255"), std::nullopt);
  EXPECT_EQ(parsePortNum("1a"), std::nullopt);
}

TEST(Types, StrongIdsHashAndOrder) {
  std::unordered_set<Guid> s{Guid{1}, Guid{2}, Guid{1}};
  EXPECT_EQ(s.size(), 2u);
  EXPECT_LT(Lid{1}, Lid{2});
}

TEST(LinkRate, ParsesIbnetdiscoverForms) {
  auto r = parseLinkRate("4xHDR");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->width, LinkWidth::k4x);
  EXPECT_EQ(r->speed, LinkSpeed::kHdr);
  EXPECT_DOUBLE_EQ(r->nominalGbps(), 200.0);
  EXPECT_EQ(r->toString(), "4xHDR");
  EXPECT_EQ(parseLinkRate("1xsdr")->toString(), "1xSDR");
  EXPECT_EQ(parseLinkRate("12xFDR10")->toString(), "12xFDR10");
  EXPECT_FALSE(parseLinkRate("4xHDX"));
  EXPECT_FALSE(parseLinkRate("HDR"));
}

TEST(LinkRate, DataRatesAccountForEncoding) {
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::k4x, LinkSpeed::kQdr}).dataGbps(), 32.0);
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::k4x, LinkSpeed::kEdr}).dataGbps(), 100.0);
  EXPECT_NEAR((LinkRate{LinkWidth::k4x, LinkSpeed::kFdr}).dataGbps(), 54.545, 0.001);
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::k4x, LinkSpeed::kNdr}).dataGbps(), 400.0);
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::k1x, LinkSpeed::kSdr}).dataGbps(), 2.0);
}

}  // namespace
}  // namespace ibfabric
