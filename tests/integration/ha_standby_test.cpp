// Active/standby on one simulated subnet (docs/scale-out.md): two ibfabricd beside two different
// HCAs of one ibsim + OpenSM fabric, over real HTTP.
//   - lowest_guid: the instance with the lower port GUID is active and alone sends counter
//     sweeps (the daemons' own MAD counters on /metrics); both report the subnet's identity;
//     kill -9 of the active one: the standby is active and has swept within two sweep
//     intervals, and its REST API answered every request meanwhile.
//   - follow_sm: the instance beside the master SM is active; OpenSM stopped and another one
//     started beside the other instance's HCA: the active role moves with the SM.
// Measured times are printed (docs/BENCHMARKS.md). Every wait is bounded; OpenSMs, daemons and
// the fabric are stopped in teardown.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "tests/support/background_process.h"
#include "tests/support/daemon_process.h"
#include "tests/support/free_port.h"
#include "tests/support/rest_get.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"
#include "tools/sim/harness.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr double kSweepSeconds = 1.0;

/// The first sample of `name` (no labels) on a /metrics page; -1 when absent.
double metricValue(const std::string& page, const std::string& name) {
  std::istringstream in(page);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  return -1;
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

/// One daemon of the pair: its process, port and client.
struct Instance {
  std::string host;
  int port = 0;
  std::unique_ptr<DaemonProcess> process;
  std::unique_ptr<JsonClient> http;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  json health() {
    auto [status, body] = http->get("/api/v1/health");
    return status > 0 ? body : json();
  }
  std::string role() {
    const json h = health();
    return h.is_object() ? h.value("role", "") : "";
  }
  /// Counter sweeps this instance completed; -1 when it did not answer.
  int sweepRuns() {
    const json h = health();
    if (!h.is_object() || !h.contains("sweep") || !h["sweep"].is_object()) return -1;
    return h["sweep"].value("runs", 0);
  }
  std::string metrics() {
    auto res = http->client.Get("/metrics");
    return res && res->status == 200 ? res->body : "";
  }
};

class HaStandby : public ::testing::Test {
 protected:
  void startFabric(const SimFabric::Options& options = {}) {
    net_ = writeScratchFile("ha.net", fatTreeText("ha", 2, 2, 2));
    fabric_ = std::make_unique<SimFabric>(net_, "ha", options);
  }
  /// Both daemons, on `hostA` and `hostB`, with `haYaml` (the ha: block, peers filled in).
  void startPair(const std::string& hostA, const std::string& hostB, const std::string& mode) {
    a_.host = hostA;
    b_.host = hostB;
    a_.port = freeLoopbackPort();
    do {  // two calls can name the same free port
      b_.port = freeLoopbackPort();
    } while (b_.port == a_.port);
    const std::string config = "sweep_interval: " + std::to_string(kSweepSeconds) +
                               "\ncrawl_interval: 10\ncrawl_timeout: 5\nsubnet_name: plane-a\n"
                               "ha:\n  mode: " +
                               mode + "\n  peers: [\"" + a_.url() + "\", \"" + b_.url() +
                               "\"]\n  peer_timeout: 0.5\n  poll_interval: 0.25\n"
                               "  standby_crawl_interval: 5\n";
    const auto path = writeScratchFile("ha-" + mode + ".yaml", config);
    for (Instance* i : {&a_, &b_}) {
      i->process = std::make_unique<DaemonProcess>(
          *fabric_,
          std::vector<std::string>{"--config", path.string(), "--listen",
                                   "127.0.0.1:" + std::to_string(i->port)},
          "ha-" + i->host, i->host);
    }
    for (Instance* i : {&a_, &b_}) {
      ASSERT_EQ(i->process->waitForPort(60s), i->port) << i->process->log();
      i->http = std::make_unique<JsonClient>(i->port, 5);
    }
  }
  void TearDown() override {
    if (sm2_) sm2_->stop(SIGTERM, 15s);  // OpenSM before ibsim
    for (Instance* i : {&a_, &b_})
      if (i->process) i->process->signalAndWait(SIGTERM, 10s);
    a_.process.reset();
    b_.process.reset();
    fabric_.reset();
  }

  std::filesystem::path net_;
  std::unique_ptr<SimFabric> fabric_;
  Instance a_, b_;
  std::unique_ptr<BackgroundProcess> sm2_;
};

TEST_F(HaStandby, LowestGuidOnlyTheActiveSweepsAndTheStandbyTakesOverAfterKill9) {
  startFabric();
  startPair("hahost1-2", "hahost2-1", "lowest_guid");
  ASSERT_FALSE(HasFatalFailure());
  // Both know their port GUIDs; one active, one standby.
  json ha, hb;
  ASSERT_TRUE(waitFor(
      [&] {
        ha = a_.health();
        hb = b_.health();
        if (!ha.is_object() || !hb.is_object() || !ha["ha"]["port_guid"].is_string() ||
            !hb["ha"]["port_guid"].is_string())
          return false;
        const std::string ra = ha["role"], rb = hb["role"];
        return (ra == "active" && rb == "standby") || (ra == "standby" && rb == "active");
      },
      60s))
      << a_.process->log() << b_.process->log();
  const std::string guidA = ha["ha"]["port_guid"], guidB = hb["ha"]["port_guid"];
  ASSERT_NE(guidA, guidB);
  Instance& active = guidA < guidB ? a_ : b_;  // same-width hex: text order is number order
  Instance& standby = guidA < guidB ? b_ : a_;
  EXPECT_EQ(active.role(), "active");
  EXPECT_EQ(standby.role(), "standby");
  for (Instance* i : {&a_, &b_}) {
    json h = i->health();
    EXPECT_EQ(h["subnet"]["name"], "plane-a");
    EXPECT_EQ(h["subnet"]["prefix"], "0xfe80000000000000") << h.dump();
    EXPECT_EQ(h["ha"]["mode"], "lowest_guid");
  }

  // Only the active one sweeps: its MAD counter grows by whole sweeps, the standby's by its
  // local-port reads (one SMP per second) alone.
  ASSERT_TRUE(waitFor([&] { return active.sweepRuns() >= 2; }, 30s));
  ASSERT_TRUE(waitFor(
      [&] {
        const json h = active.health();
        return h.is_object() && h.contains("subnet") && h["subnet"]["sm_guid"].is_string();
      },
      30s));
  const auto t0 = Clock::now();
  const double sentActive0 = metricValue(active.metrics(), "ibfabric_mad_sent_total");
  const double sentStandby0 =
      std::max(0.0, metricValue(standby.metrics(), "ibfabric_mad_sent_total"));
  const int runs0 = active.sweepRuns();
  ASSERT_TRUE(waitFor([&] { return active.sweepRuns() >= runs0 + 3; }, 30s));
  const std::string standbyPage = standby.metrics();
  const double sentActive1 = metricValue(active.metrics(), "ibfabric_mad_sent_total");
  const double sentStandby1 = std::max(0.0, metricValue(standbyPage, "ibfabric_mad_sent_total"));
  const double window = seconds(Clock::now() - t0);
  json sh = standby.health();
  EXPECT_EQ(sh["sweep"].value("runs", -1), 0) << "a standby sends no counter sweeps";
  EXPECT_EQ(sh["status"], "standby");
  EXPECT_GT(sentActive1 - sentActive0, 3 * 10.0) << "three sweeps of 12 switch ports at least";
  EXPECT_LE(sentStandby1 - sentStandby0, 2 * window + 4) << "local-port reads only";
  std::printf("[ha] MADs sent in %.1f s: active %.0f, standby %.0f\n", window,
              sentActive1 - sentActive0, sentStandby1 - sentStandby0);
  EXPECT_NE(standbyPage.find("ibfabric_ha_active 0\n"), std::string::npos);
  EXPECT_NE(standbyPage.find("ibfabric_ha_info{mode=\"lowest_guid\",role=\"standby\"} 1"),
            std::string::npos);
  EXPECT_NE(standbyPage.find("ibfabric_subnet_info{subnet=\"plane-a\",subnet_prefix="
                             "\"0xfe80000000000000\",sm_guid=\"0x"),
            std::string::npos);
  EXPECT_NE(active.metrics().find("ibfabric_ha_active 1\n"), std::string::npos);
  // A standby's reads come with the snapshot's age.
  auto topo = standby.http->client.Get("/api/v1/topology");
  ASSERT_TRUE(topo);
  EXPECT_EQ(topo->status, 200);
  EXPECT_EQ(topo->get_header_value("X-Ibfabric-Role"), "standby");
  EXPECT_FALSE(topo->get_header_value("X-Ibfabric-Snapshot-Age").empty());
  EXPECT_EQ(json::parse(topo->body)["subnet"]["name"], "plane-a");

  // kill -9 of the active one; the standby's REST answers all along.
  std::atomic<bool> polling{true};
  std::atomic<int> answered{0}, unanswered{0};
  std::thread poller([&] {
    JsonClient c(standby.port, 2);
    while (polling) {
      (c.get("/api/v1/health").first > 0 ? answered : unanswered)++;
      std::this_thread::sleep_for(50ms);
    }
  });
  const pid_t victim = active.process->daemonPid();
  const auto killedAt = Clock::now();
  const bool killed = victim > 0 && ::kill(victim, SIGKILL) == 0;
  bool tookOver = killed && waitFor([&] { return standby.role() == "active"; }, 20s);
  const double roleSeconds = seconds(Clock::now() - killedAt);
  const int runsBefore = sh["sweep"].value("runs", 0);
  bool swept = tookOver && waitFor([&] { return standby.sweepRuns() > runsBefore; }, 20s);
  const double sweepSeconds = seconds(Clock::now() - killedAt);
  polling = false;
  poller.join();
  active.process->signalAndWait(SIGKILL, 10s);
  ASSERT_TRUE(killed) << "the active daemon's pid " << victim;
  ASSERT_TRUE(tookOver) << standby.process->log();
  ASSERT_TRUE(swept) << standby.process->log();
  std::printf(
      "[ha] kill -9 of the active: standby active after %.2f s, first sweep done after "
      "%.2f s (sweep interval %.1f s)\n",
      roleSeconds, sweepSeconds, kSweepSeconds);
  EXPECT_LT(sweepSeconds, 2 * kSweepSeconds) << "takeover within two sweep intervals";
  EXPECT_GT(answered, 0);
  EXPECT_EQ(unanswered, 0) << "the survivor's REST API answered throughout";
  // /metrics renders off the request path: wait for the new state's page.
  const std::string page = metricsWith(
      standby.http->client,
      {"ibfabric_ha_active 1\n", "ibfabric_ha_peer_live{peer=\"" + active.url() + "\"} 0"}, 10s);
  EXPECT_NE(page.find("ibfabric_ha_active 1\n"), std::string::npos);
  EXPECT_GE(standby.health()["ha"].value("role_changes", 0), 1);
  EXPECT_NE(page.find("ibfabric_ha_peer_live{peer=\"" + active.url() + "\"} 0"), std::string::npos);
}

TEST_F(HaStandby, FollowSmTheActiveRoleMovesWithTheSubnetManager) {
  startFabric();
  // `sim up` runs OpenSM beside the first HCA of the file (hahost1-1).
  startPair("hahost1-1", "hahost2-1", "follow_sm");
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_TRUE(waitFor([&] { return a_.role() == "active" && b_.role() == "standby"; }, 60s))
      << a_.health().dump() << b_.health().dump();
  ASSERT_TRUE(waitFor([&] { return a_.sweepRuns() >= 1; }, 30s));
  json before = b_.health();
  EXPECT_EQ(before["sweep"].value("runs", -1), 0);
  const int oldSmLid = before["subnet"].value("sm_lid", 0);
  const int lidB = before["subnet"].value("local_lid", 0);
  ASSERT_GT(lidB, 0);
  ASSERT_NE(oldSmLid, lidB);

  // The SM fails over: the first OpenSM stops, another starts beside B's HCA.
  const pid_t sm1 = processNamed(*fabric_, "opensm");
  ASSERT_GT(sm1, 0);
  ASSERT_EQ(::kill(sm1, SIGTERM), 0);
  ASSERT_TRUE(waitFor([&] { return ::kill(sm1, 0) != 0; }, 30s)) << "OpenSM did not stop";
  const auto dir = scratchDir() / ("osm2-" + fabric_->name());
  std::filesystem::create_directories(dir / "tmp");
  std::filesystem::create_directories(dir / "cache");
  const auto conf = writeScratchFile("osm2-" + fabric_->name() + ".conf",
                                     "routing_engine ftree\nforce_log_flush TRUE\nlog_file " +
                                         (dir / "opensm.log").string() + "\n");
  const auto smStart = Clock::now();
  // Not through `ibfabric sim run`: with the fabric's own OpenSM gone it reports the fabric down.
  sm2_ = std::make_unique<BackgroundProcess>(
      std::vector<std::string>{
          "/usr/bin/env", "IBSIM_SOCKNAME=" + sim::socketNameFor(fabric_->name()),
          "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so", "SIM_HOST=hahost2-1",
          "OSM_TMP_DIR=" + (dir / "tmp").string(), "OSM_CACHE_DIR=" + (dir / "cache").string(),
          "/usr/sbin/opensm", "-F", conf.string()},
      dir / "opensm.out", dir);
  std::optional<Clock::time_point> smMoved;
  const bool moved = waitFor(
      [&] {
        const json h = b_.health();
        if (!smMoved && h.is_object() && h.contains("subnet") &&
            h["subnet"].value("sm_lid", 0) == lidB)
          smMoved = Clock::now();
        return h.is_object() && h.value("role", "") == "active" && a_.role() == "standby";
      },
      120s);
  const auto movedAt = Clock::now();
  ASSERT_TRUE(moved) << a_.health().dump() << b_.health().dump() << sm2_->log();
  std::printf(
      "[ha] follow_sm: OpenSM started beside B; B's port names it master after %.2f s, "
      "B active and A standby after %.2f s (%.2f s after the SM LID moved)\n",
      smMoved ? seconds(*smMoved - smStart) : -1.0, seconds(movedAt - smStart),
      smMoved ? seconds(movedAt - *smMoved) : -1.0);
  if (smMoved) {
    EXPECT_LT(seconds(movedAt - *smMoved), 2 * kSweepSeconds);
  }
  ASSERT_TRUE(waitFor([&] { return b_.sweepRuns() >= 1; }, 30s));
  EXPECT_GE(b_.health()["ha"].value("role_changes", 0), 1);
}

}  // namespace
}  // namespace ibfabric::testing
