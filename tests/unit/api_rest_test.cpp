// The REST API and /metrics over real HTTP on loopback (port 0), with the service's seams
// faked: status codes, JSON error shape, filters, long-poll, bearer token, OpenAPI document.
#include "api/http/rest_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "discovery/topology_edit.h"
#include "tests/support/fabrics.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/rest_get.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class ApiRest : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_.topology().push(testing::fatTreeTopology("", 2, 2, 2));
    RestOptions ro;
    ro.token = "t0ken";
    ro.metrics.counterSets |= MetricsOptions::bit(CounterSet::kPackets);  // not a default set
    ASSERT_GT(daemon_.serve(ro), 0);
  }
  void startAndWaitReady() { ASSERT_TRUE(daemon_.startAndWaitReady()); }
  /// GET; checks the status and, for errors, the error shape.
  json get(const std::string& path, int status) {
    return testing::getJson(daemon_.client(), path, status);
  }

  testing::InProcessDaemon daemon_;
};

TEST_F(ApiRest, NotReadyBeforeTheFirstCrawl) {
  auto res = daemon_.client().Get("/api/v1/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);  // alive, not ready: the health document, not an error
  auto h = json::parse(res->body);
  EXPECT_EQ(h["ready"], false);
  EXPECT_EQ(h["live"], true);
  EXPECT_EQ(h["status"], "starting");
  get("/api/v1/topology", 503);
  get("/api/v1/links", 503);
}

TEST_F(ApiRest, HealthAndTopology) {
  startAndWaitReady();
  auto h = get("/api/v1/health", 200);
  EXPECT_EQ(h["status"], "ready");
  EXPECT_GE(h["sweep"]["runs"].get<int>(), 2);
  EXPECT_TRUE(h["crawl"]["last_duration_seconds"].is_number());
  auto t = get("/api/v1/topology", 200);
  EXPECT_EQ(t["switches"], 4);
  EXPECT_EQ(t["cas"], 4);
  EXPECT_EQ(t["links"], 8);
  auto full = get("/api/v1/topology/full", 200);
  EXPECT_EQ(full["schema"], "ibfabric.topology/1");
  auto ibn = daemon_.client().Get("/api/v1/topology/ibnetdiscover");
  ASSERT_TRUE(ibn);
  EXPECT_EQ(ibn->status, 200);
  EXPECT_NE(ibn->body.find("Switch"), std::string::npos);
  auto dot = daemon_.client().Get("/api/v1/topology/dot");
  ASSERT_TRUE(dot);
  EXPECT_EQ(dot->body.rfind("graph fabric", 0), 0u);
}

TEST_F(ApiRest, NodesSwitchesHosts) {
  startAndWaitReady();
  EXPECT_EQ(get("/api/v1/nodes", 200)["nodes"].size(), 8u);
  EXPECT_EQ(get("/api/v1/switches?level=leaf", 200)["switches"].size(), 2u);
  EXPECT_EQ(get("/api/v1/switches?level=spine", 200)["switches"].size(), 2u);
  get("/api/v1/switches?level=roof", 400);
  auto s = daemon_.service().state();
  const Node& leaf = s->topology->node(s->topology->nodesAtLevel(1).front());
  auto n = get("/api/v1/nodes/" + toString(leaf.guid), 200);
  EXPECT_EQ(n["description"], leaf.description);
  EXPECT_EQ(n["level_name"], "leaf");
  get("/api/v1/nodes/xyz", 400);
  get("/api/v1/nodes/0x00000000deadbeef", 404);
  auto hosts = get("/api/v1/hosts", 200)["hosts"];
  ASSERT_EQ(hosts.size(), 4u);
  const std::string name = hosts[0]["name"];
  auto host = get("/api/v1/hosts/" + name, 200);
  EXPECT_EQ(host["hcas"].size(), 1u);
  EXPECT_EQ(host["leaves"].size(), 1u);
  get("/api/v1/hosts/nosuchhost", 404);
}

// A cable physically linked whose ports the SM has not activated: "init", neither down nor
// active, in the list and its filters.
TEST(ApiRestLinks, ACableNotYetActiveIsInitNotDown) {
  const TopologyPtr t = testing::fatTreeTopology("", 2, 2, 2);
  const Link& l = t->links().front();
  TopologyEdit edit;
  for (PortRef end : {l.a, l.b})
    edit.ports.push_back({t->node(end.node).guid, end.port, PortState::kInit,
                          PhysPortState::kLinkUp, t->port(end)->activeRate});
  testing::InProcessDaemon d;
  d.topology().push(applyTopologyEdit(*t, edit));
  ASSERT_GT(d.serve(), 0);
  ASSERT_TRUE(d.startAndWaitReady());
  EXPECT_EQ(testing::getJson(d.client(), "/api/v1/links?state=init", 200)["count"], 1);
  EXPECT_EQ(testing::getJson(d.client(), "/api/v1/links?state=down", 200)["count"], 0);
  EXPECT_EQ(testing::getJson(d.client(), "/api/v1/links?state=active", 200)["count"], 7);
  const json init = testing::getJson(d.client(), "/api/v1/links?state=init", 200)["links"][0];
  EXPECT_EQ(init["port_state"], "init");
  EXPECT_EQ(init["state"], "init");
  EXPECT_TRUE(init["missing"].is_null());
}

// POST /api/v1/whatif reads only: a spine drained takes an up-link from each leaf and cuts no
// host off; both spines cut every host off; bad bodies are 400, unknown nodes 404.
TEST_F(ApiRest, WhatIfDrainingSpines) {
  startAndWaitReady();
  const json spines = get("/api/v1/switches?level=spine", 200)["switches"];
  ASSERT_EQ(spines.size(), 2u);
  auto whatif = [&](const std::string& body, int status) {
    auto res = daemon_.client().Post("/api/v1/whatif", body, "application/json");
    EXPECT_TRUE(res);
    if (!res) return json();
    EXPECT_EQ(res->status, status) << res->body;
    return json::parse(res->body, nullptr, false);
  };
  const std::string one = spines[0]["guid"];
  json a = whatif(R"({"drain": {"switches": [")" + one + R"("]}})", 200);
  EXPECT_EQ(a["hosts_cut_off"], 0);
  EXPECT_EQ(a["leaves"].size(), 2u);
  for (const auto& l : a["leaves"]) EXPECT_DOUBLE_EQ(l["fraction_lost"].get<double>(), 0.5);
  const std::string two = spines[1]["guid"];
  json b = whatif(R"({"drain": {"switches": [")" + one + R"(", ")" + two + R"("]}})", 200);
  EXPECT_EQ(b["hosts_cut_off"], 4) << b.dump();
  EXPECT_EQ(b["hcas_lost"], 4);
  EXPECT_EQ(get("/api/v1/links?state=active", 200)["count"], 8);  // nothing was touched
  whatif("{", 400);
  whatif(R"({"drain": {}})", 400);
  whatif(R"({"drain": {"switches": [7]}})", 400);
  whatif(R"({"drain": {"cables": [{"node": ")" + one + R"(", "port": 300}]}})", 400);
  whatif(R"({"drain": {"switches": ["no such switch"]}})", 404);
  whatif(R"({"drain": {"switches": [""]}})", 400);  // (these switches have no description)
  whatif(R"({"drain": {"cables": [{"node": ")" + one + R"(", "port": 200}]}})", 404);
}

TEST_F(ApiRest, LinksWithFiltersAndPorts) {
  startAndWaitReady();
  auto all = get("/api/v1/links", 200);
  EXPECT_EQ(all["count"], 8);
  EXPECT_EQ(get("/api/v1/links?state=active", 200)["count"], 8);
  EXPECT_EQ(get("/api/v1/links?state=down", 200)["count"], 0);
  EXPECT_EQ(get("/api/v1/links?level=spine", 200)["count"], 4);
  auto top = get("/api/v1/links?sort=utilization&limit=3", 200);
  EXPECT_EQ(top["count"], 3);
  EXPECT_TRUE(top["links"][0]["a"]["rates"]["tx_bytes_per_second"].is_number());
  get("/api/v1/links?state=sideways", 400);
  get("/api/v1/links?sort=color", 400);
  get("/api/v1/links?limit=-1", 400);

  const auto a = all["links"][0]["a"];
  const std::string guid = a["guid"];
  const int port = a["port"];
  auto p = get("/api/v1/ports/" + guid + "/" + std::to_string(port), 200);
  EXPECT_EQ(p["sample"]["status"], "ok");
  EXPECT_TRUE(p["sample"]["counters"]["xmit_data"].is_number());
  EXPECT_TRUE(p["rates"]["tx_bytes_per_second"].is_number());
  EXPECT_EQ(p["health"]["state"], "ok");
  EXPECT_GE(p["history"].size(), 2u);
  get("/api/v1/ports/" + guid + "/77", 404);
  get("/api/v1/ports/" + guid + "/x", 400);
  get("/api/v1/ports/0x00000000deadbeef/1", 404);
  get("/api/v1/nosuch", 404);
}

TEST_F(ApiRest, EventsAndLongPoll) {
  startAndWaitReady();
  auto& log = daemon_.service().events();
  log.append(telemetry::EventType::kLinkDown, {Guid{0x100000}, "h", PortNum{1}}, std::nullopt,
             "first");
  auto e = get("/api/v1/events", 200);
  ASSERT_EQ(e["events"].size(), 1u);
  EXPECT_EQ(e["events"][0]["type"], "link_down");
  const std::uint64_t last = e["last_id"];
  get("/api/v1/events?type=link_sideways", 400);
  get("/api/v1/events?since=abc", 400);
  get("/api/v1/events?limit=0", 400);
  get("/api/v1/events?wait=-1", 400);
  EXPECT_EQ(get("/api/v1/events?type=link_up", 200)["events"].size(), 0u);

  std::jthread later([&] {
    std::this_thread::sleep_for(200ms);
    log.append(telemetry::EventType::kLinkUp, {Guid{0x100000}, "h", PortNum{1}}, std::nullopt,
               "second");
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto waited = get("/api/v1/events?wait=10&since=" + std::to_string(last), 200);
  const auto took = std::chrono::steady_clock::now() - t0;
  later.join();
  ASSERT_EQ(waited["events"].size(), 1u);
  EXPECT_EQ(waited["events"][0]["message"], "second");
  EXPECT_LT(took, 5s);
  // Nothing new: returns after the wait, empty.
  auto none = get("/api/v1/events?wait=0.2&since=" + waited["last_id"].dump(), 200);
  EXPECT_TRUE(none["events"].empty());
}

TEST_F(ApiRest, DiscoverNeedsTheToken) {
  startAndWaitReady();
  auto post = [&](const httplib::Headers& headers) {
    auto res = daemon_.client().Post("/api/v1/discover", headers, "", "application/json");
    EXPECT_TRUE(res);
    return res ? res->status : -1;
  };
  EXPECT_EQ(post({}), 401);
  EXPECT_EQ(post({{"Authorization", "Bearer wrong"}}), 403);
  const int before = daemon_.topology().calls();
  EXPECT_EQ(post({{"Authorization", "Bearer t0ken"}}), 202);
  EXPECT_TRUE(testing::waitFor([&] { return daemon_.topology().calls() > before; }, 5s));
  daemon_.server().setToken("");
  EXPECT_EQ(post({{"Authorization", "Bearer t0ken"}}), 403);
  // Bodies are limited.
  auto big = daemon_.client().Post("/api/v1/discover", std::string(200 * 1024, 'x'), "text/plain");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_NE(big->body.find("\"code\":413"), std::string::npos) << big->body;
}

TEST_F(ApiRest, MetricsAndOpenApi) {
  startAndWaitReady();
  auto m = daemon_.client().Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 200);
  for (const char* name :
       {"ibfabric_port_transmit_bytes_total{", "ibfabric_port_receive_packets_total{",
        "ibfabric_port_symbol_errors_total{", "ibfabric_collector_success{collector=\"sweep\"} 1",
        "ibfabric_sweep_duration_seconds ", "ibfabric_last_sweep_timestamp_seconds ",
        "ibfabric_fabric_links{state=\"active\"} 8"})
    EXPECT_NE(m->body.find(name), std::string::npos) << name;
  // Bytes, not 4-octet units: the fake counts 1000 units per sweep.
  EXPECT_NE(m->body.find("remote_port=\"1\"}"), std::string::npos);
  auto o = get("/api/v1/openapi.json", 200);
  EXPECT_EQ(o["openapi"], "3.0.3");
  EXPECT_TRUE(o["paths"].contains("/events"));
}

}  // namespace
}  // namespace ibfabric::api
