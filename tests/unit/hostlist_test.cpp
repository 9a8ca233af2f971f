#include "discovery/hostlist.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace ibfabric {
namespace {

TEST(Hostlist, CompressesRangesKeepingZeroPadding) {
  EXPECT_EQ(compressHostlist({"dgx0003", "dgx0001", "dgx0002", "dgx0004", "dgx0009"}),
            "dgx[0001-0004,0009]");
  EXPECT_EQ(compressHostlist({"dgx0007"}), "dgx0007");
  EXPECT_EQ(compressHostlist({}), "");
}

TEST(Hostlist, GroupsByPrefixAndWidthAndKeepsPlainNames) {
  EXPECT_EQ(compressHostlist({"n1", "n2", "n10", "login", "a01", "a02", "n2"}),
            "a[01-02],login,n[1-2],n10");
}

TEST(Hostlist, ExpandIsTheInverse) {
  std::vector<std::string> names = {"dgx0001", "dgx0002", "dgx0003", "dgx0009", "gpu7", "login"};
  EXPECT_EQ(expandHostlist(compressHostlist(names)), names);
  EXPECT_EQ(expandHostlist("n[8-10],x"), (std::vector<std::string>{"n8", "n9", "n10", "x"}));
  EXPECT_EQ(expandHostlist("rack[1-2]-a"), (std::vector<std::string>{"rack1-a", "rack2-a"}));
}

TEST(Hostlist, RoundTripsLargeLists) {
  std::vector<std::string> names;
  for (int i = 1; i <= 2048; ++i) {
    if (i % 7 == 0) continue;
    char buf[16];
    std::snprintf(buf, sizeof buf, "dgx%04d", i);
    names.emplace_back(buf);
  }
  EXPECT_EQ(expandHostlist(compressHostlist(names)), names);
}

TEST(Hostlist, RejectsMalformedInput) {
  EXPECT_THROW(expandHostlist("n[1-3"), std::invalid_argument);
  EXPECT_THROW(expandHostlist("n1-3]"), std::invalid_argument);
  EXPECT_THROW(expandHostlist("n[3-1]"), std::invalid_argument);
  EXPECT_THROW(expandHostlist("n[a-b]"), std::invalid_argument);
  EXPECT_THROW(expandHostlist("n[]"), std::invalid_argument);
  EXPECT_THROW(expandHostlist("n[1,,2]"), std::invalid_argument);
  EXPECT_THROW(expandHostlist("n[1-2]x[3-4]"), std::invalid_argument);
  EXPECT_THROW(expandHostlist("n[1-99999999]", 1000), std::invalid_argument);
}

}  // namespace
}  // namespace ibfabric
