// Placement on a real ibsim + OpenSM (ftree) fabric through `ibfabric place` (crawl, LFTs read
// from the switches, two counter sweeps): an idle fabric fills the first leaves; with leaf-01's
// up-links made hot (PerformanceSet raising PortXmitData while the sweeps run) a two-leaf job
// avoids leaf-01; an HCA Unlinked in ibsim is never chosen and asking for every host is
// unsatisfiable (exit 3, the reason on stderr). The daemon's POST /api/v1/placement moves a job
// off leaf-01 once its sweeps see the hot up-links.
//
// Fabric: two-level, 3 leaves x 3 hosts, 2 spines (dgx0001-0003 on leaf-01, ...). OpenSM runs
// on dgx0001, `sim run` clients on dgx0009.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "discovery/netfile.h"
#include "discovery/topogen.h"
#include "tests/support/daemon_process.h"
#include "tests/support/scope_exit.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class PlacementSim : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    TopoOptions o;
    o.leaves = 3;
    o.spines = 2;
    o.hostsPerLeaf = 3;
    net_ = generateTopology("two-level", o).fabric;
    auto path = writeScratchFile("placement.net", formatNetFile(net_));
    fabric_ = std::make_unique<SimFabric>(path, "placement");
  }
  static void TearDownTestSuite() { fabric_.reset(); }

  /// `ibfabric place` reading the counters `interval` seconds apart.
  static ProcessResult place(const std::vector<std::string>& extra, const char* interval = "1") {
    std::vector<std::string> argv = {IBFABRIC_CLI_PATH, "place", "--interval", interval};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return fabric_->run(argv, 180s);
  }
  static json placeJson(const std::vector<std::string>& extra) {
    std::vector<std::string> args = extra;
    args.insert(args.end(), {"--format", "json"});
    auto r = place(args);
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.describe();
    return j;
  }
  static std::set<std::string> hostsOf(const json& answer) {
    std::set<std::string> out;
    if (!answer.contains("options") || answer["options"].empty()) return out;
    for (const auto& h : answer["options"][0]["hosts"]) out.insert(h.get<std::string>());
    return out;
  }
  /// Ports of `leaf` cabled to a spine.
  static std::vector<int> upPorts(const std::string& leaf) {
    std::vector<int> out;
    for (const auto& n : net_.nodes) {
      if (n.id != leaf) continue;
      for (const auto& p : n.ports) {
        if (p.remoteId.rfind("spine", 0) == 0) out.push_back(p.port.value());
      }
    }
    return out;
  }

  static NetFabric net_;
  static std::unique_ptr<SimFabric> fabric_;
};
NetFabric PlacementSim::net_;
std::unique_ptr<SimFabric> PlacementSim::fabric_;

TEST_F(PlacementSim, IdleFabricThenHotUplinksAreAvoided) {
  // Idle: two of the first leaves (3 + 1 hosts; which hosts depends on the little management
  // traffic on the HCA links, e.g. OpenSM's on dgx0001), including leaf-01.
  json idle = placeJson({"--hosts", "4"});
  auto idleHosts = hostsOf(idle);
  ASSERT_EQ(idleHosts.size(), 4u) << idle.dump();
  EXPECT_TRUE(idleHosts.count("dgx0001") || idleHosts.count("dgx0002") ||
              idleHosts.count("dgx0003"))
      << idle.dump();
  EXPECT_EQ(idle["options"][0]["score"]["leaf_switches"], 2) << idle.dump();
  EXPECT_EQ(idle["options"][0]["score"]["max_hops"], 3) << idle.dump();

  // leaf-01's up-links transmit at ~90% of 4x HDR (25 GB/s = 6.25e9 4-octet units/s) for as
  // long as the command runs: the counters rise with wall time, whatever the sweep interval.
  const auto ports = upPorts("leaf-01");
  ASSERT_EQ(ports.size(), 2u);
  std::atomic<bool> done{false};
  // Read 3 s apart: a turn of the loop below (two ibsim commands, each a process) must fall
  // between the two reads even on a loaded machine (1 s apart, under ASan with another test
  // beside it, both reads fell inside one turn: 0% used).
  auto job = std::async(std::launch::async, [&] {
    auto r = place({"--hosts", "4", "--format", "json"}, "3");
    done = true;
    return r;
  });
  const auto start = Clock::now();
  const double unitsPerSecond = 0.9 * 25e9 / 4;
  while (!done) {
    const double t = std::chrono::duration<double>(Clock::now() - start).count();
    const auto value = static_cast<std::uint64_t>(1e9 + unitsPerSecond * t);
    for (int p : ports) {
      auto r = fabric_->cmd("PerformanceSet \"leaf-01\"[" + std::to_string(p) +
                            "] PortCountersExtended.PortXmitData=" + std::to_string(value));
      ASSERT_EQ(r.exitCode, 0) << r.describe();
    }
  }
  auto r = job.get();
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  json hot = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(hot.is_discarded()) << r.describe();
  auto chosen = hostsOf(hot);
  ASSERT_EQ(chosen.size(), 4u) << hot.dump();
  for (const char* h : {"dgx0001", "dgx0002", "dgx0003"}) {
    EXPECT_FALSE(chosen.count(h)) << h << " is under the hot leaf: " << hot.dump();
  }
  EXPECT_EQ(hot["options"][0]["score"]["leaf_switches"], 2) << hot.dump();
}

TEST_F(PlacementSim, DaemonPostAvoidsHotUplinks) {
  auto config = writeScratchFile("placement.yaml", "sweep_interval: 0.5\n");
  DaemonProcess daemon(
      *fabric_, {"--config", config.string(), "--listen", "127.0.0.1:0", "--crawl-interval", "5"});
  const int port = daemon.waitForPort(60s);
  ASSERT_GT(port, 0) << daemon.log();
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30, 0);
  json answer;
  auto post = [&](const std::string& body) {
    auto res = c.Post("/api/v1/placement", body, "application/json");
    if (!res) return -1;
    answer = json::parse(res->body, nullptr, false);
    return res->status;
  };
  // Ready once a crawl, a sweep and the LFT read are done (503 until then).
  ASSERT_TRUE(waitFor([&] { return post(R"({"hosts": 4})") == 200; }, 90s, 200ms))
      << answer.dump() << daemon.log();
  auto idle = hostsOf(answer);
  EXPECT_TRUE(idle.count("dgx0001") || idle.count("dgx0002") || idle.count("dgx0003"))
      << answer.dump();
  EXPECT_EQ(post(R"({"hosts": 10})"), 422);
  EXPECT_EQ(answer["error"]["reason"], "unsatisfiable") << answer.dump();
  EXPECT_EQ(post(R"({"hosts": "four"})"), 400);

  // Heat leaf-01's up-links (PortXmitData rising at ~90% of the link with wall time) until the
  // daemon's sweeps see it and a 4-host job leaves leaf-01 (bounded).
  const auto ports = upPorts("leaf-01");
  ASSERT_EQ(ports.size(), 2u);
  const auto start = Clock::now();
  const double unitsPerSecond = 0.9 * 25e9 / 4;
  auto heat = [&] {
    const double t = std::chrono::duration<double>(Clock::now() - start).count();
    const auto value = static_cast<std::uint64_t>(2e10 + unitsPerSecond * t);
    for (int p : ports) {
      fabric_->cmd("PerformanceSet \"leaf-01\"[" + std::to_string(p) +
                   "] PortCountersExtended.PortXmitData=" + std::to_string(value));
    }
  };
  // Heated from a thread of its own, as fast as ibsim takes the commands: between the posts a
  // loaded machine (ASan, another test beside it) left sweep intervals without a new value,
  // and the smoothed load stayed near 13%.
  std::atomic<bool> heating{true};
  std::thread heater([&] {
    while (heating) heat();
  });
  ScopeExit joinHeater([&] {
    heating = false;
    if (heater.joinable()) heater.join();
  });
  bool avoided = waitFor(
      [&] {
        if (post(R"({"hosts": 4})") != 200) return false;
        auto chosen = hostsOf(answer);
        return !chosen.count("dgx0001") && !chosen.count("dgx0002") && !chosen.count("dgx0003");
      },
      60s, 100ms);
  EXPECT_TRUE(avoided) << answer.dump();
  // The answer says why: forced onto leaf-01, the job would cross a hot link. (The load is
  // smoothed over sweeps: the job may avoid leaf-01 before its up-links read above 30%, so keep
  // heating until they do, bounded.)
  EXPECT_TRUE(waitFor(
      [&] {
        if (post(R"({"hosts": 4, "candidates": "dgx[0001-0004]"})") != 200) return false;
        const json& hot = answer["options"][0]["score"]["hottest_links"];
        return !hot.empty() && hot[0]["utilization"].get<double>() > 0.3;
      },
      60s, 100ms))
      << answer.dump();
  // The CLI asks the daemon: same answer shape, Slurm host list out; unsatisfiable is exit 3.
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  auto cli = runCli({"place", "--server", url, "--hosts", "2", "--candidates",
                     writeScratchFile("server-candidates.txt", "dgx0007 dgx0008\n").string(),
                     "--format", "hostlist"});
  EXPECT_EQ(cli.exitCode, 0) << cli.describe();
  EXPECT_EQ(cli.out, "dgx[0007-0008]\n") << cli.describe();
  cli = runCli({"place", "--server", url, "--hosts", "12"});
  EXPECT_EQ(cli.exitCode, 3) << cli.describe();
  EXPECT_NE(cli.err.find("(422): need 12 hosts"), std::string::npos) << cli.describe();
  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("ibfabric_placement_requests_total{result=\"ok\"}"),
            std::string::npos);
  EXPECT_EQ(WIFEXITED(daemon.signalAndWait(SIGTERM, 10s)), true) << daemon.log();
}

TEST_F(PlacementSim, UnlinkedHcaIsNeverChosen) {
  auto r = fabric_->cmd(R"(Unlink "dgx0005-mlx5_0"[1])");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  // Every host but the unlinked one: 8 of 9.
  json all = placeJson({"--hosts", "8"});
  auto chosen = hostsOf(all);
  EXPECT_EQ(chosen.size(), 8u) << all.dump();
  EXPECT_FALSE(chosen.count("dgx0005")) << all.dump();
  // All nine: unsatisfiable, exit 3, the numbers on stderr.
  auto nine = place({"--hosts", "9"});
  EXPECT_EQ(nine.exitCode, 3) << nine.describe();
  EXPECT_NE(nine.err.find("need 9 hosts, only 8 eligible"), std::string::npos) << nine.describe();
  // Named as a candidate, it is left out with a warning.
  auto list = writeScratchFile("candidates.txt", "dgx[0004-0006]\n");
  auto two = place({"--hosts", "2", "--candidates", list.string(), "--format", "hostlist"});
  EXPECT_EQ(two.exitCode, 0) << two.describe();
  EXPECT_EQ(two.out, "dgx[0004,0006]\n") << two.describe();
  EXPECT_NE(two.err.find("dgx0005"), std::string::npos) << two.describe();
  r = fabric_->cmd(R"(ReLink "dgx0005-mlx5_0"[1])");
  EXPECT_EQ(r.exitCode, 0) << r.describe();
}

}  // namespace
}  // namespace ibfabric::testing
