// Routing through the daemon's seams: FabricService publishes forwarding tables from the counter
// source (the fake serves shortest-path tables), their validation and balance; the REST
// endpoints /api/v1/routes, /routing/validation, /routing/balance and the routing metrics.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "api/http/rest_server.h"
#include "api/http/routing_json.h"
#include "api/metrics/metrics.h"
#include "api/service/routing_state.h"
#include "routing/synthetic_tables.h"
#include "tests/support/fabrics.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// 2 spines, 3 leaves, 2 hosts per leaf (dgx0001..dgx0006, "dgx0001 mlx5_0"), LIDs 1.. in file
// order.
TopologyPtr fabric() { return testing::routableTopology(testing::twoLevel(3, 2, 2)); }

class ApiRouting : public ::testing::Test {
 protected:
  void start(bool serveTables) {
    daemon_.topology().push(fabric());
    daemon_.counters()->serveTables = serveTables;
    ASSERT_GT(daemon_.serve(), 0);
    ASSERT_TRUE(daemon_.startAndWaitReady(
        2, [&](const ServiceState& s) { return !serveTables || s.routeAnalysis; }));
  }
  json get(const std::string& path, int status) {
    auto res = daemon_.client().Get(path.c_str());
    EXPECT_TRUE(res) << path;
    if (!res) return {};
    EXPECT_EQ(res->status, status) << path << ": " << res->body;
    json j = json::parse(res->body, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << path << ": " << res->body;
    if (status >= 400) {
      EXPECT_TRUE(j["error"]["message"].is_string()) << res->body;
    }
    return j;
  }

  testing::InProcessDaemon daemon_;
};

TEST_F(ApiRouting, PublishesTablesOnceAndServesRoutes) {
  start(true);
  auto s = daemon_.service().state();
  ASSERT_TRUE(s->forwarding);
  EXPECT_EQ(s->forwarding->source(), "memory");
  EXPECT_EQ(s->routeAnalysis->validation.pairsChecked, 6u * 5u);
  EXPECT_EQ(s->routeAnalysis->validation.pairsOk, 6u * 5u);
  EXPECT_EQ(s->routes.lastError, "");
  // Later sweeps keep the same tables (no new topology): computed once.
  ASSERT_TRUE(testing::waitFor([&] { return daemon_.service().state()->routes.runs >= 3; }, 10s));
  EXPECT_EQ(daemon_.counters()->tableReads, 1);
  EXPECT_EQ(daemon_.service().state()->forwarding, s->forwarding);

  // By host name (one HCA each): leaf-01 -> spine -> leaf-03.
  auto r = get("/api/v1/routes?src=dgx0001&dst=dgx0006", 200);
  ASSERT_EQ(r["routes"].size(), 1u);
  const auto& route = r["routes"][0];
  EXPECT_EQ(route["status"], "ok");
  EXPECT_EQ(route["switch_hops"], 3);
  ASSERT_EQ(route["hops"].size(), 4u);
  EXPECT_EQ(route["hops"][0]["from"]["description"], "dgx0001 mlx5_0");
  EXPECT_NE(route["hops"][0]["to"]["description"].get<std::string>().find("leaf-01"),
            std::string::npos);
  EXPECT_EQ(route["hops"][1]["to"]["type"], "switch");
  EXPECT_EQ(route["hops"][3]["to"]["description"], "dgx0006 mlx5_0");
  EXPECT_EQ(route["hops"][3]["to"]["port"], 1);
  EXPECT_TRUE(route["hops"][0].contains("health")) << route.dump();
  EXPECT_TRUE(route["hops"][0].contains("rate")) << route.dump();

  // By LID and by GUID give the same path.
  const auto& t = *s->forwarding->topology();
  const Node* dst = nullptr;
  for (const Node& n : t.nodes()) {
    if (n.description == "dgx0006 mlx5_0") dst = &n;
  }
  ASSERT_NE(dst, nullptr);
  // (Only the path: utilization and congestion are live and may change between two requests,
  // since the fake counter source keeps sweeping.)
  const auto path = [](nlohmann::json hops) {
    for (auto& hop : hops) {
      hop.erase("utilization");
      hop.erase("congestion");
    }
    return hops;
  };
  auto byLid = get("/api/v1/routes?src=dgx0001&dst=" + std::to_string(dst->lid().value()), 200);
  EXPECT_EQ(path(byLid["routes"][0]["hops"]), path(route["hops"]));
  auto byGuid = get("/api/v1/routes?src=dgx0001&dst=" + toString(dst->guid), 200);
  EXPECT_EQ(path(byGuid["routes"][0]["hops"]), path(route["hops"]));

  // Bad input: clear 4xx.
  get("/api/v1/routes?src=dgx0001", 400);
  auto nf = get("/api/v1/routes?src=nosuchhost&dst=dgx0006", 404);
  EXPECT_NE(nf["error"]["message"].get<std::string>().find("nosuchhost"), std::string::npos);
  get("/api/v1/routes?src=dgx0001&dst=60000", 404);
  get("/api/v1/routing/validation?limit=x", 400);

  auto v = get("/api/v1/routing/validation", 200);
  EXPECT_EQ(v["pairs_checked"], 30);
  EXPECT_EQ(v["pairs_ok"], 30);
  EXPECT_EQ(v["black_holes"], 0);
  EXPECT_EQ(v["problems"].size(), 0u);
  EXPECT_EQ(v["switches_with_tables"], 5);

  auto b = get("/api/v1/routing/balance", 200);
  ASSERT_EQ(b["leaves"].size(), 3u);
  for (const auto& leaf : b["leaves"]) {
    ASSERT_EQ(leaf["up_ports"].size(), 2u);
    EXPECT_EQ(leaf["up_ports"][0]["destinations"].get<int>() +
                  leaf["up_ports"][1]["destinations"].get<int>(),
              4);
  }

  auto h = get("/api/v1/health", 200);
  EXPECT_GE(h["routes"]["runs"].get<int>(), 1);

  auto m = daemon_.client().Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("ibfabric_collector_success{collector=\"routes\"} 1"), std::string::npos);
  EXPECT_NE(m->body.find("ibfabric_route_problems{kind=\"black_hole\"} 0"), std::string::npos);
  EXPECT_NE(m->body.find("ibfabric_uplink_route_imbalance_ratio{guid="), std::string::npos);
  EXPECT_NE(m->body.find("ibfabric_lft_read_duration_seconds"), std::string::npos);
}

TEST_F(ApiRouting, WithoutTablesEndpointsSay503AndNoRouteMetrics) {
  start(false);
  auto e = get("/api/v1/routing/validation", 503);
  EXPECT_NE(e["error"]["message"].get<std::string>().find("forwarding tables"), std::string::npos);
  get("/api/v1/routes?src=dgx0001&dst=dgx0006", 503);
  get("/api/v1/routing/balance", 503);
  auto m = daemon_.client().Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body.find("collector=\"routes\""), std::string::npos);
}

TEST(ApiRoutingState, ProblemsReachMetricsAndValidationJson) {
  // A state whose tables lose one spine: every route through it has no table.
  auto topo = fabric();
  auto good = routing::computeShortestPathTables(topo);
  std::vector<std::optional<routing::SwitchTable>> byNode(topo->nodes().size());
  for (const Node& n : topo->nodes()) {
    if (auto* t = good->table(n.index); t && n.description.find("spine-01") == std::string::npos)
      byNode[n.index] = *t;
  }
  auto tables = std::make_shared<routing::ForwardingTables>(topo, std::move(byNode), "memory");
  ServiceState s;
  s.topology = topo;
  s.forwarding = tables;
  s.routeAnalysis = analyzeRoutes(*tables);
  s.routes.lastAttempt = s.routes.lastSuccess = std::chrono::system_clock::now();
  const auto& v = s.routeAnalysis->validation;
  EXPECT_GT(v.missingTables, 0u);
  telemetry::EventLog events(10);
  const std::string text = renderMetrics(s, events);
  EXPECT_NE(
      text.find("ibfabric_route_problems{kind=\"no_table\"} " + std::to_string(v.missingTables)),
      std::string::npos)
      << text;
  // A route that crosses no cable (to itself) and one that fails at once still render.
  const Node& ca = topo->node(topo->hosts().at(0).hcas.at(0));
  const PortRef caPort{ca.index, PortNum{1}};
  auto self = routeJson(*topo, caPort, routing::traceRoute(*topo, *tables, caPort, ca.lid()), &s);
  EXPECT_EQ(self["status"], "ok");
  EXPECT_EQ(self["hops"].size(), 0u);
  EXPECT_EQ(self["src"]["description"], ca.description);
  const Node& spine = [&]() -> const Node& {
    for (const Node& n : topo->nodes()) {
      if (n.description.find("spine-01") != std::string::npos) return n;
    }
    throw std::runtime_error("no spine");
  }();
  const PortRef spinePort{spine.index, PortNum{0}};
  auto noTable = routing::traceRoute(*topo, *tables, spinePort, ca.lid());
  EXPECT_EQ(noTable.status, routing::Route::Status::kNoTable);
  auto jn = routeJson(*topo, spinePort, noTable, nullptr);
  EXPECT_EQ(jn["status"], "no_table");
  EXPECT_EQ(jn["src"]["type"], "switch");
  EXPECT_TRUE(jn["problem"].is_string());

  auto j = validationJson(*topo, *tables, v, 2);
  EXPECT_EQ(j["problems"].size(), 2u);
  EXPECT_EQ(j["problems"][0]["kind"], "no_table");
  EXPECT_NE(j["problems"][0]["detail"].get<std::string>().find("spine-01"), std::string::npos);
}

}  // namespace
}  // namespace ibfabric::api
