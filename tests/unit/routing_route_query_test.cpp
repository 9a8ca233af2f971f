// Route endpoints by name: host (every HCA), description, GUID, LID; rail-by-rail pairing of two
// multi-HCA hosts; clear errors for what matches nothing.
#include "routing/route_query.h"

#include <gtest/gtest.h>

#include "routing/synthetic_tables.h"
#include "tests/support/fabrics.h"

namespace ibfabric::routing {
namespace {

// 32 hosts x 8 HCAs, rail-optimized.
TopologyPtr superpod() { return testing::routableTopology(testing::superpod(1)); }

TEST(RouteQuery, ResolvesHostDescriptionGuidAndLid) {
  auto t = superpod();
  auto host = resolveEndpoint(*t, "dgx0001");
  ASSERT_EQ(host.size(), 8u);
  for (std::size_t i = 0; i < host.size(); ++i) {
    EXPECT_EQ(t->node(host[i].port.node).hcaIndex, static_cast<int>(i));
  }
  auto hca = resolveEndpoint(*t, "dgx0001 mlx5_3");
  ASSERT_EQ(hca.size(), 1u);
  EXPECT_EQ(hca[0].port, host[3].port);
  const Node& n = t->node(hca[0].port.node);
  auto byGuid = resolveEndpoint(*t, toString(n.guid));
  ASSERT_EQ(byGuid.size(), 1u);
  EXPECT_EQ(byGuid[0].lid, hca[0].lid);
  auto byPortGuid = resolveEndpoint(*t, toString(n.port(PortNum{1})->guid));
  EXPECT_EQ(byPortGuid[0].port, hca[0].port);
  auto byLid = resolveEndpoint(*t, std::to_string(hca[0].lid.value()));
  EXPECT_EQ(byLid[0].port, hca[0].port);
  // A switch: its port 0.
  const Node& leaf = t->node(n.port(PortNum{1})->remote->node);
  auto sw = resolveEndpoint(*t, leaf.description);
  EXPECT_EQ(sw[0].port, (PortRef{leaf.index, PortNum{0}}));

  EXPECT_THROW(resolveEndpoint(*t, ""), EndpointError);
  EXPECT_THROW(resolveEndpoint(*t, "60000"), EndpointError);
  EXPECT_THROW(resolveEndpoint(*t, "0x00000000deadbeef"), EndpointError);
  try {
    resolveEndpoint(*t, "nosuch");
    FAIL();
  } catch (const EndpointError& e) {
    EXPECT_NE(std::string(e.what()).find("\"nosuch\""), std::string::npos);
  }
}

TEST(RouteQuery, TwoHostsPairRailByRailAndStayOnTheirRailLeaf) {
  auto t = superpod();
  auto tables = computeShortestPathTables(t);
  auto pairs = pairEndpoints(resolveEndpoint(*t, "dgx0001"), resolveEndpoint(*t, "dgx0002"));
  ASSERT_EQ(pairs.size(), 8u);
  for (const auto& [a, b] : pairs) {
    EXPECT_EQ(t->node(a.port.node).hcaIndex, t->node(b.port.node).hcaIndex);
    auto r = traceRoute(*t, *tables, a.port, b.lid);
    ASSERT_TRUE(r.ok()) << r.problem;
    EXPECT_EQ(r.switchHops(), 1);  // same rail, same SU: one leaf
  }
  // One side single: it with each of the other.
  auto fan = pairEndpoints(resolveEndpoint(*t, "dgx0001 mlx5_0"), resolveEndpoint(*t, "dgx0002"));
  EXPECT_EQ(fan.size(), 8u);
}

}  // namespace
}  // namespace ibfabric::routing
