// Placement on a real ibsim + OpenSM (ftree) fabric through `ibfabric place` (crawl, LFTs read
// from the switches, two counter sweeps): an idle fabric fills the first leaves; with leaf-01's
// up-links made hot (PerformanceSet raising PortXmitData while the sweeps run) a two-leaf job
// avoids leaf-01; an HCA Unlinked in ibsim is never chosen and asking for every host is
// unsatisfiable (exit 3, the reason on stderr).
//
// Fabric: two-level, 3 leaves x 3 hosts, 2 spines (dgx0001-0003 on leaf-01, ...). OpenSM runs
// on dgx0001, `sim run` clients on dgx0009.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "discovery/netfile.h"
#include "discovery/topogen.h"
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

  static ProcessResult place(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {IBFABRIC_CLI_PATH, "place", "--interval", "1"};
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
  // Idle: the first leaves, 3 + 1 hosts; every ring neighbour pair but two shares a leaf.
  json idle = placeJson({"--hosts", "4"});
  ASSERT_EQ(hostsOf(idle).size(), 4u) << idle.dump();
  EXPECT_TRUE(hostsOf(idle).count("dgx0001")) << idle.dump();
  EXPECT_EQ(idle["options"][0]["score"]["leaf_switches"], 2) << idle.dump();
  EXPECT_EQ(idle["options"][0]["score"]["max_hops"], 3) << idle.dump();

  // leaf-01's up-links transmit at ~90% of 4x HDR (25 GB/s = 6.25e9 4-octet units/s) for as
  // long as the command runs: the counters rise with wall time, whatever the sweep interval.
  const auto ports = upPorts("leaf-01");
  ASSERT_EQ(ports.size(), 2u);
  std::atomic<bool> done{false};
  auto job = std::async(std::launch::async, [&] {
    auto r = place({"--hosts", "4", "--format", "json"});
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

TEST_F(PlacementSim, UnlinkedHcaIsNeverChosen) {
  auto r = fabric_->cmd(R"(Unlink "dgx0005-mlx5_0"[1])");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  // Every host but the unlinked one: 8 of 9.
  json all = placeJson({"--hosts", "8", "--format", "json"});
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
