// ibfabricd's operational behaviour on a real ibsim + OpenSM fabric over real HTTP:
//   - an expected topology with a node that is not there: /topology/compare, node_missing,
//     ibfabric_fabric_missing_nodes;
//   - clearing a switch port's counters (PortCounters and PortCountersExtended SETs through the
//     daemon's own umad port): the counters read ~0 after, the next rate is sane;
//   - faults: ibsim killed -> not ready (503 on /health/ready), the last snapshot still served
//     with its age, crawl and sweep failures reported, the counter source re-created;
//   - a real Prometheus (Debian's) scraping the daemon: PromQL answers with the same link counts,
//     counters and utilization as the REST API, and follows an Unlinked cable.
// Every wait is bounded; the fabric, the daemon and Prometheus are stopped in teardown.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/daemon_process.h"
#include "tests/support/prometheus_fixture.h"
#include "tests/support/rest_get.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class DaemonOps : public ::testing::Test {
 protected:
  void startDaemon(const std::string& config) {
    net_ = writeScratchFile("ops.net", fatTreeText("o", 2, 2, 2));
    fabric_ = std::make_unique<SimFabric>(net_, "ops");
    config_ = writeScratchFile("ops.yaml", config);
    daemon_ = std::make_unique<DaemonProcess>(
        *fabric_,
        std::vector<std::string>{"--config", config_.string(), "--listen", "127.0.0.1:0"});
    port_ = daemon_->waitForPort(60s);
    ASSERT_GT(port_, 0) << daemon_->log();
    http_ = std::make_unique<JsonClient>(port_, 30);
    ASSERT_TRUE(waitFor([&] { return http_->get("/api/v1/health/ready").first == 200; }, 60s))
        << daemon_->log();
  }
  void TearDown() override {
    if (daemon_) {
      daemon_->signalAndWait(SIGTERM, 5s);
    }
    daemon_.reset();
    fabric_.reset();  // sim down
  }

  std::filesystem::path net_, config_;
  std::unique_ptr<SimFabric> fabric_;
  std::unique_ptr<DaemonProcess> daemon_;
  int port_ = -1;
  std::unique_ptr<JsonClient> http_;
};

TEST_F(DaemonOps, ClearCountersThroughTheSweepThread) {
  // Also an expected topology: the fabric plus one HCA that is not there.
  const auto expected =
      writeScratchFile("ops-expected.net", fatTreeText("o", 2, 2, 2) + "\nHca 1 \"oextra\"\n");
  startDaemon("sweep_interval: 0.5\ncrawl_interval: 30\napi_token: s3cret\nexpected_topology: " +
              expected.string() + "\n");
  auto compare = http_->ok("/api/v1/topology/compare");
  EXPECT_EQ(compare["missing_nodes"]["ca"], 1) << compare.dump();
  bool extraMissing = false;
  for (const auto& n : compare["expected_nodes"])
    extraMissing = extraMissing || (n["node"] == "oextra" && n["present"] == false);
  EXPECT_TRUE(extraMissing) << compare.dump();
  const auto missing = http_->ok("/api/v1/events?type=node_missing")["events"];
  ASSERT_EQ(missing.size(), 1u) << missing.dump();
  EXPECT_EQ(missing[0]["node"], "oextra");
  // /metrics is rendered in the background after each state change: it may lag a moment.
  std::string text;
  EXPECT_TRUE(waitFor(
      [&] {
        auto res = http_->client.Get("/metrics");
        text = res ? res->body : "";
        return text.find("ibfabric_fabric_missing_nodes{type=\"ca\"} 1") != std::string::npos;
      },
      10s));
  EXPECT_NE(text.find("node=\"oextra\",type=\"ca\"} 0"), std::string::npos);

  const std::string leaf = guidOf(*http_, "oleaf1");
  ASSERT_FALSE(leaf.empty());
  const std::string port = "/api/v1/ports/" + leaf + "/1";
  auto r = fabric_->cmd(
      "PerformanceSet \"oleaf1\"[1] PortCountersExtended.PortXmitData=123456789012\n"
      "PerformanceSet \"oleaf1\"[1] PortCounters.SymbolErrorCounter=7");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  ASSERT_TRUE(waitFor(
      [&] {
        const auto c = http_->ok(port)["sample"]["counters"];
        return c.value("xmit_data", 0ull) >= 123456789012ull && c.value("symbol_errors", 0) == 7;
      },
      30s))
      << http_->ok(port).dump();

  EXPECT_EQ(http_->post(port + "/clear-counters", "wrong").first, 403);
  EXPECT_EQ(http_->post("/api/v1/ports/" + leaf + "/30/clear-counters", "s3cret").first, 404);
  const std::uint64_t seqBefore = http_->ok(port)["sample"]["sequence"];
  auto [status, body] = http_->post(port + "/clear-counters", "s3cret");
  ASSERT_EQ(status, 200) << body.dump() << daemon_->log();
  EXPECT_EQ(body["extended"], true) << body.dump();  // ibsim switches have extended counters

  // Two sweeps later: counters near zero (only MAD traffic since the clear), a sane rate.
  json p;
  ASSERT_TRUE(waitFor(
      [&] {
        p = http_->ok(port);
        return p["sample"]["sequence"].get<std::uint64_t>() >= seqBefore + 3 &&
               p["rates"].is_object();
      },
      30s))
      << p.dump();
  EXPECT_LT(p["sample"]["counters"]["xmit_data"].get<std::uint64_t>(), 1'000'000u) << p.dump();
  EXPECT_EQ(p["sample"]["counters"]["symbol_errors"], 0) << p.dump();
  const auto tx = p["rates"]["tx_bytes_per_second"];
  ASSERT_TRUE(tx.is_number()) << p["rates"].dump();
  EXPECT_GE(tx.get<double>(), 0.0);
  EXPECT_LT(tx.get<double>(), 1e8) << "no spike after the clear: " << p["rates"].dump();
  auto cleared = http_->ok("/api/v1/events?type=counters_cleared")["events"];
  ASSERT_EQ(cleared.size(), 1u) << cleared.dump();
  EXPECT_EQ(cleared[0]["node"], "oleaf1");
  const auto resets = http_->ok("/api/v1/events?type=counter_reset")["events"];
  for (const auto& e : resets) {
    EXPECT_NE(e["node"], "oleaf1") << e.dump();
  }
}

TEST_F(DaemonOps, AKilledSimulatorIsReportedWhileTheLastSnapshotIsServed) {
  startDaemon("sweep_interval: 0.5\ncrawl_interval: 1\ncrawl_timeout: 2\n");
  const pid_t ibsim = processNamed(*fabric_, "ibsim");
  ASSERT_GT(ibsim, 0);
  const auto links = http_->ok("/api/v1/topology")["links"];
  ASSERT_EQ(::kill(ibsim, SIGKILL), 0);
  // Not ready within a few sweeps; crawls fail too (the crawl child is killed after
  // crawl_timeout); the counter source is re-created after 3 failed sweeps.
  json h;
  ASSERT_TRUE(waitFor(
      [&] {
        auto [status, body] = http_->get("/api/v1/health/ready");
        h = body;
        return status == 503 && h.is_object() &&
               h["sweep"]["consecutive_failures"].get<int>() >= 4 &&
               h["crawl"]["consecutive_failures"].get<int>() >= 1;
      },
      60s))
      << h.dump() << daemon_->log();
  EXPECT_EQ(h["status"], "degraded");
  EXPECT_EQ(h["ready"], false);
  EXPECT_NE(h["sweep"]["last_error"], nullptr);
  // Liveness, and the last snapshot with its age.
  EXPECT_EQ(http_->ok("/api/v1/health/live")["live"], true);
  EXPECT_EQ(http_->ok("/api/v1/topology")["links"], links);
  auto health = http_->get("/api/v1/health");
  EXPECT_EQ(health.first, 200);
  EXPECT_GT(health.second["sweep"]["age_seconds"].get<double>(), 1.0);
  const std::string sweepFailed = "ibfabric_collector_success{collector=\"sweep\"} 0";
  EXPECT_NE(metricsWith(http_->client, {sweepFailed}).find(sweepFailed), std::string::npos);
  EXPECT_NE(daemon_->log().find("re-creating the counter source"), std::string::npos)
      << daemon_->log();
}

TEST_F(DaemonOps, PrometheusScrapesTheSameNumbersAsTheRestApi) {
  if (!PrometheusFixture::available()) GTEST_SKIP() << "prometheus is not installed";
  // Every port (the HCA's too) and every counter set: the REST numbers of an HCA port to compare.
  startDaemon("sweep_interval: 0.5\ncrawl_interval: 0.5\nmetrics: {ports: all, counters: all}\n");
  PrometheusFixture prom;
  prom.start(PrometheusFixture::scrapeConfig("127.0.0.1:" + std::to_string(port_)));
  ASSERT_TRUE(prom.waitForTargets(1, 30s)) << prom.targets().dump() << prom.log();
  auto scalar = [&](const std::string& q) -> double {
    auto r = prom.query(q)["result"];
    return r.empty() ? -1.0 : std::stod(r[0]["value"][1].get<std::string>());
  };
  ASSERT_TRUE(waitFor([&] { return scalar("sum(ibfabric_fabric_links)") == 8; }, 30s));
  EXPECT_EQ(scalar("ibfabric_fabric_links{state=\"down\"}"), 0);
  EXPECT_EQ(scalar("ibfabric_fabric_switches{state=\"active\"}"), 4);
  EXPECT_EQ(scalar("sum(ibfabric_fabric_hosts)"), http_->ok("/api/v1/topology")["hosts"]);

  // A cable Unlinked shows in both.
  auto r = fabric_->cmd("Unlink \"ohost1-2\"[1]");  // not the daemon's own HCA (the last)
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  // The cable stays in the model, down (missing): 7 active of 8.
  ASSERT_TRUE(waitFor(
      [&] { return http_->ok("/api/v1/topology")["links_by_state"].value("active", 0) == 7; },
      30s));
  ASSERT_TRUE(
      waitFor([&] { return scalar("sum(ibfabric_fabric_links{state=\"active\"})") == 7; }, 30s));
  EXPECT_EQ(scalar("sum(ibfabric_fabric_links)"), 8);

  // Freeze the daemon's state (long intervals via SIGHUP), wait for a scrape of the final
  // state, then compare the per-port numbers exactly.
  writeScratchFile("ops.yaml", "sweep_interval: 600\ncrawl_interval: 600\n");
  ASSERT_EQ(daemon_->signal(SIGHUP), 0);
  double lastSweep = -1;
  ASSERT_TRUE(waitFor(
      [&] {
        const double now = http_->ok("/api/v1/health")["sweep"]["last_success"];
        const bool stable = now == lastSweep;
        lastSweep = now;
        return stable && std::abs(scalar("ibfabric_last_sweep_timestamp_seconds") - now) < 1e-3;
      },
      30s, 1500ms));
  const std::string host = guidOf(*http_, "ohost1-1");
  auto p = http_->ok("/api/v1/ports/" + host + "/1");
  ASSERT_TRUE(p["rates"].is_object()) << p.dump();
  const std::string sel = "{guid=\"" + host + "\",port=\"1\"}";
  EXPECT_EQ(scalar("ibfabric_port_transmit_bytes_total" + sel),
            4.0 * p["sample"]["counters"]["xmit_data"].get<double>());
  const auto txUtil = p["rates"]["tx_utilization"];
  ASSERT_TRUE(txUtil.is_number()) << p["rates"].dump();
  EXPECT_NEAR(scalar("ibfabric_port_utilization_ratio{guid=\"" + host +
                     "\",port=\"1\",direction=\"transmit\"}"),
              txUtil.get<double>(), 1e-12 + 1e-9 * txUtil.get<double>());
  EXPECT_EQ(scalar("count(ibfabric_port_info)"),
            http_->ok("/api/v1/health")["sweep"]["ports"].get<double>());
  prom.stop();
}

}  // namespace
}  // namespace ibfabric::testing
