// ibfabricd on a real ibsim + OpenSM fabric, over real HTTP: it starts under `ibfabric sim run`
// with --listen 127.0.0.1:0, becomes ready, serves topology / links / ports / metrics with the
// right statuses, reports an Unlinked cable through a long-polled /events, and stops within a
// second of SIGTERM. Also --check-config. No fixed sleeps: every wait is bounded.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/rest_get.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

extern char** environ;

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using Daemon = DaemonProcess;

json getDoc(httplib::Client& c, const std::string& path, int expected) {
  auto res = c.Get(path.c_str());
  EXPECT_TRUE(res) << path;
  if (!res) return {};
  EXPECT_EQ(res->status, expected) << path << ": " << res->body;
  json j = json::parse(res->body, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << path << ": " << res->body;
  if (expected >= 400 && path != "/api/v1/health") {
    EXPECT_EQ(j["error"]["code"], expected) << res->body;
  }
  return j;
}

TEST(DaemonSim, ServesTheFabricReportsUnlinksAndStopsOnSigterm) {
  auto net = writeScratchFile("daemon.net", fatTreeText("d", 2, 2, 2));
  SimFabric fabric(net, "daemon");
  auto config = writeScratchFile("daemon.yaml", "sweep_interval: 0.5\nlog_level: debug\n");
  Daemon daemon(
      fabric, {"--config", config.string(), "--listen", "127.0.0.1:0", "--crawl-interval", "0.5"});
  const int port = daemon.waitForPort(60s);
  ASSERT_GT(port, 0) << daemon.log();
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30, 0);

  ASSERT_TRUE(waitFor(
      [&] {
        auto res = c.Get("/api/v1/health");
        return res && res->status == 200;
      },
      60s, 100ms))
      << daemon.log();
  auto health = getDoc(c, "/api/v1/health", 200);
  EXPECT_EQ(health["ready"], true);
  EXPECT_EQ(health["crawl"]["failures"], 0) << health.dump();

  auto topo = getDoc(c, "/api/v1/topology", 200);
  EXPECT_EQ(topo["switches"], 4);
  EXPECT_EQ(topo["cas"], 4);
  EXPECT_EQ(topo["links"], 8);
  EXPECT_EQ(getDoc(c, "/api/v1/topology/full", 200)["schema"], "ibfabric.topology/1");
  auto links = getDoc(c, "/api/v1/links?state=active", 200);
  EXPECT_EQ(links["count"], 8);
  getDoc(c, "/api/v1/links?state=sideways", 400);
  getDoc(c, "/api/v1/nodes/not-a-guid", 400);
  getDoc(c, "/api/v1/nodes/0x00000000deadbeef", 404);

  // A CA port: counters read through the daemon's long-lived umad port.
  auto nodes = getDoc(c, "/api/v1/nodes", 200)["nodes"];
  std::string caGuid, victim;
  for (const auto& n : nodes)
    if (n["type"] == "ca" && n["description"] == "dhost1-1") caGuid = n["guid"];
  ASSERT_FALSE(caGuid.empty()) << nodes.dump();
  ASSERT_TRUE(waitFor(
      [&] {
        auto p = getDoc(c, "/api/v1/ports/" + caGuid + "/1", 200);
        return p["sample"].is_object() && p["sample"]["status"] == "ok" && p["rates"].is_object();
      },
      30s, 100ms));
  getDoc(c, "/api/v1/ports/" + caGuid + "/9", 404);

  const std::vector<std::string> want = {"ibfabric_port_transmit_bytes_total{",
                                         "ibfabric_collector_success{collector=\"crawl\"} 1"};
  const std::string metrics = metricsWith(c, want);
  for (const auto& w : want) EXPECT_NE(metrics.find(w), std::string::npos) << w;
  if (::access("/usr/bin/promtool", X_OK) == 0) {
    auto file = writeScratchFile("daemon.metrics", metrics);
    auto check = runProcess({"sh", "-c", "promtool check metrics < " + file.string()}, 60s);
    EXPECT_EQ(check.exitCode, 0) << check.describe();
  }

  // Writes: refused without a configured token; SIGHUP loads one.
  auto discover = [&](const std::string& token) {
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    auto res = c.Post("/api/v1/discover", h, "", "application/json");
    return res ? res->status : -1;
  };
  EXPECT_EQ(discover("s3cret"), 403);
  writeScratchFile("daemon.yaml", "sweep_interval: 0.5\nlog_level: debug\napi_token: s3cret\n");
  ASSERT_EQ(daemon.signal(SIGHUP), 0);
  ASSERT_TRUE(waitFor([&] { return discover("s3cret") == 202; }, 10s)) << daemon.log();
  EXPECT_EQ(discover(""), 401);
  EXPECT_EQ(discover("wrong"), 403);

  // Concurrent readers during sweeps: no errors; requests/s and p99 recorded.
  {
    constexpr int kClients = 8;
    const auto until = Clock::now() + 3s;
    std::vector<std::vector<double>> latencies(kClients);
    std::atomic<int> errors{0};
    std::vector<std::thread> clients;
    for (int i = 0; i < kClients; ++i) {
      clients.emplace_back([&, i] {
        httplib::Client lc("127.0.0.1", port);
        lc.set_read_timeout(10, 0);
        const char* paths[] = {"/api/v1/links", "/api/v1/health", "/metrics", "/api/v1/topology"};
        for (int n = 0; Clock::now() < until; ++n) {
          const auto t = Clock::now();
          auto res = lc.Get(paths[(n + i) % 4]);
          if (!res || res->status != 200) ++errors;
          latencies[i].push_back(std::chrono::duration<double>(Clock::now() - t).count());
        }
      });
    }
    for (auto& t : clients) t.join();
    std::vector<double> all;
    for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
    std::sort(all.begin(), all.end());
    ASSERT_FALSE(all.empty());
    EXPECT_EQ(errors.load(), 0);
    const double p99 = all[all.size() * 99 / 100];
    RecordProperty("requests_per_second", std::to_string(all.size() / 3.0));
    RecordProperty("p99_ms", std::to_string(p99 * 1000));
    std::printf("load: %d clients, %.0f requests/s, p99 %.2f ms\n", kClients, all.size() / 3.0,
                p99 * 1000);
  }

  // Unlink a cable (not the daemon's own HCA) and follow it with a long-poll.
  const std::uint64_t last = getDoc(c, "/api/v1/events", 200)["last_id"];
  auto poll = std::async(std::launch::async, [&] {
    httplib::Client pc("127.0.0.1", port);
    pc.set_read_timeout(60, 0);
    auto res =
        pc.Get(("/api/v1/events?type=link_down&wait=30&since=" + std::to_string(last)).c_str());
    return res ? json::parse(res->body, nullptr, false) : json();
  });
  auto r = fabric.cmd(R"(Unlink "dhost1-1"[1])");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  ASSERT_EQ(poll.wait_for(40s), std::future_status::ready);
  auto events = poll.get();
  ASSERT_TRUE(events.is_object()) << daemon.log();
  ASSERT_FALSE(events["events"].empty()) << events.dump();
  bool seen = false;
  for (const auto& e : events["events"])
    seen = seen || e["node"] == "dhost1-1" || e["remote"].value("node", "") == "dhost1-1";
  EXPECT_TRUE(seen) << events.dump();
  ASSERT_TRUE(waitFor(
      [&] {
        const json t = getDoc(c, "/api/v1/topology", 200);
        return t["links_by_state"].value("active", 0) == 7 && t["missing"]["links"] == 1;
      },
      30s));

  // A long-poll in progress must not hold up shutdown.
  auto hanging = std::async(std::launch::async, [&] {
    httplib::Client pc("127.0.0.1", port);
    pc.set_read_timeout(60, 0);
    return pc.Get("/api/v1/events?wait=60&since=1000000") != nullptr;
  });
  const auto t0 = Clock::now();
  const int status = daemon.signalAndWait(SIGTERM, 5s);
  const auto took = Clock::now() - t0;
  ASSERT_NE(status, -1) << "the daemon did not stop within 5 s\n" << daemon.log();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << "\n" << daemon.log();
  EXPECT_LT(took, 1500ms) << daemon.log();
  hanging.wait_for(5s);
  const std::string log = daemon.log();
  EXPECT_EQ(log.find("Failed to register"), std::string::npos) << log;
}

TEST(DaemonCli, CheckConfig) {
  auto good = writeScratchFile("good.yaml", "listen: \"127.0.0.1:0\"\nsweep_interval: 5\n");
  auto r = runProcess({IBFABRIC_DAEMON_PATH, "--config", good.string(), "--check-config"});
  EXPECT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_NE(r.out.find("configuration ok"), std::string::npos) << r.describe();
  auto bad = writeScratchFile("bad.yaml", "sweep_interval: 0\n");
  r = runProcess({IBFABRIC_DAEMON_PATH, "--config", bad.string(), "--check-config"});
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  EXPECT_NE(r.err.find("sweep_interval"), std::string::npos) << r.describe();
  // Flags override the file and are validated too.
  r = runProcess(
      {IBFABRIC_DAEMON_PATH, "--config", good.string(), "--listen", "nonsense", "--check-config"});
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  r = runProcess({IBFABRIC_DAEMON_PATH, "--config",
                  (std::string(IBFABRIC_SOURCE_DIR) + "/packaging/ibfabricd.yaml"),
                  "--check-config"});
  EXPECT_EQ(r.exitCode, 0) << r.describe();
}

}  // namespace
}  // namespace ibfabric::testing
