// The pool's REST face and metrics over real HTTP on loopback, with the fabric service's seams
// faked: bearer token on writes, status codes (201/200/409/400/404/503), host registration,
// the events the follower turns into degraded allocations, /metrics families; and the `pool:`
// config block.
#include "api/http/rest_server.h"
#include "api/service/pool_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "api/daemon/service_config.h"
#include "tests/fakes/fake_sources.h"
#include "tests/support/fabrics.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using nlohmann::json;

class ApiPool : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_.topology().push(topology_);
    PoolConfig pc;
    pc.enabled = true;
    pc.inventory =
        testing::writeScratchFile("api-pool.json",
                                  R"({"hosts": [{"name": "dgx[0001-0003]", "gpu_count": 8}]})")
            .string();
    pool_ = std::make_unique<PoolService>(daemon_.service(), daemon_.placement(), pc);
    RestOptions ro;
    ro.token = "t0ken";
    ASSERT_GT(daemon_.serve(ro, pool_.get()), 0);
  }
  void TearDown() override {
    daemon_.stopServing();  // the server's pool routes go before the pool
    if (pool_) pool_->stop();
  }
  static testing::InProcessDaemon::Options daemonOptions() {
    testing::InProcessDaemon::Options o;
    o.service.sweepInterval = 1h;
    return o;
  }
  json send(const std::string& method, const std::string& path, const std::string& body, int status,
            const std::string& token = "t0ken") {
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    httplib::Client& c = daemon_.client();
    auto res = method == "GET"    ? c.Get(path.c_str())
               : method == "POST" ? c.Post(path.c_str(), h, body, "application/json")
               : method == "PUT"  ? c.Put(path.c_str(), h, body, "application/json")
                                  : c.Delete(path.c_str(), h);
    EXPECT_TRUE(res) << path;
    if (!res) return {};
    EXPECT_EQ(res->status, status) << method << " " << path << ": " << res->body;
    json j = json::parse(res->body, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << res->body;
    if (status >= 400) {
      EXPECT_EQ(j["error"]["code"], status) << res->body;
    }
    return j;
  }

  TopologyPtr topology_ = testing::netfileTopology(testing::twoLevel(2, 2, 2));
  testing::InProcessDaemon daemon_{daemonOptions()};
  std::unique_ptr<PoolService> pool_;  // after daemon_: destroyed first, the service outlives it
};

TEST_F(ApiPool, AllocationsHostsUsageAndMetrics) {
  const std::string req =
      R"({"job_id": "j1", "gpus": 16, "gpus_per_host": 8, "class": "training", "priority": 1})";
  // Before the first crawl the pool knows no fabric: 503.
  send("POST", "/api/v1/pool/allocations", req, 503);
  daemon_.service().start();
  pool_->start();
  ASSERT_TRUE(testing::waitFor([&] { return pool_->pool().usage().totalGpus == 24; }, 10s));

  send("POST", "/api/v1/pool/allocations", req, 401, "");
  send("POST", "/api/v1/pool/allocations", req, 403, "wrong");
  auto a = send("POST", "/api/v1/pool/allocations", req, 201);
  EXPECT_EQ(a["created"], true);
  EXPECT_EQ(a["allocation"]["hosts"].size(), 2u);
  EXPECT_EQ(a["allocation"]["state"], "active");
  EXPECT_EQ(send("POST", "/api/v1/pool/allocations", req, 200)["created"], false);
  auto conflict = send("POST", "/api/v1/pool/allocations",
                       R"({"job_id": "j1", "gpus": 8, "class": "training"})", 409);
  EXPECT_THAT(conflict["error"]["message"].get<std::string>(), HasSubstr("another request"));
  send("POST", "/api/v1/pool/allocations", "not json", 400);
  send("POST", "/api/v1/pool/allocations", R"({"job_id": "j2", "gpus": 1, "class": "x"})", 400);
  send("POST", "/api/v1/pool/allocations", R"({"job_id": "big", "gpus": 64, "class": "training"})",
       409);
  EXPECT_EQ(send("GET", "/api/v1/pool/allocations/j1", "", 200)["job_id"], "j1");
  send("GET", "/api/v1/pool/allocations/none", "", 404);
  EXPECT_EQ(send("GET", "/api/v1/pool/allocations", "", 200)["allocations"].size(), 1u);

  // Register a host: unknown to the fabric, reported, not used.
  auto put = send("PUT", "/api/v1/pool/hosts/ghost01", R"({"gpu_count": 4})", 201);
  EXPECT_EQ(put["in_fabric"], false);
  send("PUT", "/api/v1/pool/hosts/ghost01", R"({"gpu_count": 4})", 200);
  send("PUT", "/api/v1/pool/hosts/ghost01", R"({"gpu_count": 4})", 401, "");
  send("PUT", "/api/v1/pool/hosts/bad%20name", R"({"gpu_count": 4})", 400);
  send("PUT", "/api/v1/pool/hosts/ghost02", R"({"gpu_count": -1})", 400);
  auto host = send("GET", "/api/v1/pool/hosts/dgx0001", "", 200);
  EXPECT_EQ(host["in_fabric"], true);
  EXPECT_EQ(host["gpus"].size(), 8u);
  send("GET", "/api/v1/pool/hosts/nohost", "", 404);
  auto usage = send("GET", "/api/v1/pool", "", 200);
  EXPECT_EQ(usage["total_gpus"], 24);
  EXPECT_EQ(usage["classes"]["training"]["gpus"], 16.0);
  EXPECT_EQ(usage["unknown_hosts"], json::array({"ghost01"}));

  // A link_down event on one of j1's hosts reaches the pool through the follower.
  const std::string h0 = a["allocation"]["hosts"][0]["host"];
  const Node& hca = topology_->node(topology_->findHost(h0)->hcas.at(0));
  daemon_.service().events().append(telemetry::EventType::kLinkDown,
                                    {hca.guid, hca.description, PortNum(1)}, std::nullopt, "test");
  ASSERT_TRUE(testing::waitFor(
      [&] { return send("GET", "/api/v1/pool/allocations/j1", "", 200)["state"] == "degraded"; },
      10s));
  auto degraded = send("GET", "/api/v1/pool/allocations/j1", "", 200);
  EXPECT_TRUE(degraded["degraded"]["replacement"].is_string()) << degraded.dump();
  auto events = send("GET", "/api/v1/events?type=pool_allocation_degraded", "", 200);
  EXPECT_EQ(events["events"].size(), 1u);

  auto metrics = daemon_.client().Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body,
              HasSubstr("ibfabric_pool_gpus{class=\"training\",state=\"degraded\"} 16"));
  EXPECT_THAT(metrics->body,
              HasSubstr("ibfabric_pool_allocations{class=\"training\",state=\"degraded\"} 1"));
  EXPECT_THAT(metrics->body, HasSubstr("ibfabric_pool_preemptions_total 0"));
  EXPECT_THAT(metrics->body, HasSubstr("ibfabric_pool_allocation_duration_seconds_bucket"));
  EXPECT_THAT(metrics->body, HasSubstr("ibfabric_collector_success"))
      << "the service's own metrics stay";
  if (::access("/usr/bin/promtool", X_OK) == 0) {
    auto file = testing::writeScratchFile("api-pool.metrics", metrics->body);
    auto check =
        testing::runProcess({"sh", "-c", "promtool check metrics < " + file.string()}, 60s);
    EXPECT_EQ(check.exitCode, 0) << check.describe();
  }

  EXPECT_EQ(send("DELETE", "/api/v1/pool/allocations/j1", "", 200)["released"], "j1");
  send("DELETE", "/api/v1/pool/allocations/j1", "", 404);
  send("DELETE", "/api/v1/pool/allocations/j1", "", 401, "");
}

TEST(ApiPoolConfig, PoolBlockIsParsedAndValidated) {
  auto inv = testing::writeScratchFile("cfg-pool.json", R"({"hosts": []})");
  auto c = loadConfigText("pool:\n  inventory: " + inv.string() +
                          "\n  journal: /tmp/x\n  quotas:\n"
                          "    - {class: inference, max_percent: 60, window: \"08:00-20:00\"}\n");
  EXPECT_TRUE(c.pool.enabled);
  EXPECT_EQ(c.pool.journal, "/tmp/x");
  ASSERT_EQ(c.pool.quotas.size(), 1u);
  EXPECT_DOUBLE_EQ(c.pool.quotas[0].maxFraction, 0.6);
  EXPECT_EQ(c.pool.quotas[0].window(), "08:00-20:00");
  EXPECT_FALSE(loadConfigText("listen: \"127.0.0.1:0\"\n").pool.enabled);
  auto err = [](const std::string& yaml) {
    try {
      loadConfigText(yaml);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(err("pool: 3\n"), HasSubstr("pool"));
  EXPECT_THAT(err("pool: {colour: red}\n"), HasSubstr("pool.colour"));
  EXPECT_THAT(err("pool: {inventory: /nonexistent.json}\n"), HasSubstr("pool.inventory"));
  EXPECT_THAT(err("pool: {quotas: [{class: batch, max_percent: 5}]}\n"), HasSubstr("class"));
  EXPECT_THAT(err("pool: {quotas: [{class: inference, max_percent: lots}]}\n"),
              HasSubstr("max_percent"));
  EXPECT_THAT(err("pool: {quotas: [{class: inference, max_fraction: 0.5, window: \"8-20\"}]}\n"),
              HasSubstr("window"));
}

}  // namespace
}  // namespace ibfabric::api
