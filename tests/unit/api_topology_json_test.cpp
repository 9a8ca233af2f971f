// The topology JSON loader (discovery/topology_json.h): a snapshot survives toJson -> load ->
// toJson unchanged, including node-name-map descriptions and down ports; bad documents are
// one-line errors.
#include "discovery/topology_json.h"

#include <gtest/gtest.h>

#include "discovery/formats.h"
#include "discovery/node_name_map.h"
#include "tests/support/fabrics.h"

namespace ibfabric {
namespace {

nlohmann::json withoutBuildTime(nlohmann::json j) {
  j["crawl"].erase("build_seconds");
  return j;
}

TEST(ApiTopologyJson, RoundTripsAFatTree) {
  auto t = testing::fatTreeTopology("", 2, 4, 3, "netfile fat tree");
  auto j = toJson(*t);
  auto back = topologyFromJson(j);
  EXPECT_EQ(withoutBuildTime(toJson(*back)), withoutBuildTime(j));
  EXPECT_EQ(back->links().size(), t->links().size());
  EXPECT_EQ(back->hosts().size(), t->hosts().size());
  EXPECT_EQ(back->stats().source, "netfile fat tree");
  // Through text, as the crawl child sends it.
  auto again = topologyFromJsonText(j.dump());
  EXPECT_EQ(withoutBuildTime(toJson(*again)), withoutBuildTime(j));
}

TEST(ApiTopologyJson, KeepsMappedDescriptionsAndPortStates) {
  TopologyBuilder b;
  const Guid sw{0x200000}, ca{0x100000};
  b.addNode({NodeType::kSwitch, sw, sw, "sw-reported", 1, 2, 3, 2});
  b.addNode({NodeType::kCa, ca, ca, "h1 mlx5_0", 0, 0, 0, 1});
  Port p;
  p.num = PortNum{1};
  p.state = PortState::kInit;
  p.physState = PhysPortState::kLinkUp;
  p.widthEnabled = static_cast<WidthMask>(LinkWidth::k4x);
  p.speedEnabled = speedBit(LinkSpeed::kHdr);
  p.activeRate = LinkRate{LinkWidth::k1x, LinkSpeed::kHdr};
  b.addPort(sw, p);
  b.addPort(ca, p);
  Port down;
  down.num = PortNum{2};
  b.addPort(sw, down);
  b.connect(sw, PortNum{1}, ca, PortNum{1});
  b.setNodeNameMap(std::make_shared<const NodeNameMap>(
      NodeNameMap::parse("0x0000000000200000 \"leaf-01\"\n", "map")));
  auto t = b.build();
  ASSERT_EQ(t->findNode(sw)->description, "leaf-01");
  auto back = topologyFromJson(toJson(*t));
  EXPECT_EQ(back->findNode(sw)->description, "leaf-01");
  EXPECT_EQ(back->findNode(sw)->nodeDescription, "sw-reported");
  EXPECT_EQ(back->findNode(sw)->vendorId, 1u);
  EXPECT_EQ(withoutBuildTime(toJson(*back)), withoutBuildTime(toJson(*t)));
}

TEST(ApiTopologyJson, RejectsBadDocuments) {
  EXPECT_THROW(topologyFromJsonText("{"), TopologyJsonError);
  EXPECT_THROW(topologyFromJsonText("[]"), TopologyJsonError);
  EXPECT_THROW(topologyFromJsonText(R"({"schema": "other/1", "nodes": [], "links": []})"),
               TopologyJsonError);
  auto t = testing::fatTreeTopology("", 1, 1, 1);
  auto j = toJson(*t);
  j["nodes"][0]["guid"] = "nope";
  EXPECT_THROW(topologyFromJson(j), TopologyJsonError);
  j = toJson(*t);
  j["links"][0]["a"]["guid"] = "0x00000000deadbeef";
  EXPECT_THROW(topologyFromJson(j), TopologyJsonError);
  j = toJson(*t);
  j["nodes"][0]["ports"][0]["state"] = "Sleepy";
  try {
    topologyFromJson(j);
    FAIL();
  } catch (const TopologyJsonError& e) {
    EXPECT_NE(std::string(e.what()).find("nodes[0].ports[0]"), std::string::npos) << e.what();
  }
}

TEST(ApiTopologyJson, IntegerFieldsOutOfRangeAreErrors) {
  // Found by tests/fuzz/expected_topology_fuzz.cpp: a port of 3.33e32 reached get<int>() (a
  // double out of int's range: undefined behaviour); a too large integer wrapped into range.
  auto t = testing::fatTreeTopology("", 1, 1, 1);
  const auto expectError = [](const nlohmann::json& j, const std::string& field) {
    try {
      topologyFromJson(j);
      FAIL() << field;
    } catch (const TopologyJsonError& e) {
      EXPECT_NE(std::string(e.what()).find(field + ": not an integer in range"), std::string::npos)
          << e.what();
    }
  };
  auto j = toJson(*t);
  j["links"][0]["a"]["port"] = 3.33e32;
  expectError(j, "links[0].a.port");
  j = toJson(*t);
  j["links"][0]["a"]["port"] = 1.5;
  expectError(j, "links[0].a.port");
  j = toJson(*t);
  j["nodes"][0]["num_ports"] = std::int64_t{1} << 40;
  expectError(j, "nodes[0].num_ports");
  j = toJson(*t);
  j["nodes"][0]["index"] = -1;
  expectError(j, "nodes[0].index");
  j = toJson(*t);
  j["nodes"][0]["ports"][0]["lid"] = 65536 + 3;
  expectError(j, "nodes[0].ports[0].lid");
  // The same document in text: the streaming loader reads the fields the same way.
  j = toJson(*t);
  j["nodes"][0]["vendor_id"] = -5;
  EXPECT_THROW(topologyFromJsonText(j.dump()), TopologyJsonError);
}

std::string written(const Topology& t) {
  std::string out;
  std::size_t pieces = 0;
  writeJson(t, [&](std::string_view piece) {
    out += piece;
    ++pieces;
  });
  EXPECT_GT(pieces, t.nodes().size());  // a node at a time, not one piece
  return out;
}

TEST(ApiTopologyJson, WritesTheDocumentInPiecesByteForByte) {
  for (const auto& t : {testing::fatTreeTopology("", 2, 4, 3, "netfile fat tree"),
                        testing::fatTreeTopology("", 1, 1, 1), testing::hostLeafSpine()}) {
    EXPECT_EQ(written(*t), toJson(*t).dump());
  }
}

TEST(ApiTopologyJson, TextOfAnyKeyOrderLoadsNodeByNode) {
  auto t = testing::fatTreeTopology("", 2, 4, 3, "netfile fat tree");
  auto j = toJson(*t);
  // Links before nodes (the writer's order) and after them (a hand-written document).
  auto fromWritten = topologyFromJsonText(written(*t));
  EXPECT_EQ(withoutBuildTime(toJson(*fromWritten)), withoutBuildTime(j));
  const std::string nodesFirst = R"({"schema":")" + std::string(kTopologyJsonSchema) +
                                 R"(","nodes":)" + j["nodes"].dump() + R"(,"links":)" +
                                 j["links"].dump() + "}";
  auto fromNodesFirst = topologyFromJsonText(nodesFirst);
  EXPECT_EQ(fromNodesFirst->links().size(), t->links().size());
  EXPECT_EQ(fromNodesFirst->nodes().size(), t->nodes().size());
}

TEST(ApiTopologyJson, TextErrorsNameTheElement) {
  auto t = testing::fatTreeTopology("", 1, 1, 1);
  auto j = toJson(*t);
  j["nodes"][1]["ports"][0]["state"] = "Sleepy";
  try {
    topologyFromJsonText(j.dump());
    FAIL();
  } catch (const TopologyJsonError& e) {
    EXPECT_NE(std::string(e.what()).find("nodes[1].ports[0]"), std::string::npos) << e.what();
  }
  j = toJson(*t);
  j["links"][0]["a"]["guid"] = "0x00000000deadbeef";
  EXPECT_THROW(topologyFromJsonText(j.dump()), TopologyJsonError);
  j = toJson(*t);
  j["nodes"][0]["index"] = 99;
  EXPECT_THROW(topologyFromJsonText(j.dump()), TopologyJsonError);
  EXPECT_THROW(topologyFromJsonText(j.dump().substr(0, 200)), TopologyJsonError);
  EXPECT_THROW(topologyFromJsonText(R"({"nodes": [1], "links": []})"), TopologyJsonError);
  const std::string schema = R"("schema": ")" + std::string(kTopologyJsonSchema) + "\"";
  for (const char* arrays : {R"("nodes": [1], "links": [])", R"("nodes": [], "links": [[]])"}) {
    try {
      topologyFromJsonText("{" + schema + ", " + arrays + "}");
      FAIL() << arrays;
    } catch (const TopologyJsonError& e) {
      EXPECT_NE(std::string(e.what()).find("not an object"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ibfabric
