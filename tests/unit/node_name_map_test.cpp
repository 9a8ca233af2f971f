#include "discovery/node_name_map.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace ibfabric {
namespace {

TEST(NodeNameMap, ParsesEntriesCommentsAndBlankLines) {
  auto m = NodeNameMap::parse(
      "# node-name map\n"
      "\n"
      "0x0002c90300a1b2c3 \"leaf-01\"\n"
      "  0x0002C90300A1B2C4\t\"spine 01; row A\"   # trailing comment\r\n"
      "200005 \"bare hex\"\n",
      "map.txt");
  EXPECT_TRUE(m.problems().empty());
  EXPECT_EQ(m.size(), 3u);
  ASSERT_NE(m.find(Guid{0x0002c90300a1b2c3}), nullptr);
  EXPECT_EQ(*m.find(Guid{0x0002c90300a1b2c3}), "leaf-01");
  EXPECT_EQ(*m.find(Guid{0x0002c90300a1b2c4}), "spine 01; row A");
  EXPECT_EQ(*m.find(Guid{0x200005}), "bare hex");
  EXPECT_EQ(m.find(Guid{1}), nullptr);
}

TEST(NodeNameMap, GarbageLinesAreReportedWithLineNumbersAndSkipped) {
  auto m = NodeNameMap::parse(
      "0x10 \"good-1\"\n"
      "this is garbage\n"
      "0x11 unquoted\n"
      "0x12 \"unterminated\n"
      "0x13 \"name\" extra words\n"
      "0xZZ \"bad guid\"\n"
      "0x14 \"good-2\"\n"
      "0x10 \"good-1 again\"\n",
      "names.map");
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(*m.find(Guid{0x14}), "good-2");
  EXPECT_EQ(*m.find(Guid{0x10}), "good-1 again");  // the later entry wins
  EXPECT_EQ(m.find(Guid{0x11}), nullptr);
  ASSERT_EQ(m.problems().size(), 6u);
  std::vector<int> lines;
  for (const auto& p : m.problems()) lines.push_back(p.line);
  EXPECT_EQ(lines, (std::vector<int>{2, 3, 4, 5, 6, 8}));
  EXPECT_EQ(m.problems()[0].message.rfind("names.map:2: ", 0), 0u) << m.problems()[0].message;
  EXPECT_NE(m.problems()[5].message.find("duplicate"), std::string::npos);
}

TEST(NodeNameMap, LoadsFilesAndFailsClearlyOnMissingOnes) {
  auto path = std::filesystem::temp_directory_path() / "ibfabric-nnm-test.map";
  {
    std::ofstream out(path);
    out << "0x20 \"from-file\"\n";
  }
  auto m = NodeNameMap::load(path);
  std::filesystem::remove(path);
  EXPECT_EQ(*m.find(Guid{0x20}), "from-file");
  EXPECT_THROW(NodeNameMap::load("/nonexistent/ibfabric.map"), std::runtime_error);
}

}  // namespace
}  // namespace ibfabric
