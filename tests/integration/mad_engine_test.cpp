// Integration tests of the MAD engine on a real ibsim fabric through umad2sim.
//
// The engine needs umad2sim preloaded, so the checks run in a child: this binary re-executed
// through `ibfabric sim run` with a DISABLED_ child test selected explicitly. The parent passes
// its wishes in IBFABRIC_MAD_CHILD_* environment variables (the child inherits them) and parses
// the child's "SWITCH"/"PCE"/"PC"/"STATS" lines.
#include <gtest/gtest.h>
#include <infiniband/ibnetdisc.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "telemetry/clock.h"
#include "telemetry/mad_engine.h"
#include "telemetry/pma_attributes.h"
#include "telemetry/umad_transport.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using namespace std::chrono_literals;
using namespace ibfabric::mad;

constexpr const char* kChildFilter = "--gtest_filter=MadEngineSimChild.DISABLED_Sweep";
constexpr const char* kHost = "mhost1-1";

std::string env(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

// ---- The child: runs attached to the fabric ---------------------------------------------------

struct SwitchTarget {
  std::uint16_t lid = 0;
  int ports = 0;
  std::string desc;
};

std::vector<SwitchTarget> discoverSwitches() {
  ibnd_config_t cfg{};
  cfg.max_smps = 4;
  cfg.timeout_ms = 1000;
  cfg.retries = 3;
  std::vector<SwitchTarget> out;
  ibnd_fabric_t* fabric = ibnd_discover_fabric(nullptr, 0, nullptr, &cfg);
  if (!fabric) return out;
  for (ibnd_node_t* n = fabric->switches; n; n = n->type_next) {
    out.push_back({n->smalid, n->numports, n->nodedesc});
  }
  ibnd_destroy_fabric(fabric);
  return out;
}

// Discovers the switches (or reads IBFABRIC_MAD_CHILD_TARGETS if it exists, else writes it), then
// sweeps PortCountersExtended and PortCounters over every switch port in one batch.
TEST(MadEngineSimChild, DISABLED_Sweep) {
  const std::string targetsFile = env("IBFABRIC_MAD_CHILD_TARGETS");
  std::vector<SwitchTarget> switches;
  if (!targetsFile.empty() && std::ifstream(targetsFile).good()) {
    std::ifstream in(targetsFile);
    SwitchTarget t;
    while (in >> t.lid >> t.ports >> t.desc) switches.push_back(t);
  } else {
    switches = discoverSwitches();
    if (!targetsFile.empty()) {
      std::ofstream out(targetsFile);
      for (const auto& s : switches) out << s.lid << ' ' << s.ports << ' ' << s.desc << '\n';
    }
  }
  ASSERT_FALSE(switches.empty());
  for (const auto& s : switches) std::printf("SWITCH %u %d %s\n", s.lid, s.ports, s.desc.c_str());

  UmadTransport transport(UmadTransport::Options{});
  std::string error;
  ASSERT_TRUE(transport.open(error)) << error;
  SteadyClock clock;
  MadEngineOptions o;
  o.window = std::stoi(env("IBFABRIC_MAD_CHILD_WINDOW", "16"));
  o.retries = std::stoi(env("IBFABRIC_MAD_CHILD_RETRIES", "3"));
  o.timeout = 200ms;
  o.batchWatchdog = 60s;
  std::vector<MadRequest> requests;
  for (const auto& s : switches) {
    for (int p = 1; p <= s.ports; ++p) {
      const auto port = static_cast<std::uint8_t>(p);
      requests.push_back({pmaAddress(Lid(s.lid)), buildPortCountersExtendedGet(port), nullptr});
      requests.push_back({pmaAddress(Lid(s.lid)), buildPortCountersGet(port), nullptr});
    }
  }
  std::vector<MadResult> results;
  MadEngineStats stats;
  {
    MadEngine engine(transport, clock, o);
    results = engine.run(requests);
    stats = engine.stats();
  }
  std::size_t ok = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok() || madStatus(results[i].reply) != 0) continue;
    ++ok;
    const unsigned lid = requests[i].to.lid.value();
    if (i % 2 == 0) {
      const auto c = decodePortCountersExtended(results[i].reply);
      std::printf("PCE %u %u %llu %llu %llu %llu\n", lid, c.portSelect,
                  static_cast<unsigned long long>(c.portXmitData),
                  static_cast<unsigned long long>(c.portRcvData),
                  static_cast<unsigned long long>(c.portXmitPkts),
                  static_cast<unsigned long long>(c.portRcvPkts));
    } else {
      const auto c = decodePortCounters(results[i].reply);
      std::printf("PC %u %u %u %u\n", lid, c.portSelect, c.symbolErrorCounter, c.linkDownedCounter);
    }
  }
  std::printf("STATS %zu %zu %llu %llu %llu %llu %llu\n", ok, results.size(),
              static_cast<unsigned long long>(stats.lostReported),
              static_cast<unsigned long long>(stats.timeouts),
              static_cast<unsigned long long>(stats.retries),
              static_cast<unsigned long long>(stats.failed),
              static_cast<unsigned long long>(stats.maxInFlight));
  std::fflush(stdout);
}

// ---- The parent ------------------------------------------------------------------------------

struct Sweep {
  std::map<std::string, std::uint16_t> lidOf;  // switch description -> LID
  std::map<std::pair<unsigned, unsigned>, std::array<std::uint64_t, 4>> pce;
  std::map<std::pair<unsigned, unsigned>, std::array<std::uint64_t, 2>> pc;
  std::uint64_t ok = 0, total = 0, lost = 0, timeouts = 0, retries = 0, failed = 0, maxInFlight = 0;
};

Sweep parseSweep(const std::string& out) {
  Sweep s;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string kind;
    l >> kind;
    if (kind == "SWITCH") {
      unsigned lid;
      int ports;
      std::string desc;
      l >> lid >> ports >> desc;
      s.lidOf[desc] = static_cast<std::uint16_t>(lid);
    } else if (kind == "PCE") {
      unsigned lid, port;
      std::array<std::uint64_t, 4> v{};
      l >> lid >> port >> v[0] >> v[1] >> v[2] >> v[3];
      s.pce[{lid, port}] = v;
    } else if (kind == "PC") {
      unsigned lid, port;
      std::array<std::uint64_t, 2> v{};
      l >> lid >> port >> v[0] >> v[1];
      s.pc[{lid, port}] = v;
    } else if (kind == "STATS") {
      l >> s.ok >> s.total >> s.lost >> s.timeouts >> s.retries >> s.failed >> s.maxInFlight;
    }
  }
  return s;
}

/// "PortXmitData:....................123" lines of perfquery into name -> value.
std::map<std::string, std::uint64_t> parsePerfquery(const std::string& out) {
  std::map<std::string, std::uint64_t> m;
  static const std::regex re(R"(^(\w+):\.*(\d+)\s*$)");
  std::istringstream in(out);
  std::string line;
  std::smatch match;
  while (std::getline(in, line)) {
    if (std::regex_match(line, match, re)) m[match[1]] = std::stoull(match[2]);
  }
  return m;
}

class MadEngineSimTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Two-level fat tree: 4 spines, 8 leaves, 2 hosts per leaf (12 switches, 80 switch ports).
    const auto file = writeScratchFile("mad-engine-fabric.net", fatTreeText("m", 4, 8, 2));
    fabric_ = std::make_unique<SimFabric>(file, "madeng");
  }
  static void TearDownTestSuite() { fabric_.reset(); }

  Sweep sweep(const std::string& targets = "", int retries = 3) {
    ::setenv("IBFABRIC_MAD_CHILD_TARGETS", targets.c_str(), 1);
    ::setenv("IBFABRIC_MAD_CHILD_RETRIES", std::to_string(retries).c_str(), 1);
    const auto r = fabric_->run({std::filesystem::read_symlink("/proc/self/exe").string(),
                                 kChildFilter, "--gtest_also_run_disabled_tests"},
                                180s, kHost);
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    return parseSweep(r.out);
  }

  static std::unique_ptr<SimFabric> fabric_;
};

std::unique_ptr<SimFabric> MadEngineSimTest::fabric_;

TEST_F(MadEngineSimTest, SweepOfEverySwitchPortMatchesPerfquery) {
  // Distinctive values on sample ports, beyond 32 bits where the counter allows it.
  const std::vector<std::tuple<std::string, unsigned, std::string>> sets{
      {"mleaf3", 2, "PortCountersExtended.PortXmitData=123456789012"},
      {"mspine2", 5, "PortCountersExtended.PortRcvData=98765432109"},
      {"mleaf5", 6, "PortCountersExtended.PortXmitPkts=7777777777"},
      {"mleaf6", 1, "PortCounters.SymbolErrorCounter=7"},
  };
  for (const auto& [node, port, what] : sets) {
    const auto r =
        fabric_->cmd("PerformanceSet \"" + node + "\"[" + std::to_string(port) + "] " + what);
    ASSERT_EQ(r.exitCode, 0) << r.describe();
  }

  const Sweep before = sweep();
  ASSERT_EQ(before.lidOf.size(), 12u);
  EXPECT_EQ(before.total, 2u * 80u);
  EXPECT_EQ(before.ok, before.total);
  EXPECT_EQ(before.pce.size(), 80u);
  EXPECT_EQ(before.failed, 0u);

  // perfquery on the sample ports, then a second sweep: data counters move with management
  // traffic, so perfquery's value must lie between the two sweeps (equal when nothing moved).
  std::map<std::pair<unsigned, unsigned>, std::map<std::string, std::uint64_t>> pq, pqBasic;
  for (const auto& [node, port, what] : sets) {
    ASSERT_TRUE(before.lidOf.contains(node)) << node;
    const unsigned lid = before.lidOf.at(node);
    const auto x =
        fabric_->run({"perfquery", "-x", std::to_string(lid), std::to_string(port)}, 60s, kHost);
    ASSERT_EQ(x.exitCode, 0) << x.describe();
    pq[{lid, port}] = parsePerfquery(x.out);
    const auto b =
        fabric_->run({"perfquery", std::to_string(lid), std::to_string(port)}, 60s, kHost);
    ASSERT_EQ(b.exitCode, 0) << b.describe();
    pqBasic[{lid, port}] = parsePerfquery(b.out);
  }
  const Sweep after = sweep();
  ASSERT_EQ(after.ok, after.total);

  const char* names[4] = {"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"};
  for (const auto& [key, fields] : pq) {
    for (int i = 0; i < 4; ++i) {
      ASSERT_TRUE(fields.contains(names[i])) << names[i];
      const std::uint64_t v = fields.at(names[i]);
      EXPECT_LE(before.pce.at(key)[i], v)
          << names[i] << " lid " << key.first << " port " << key.second;
      EXPECT_LE(v, after.pce.at(key)[i])
          << names[i] << " lid " << key.first << " port " << key.second;
    }
    EXPECT_EQ(after.pc.at(key)[0], pqBasic.at(key).at("SymbolErrorCounter"));
  }
  const auto leaf3 = std::make_pair(unsigned{before.lidOf.at("mleaf3")}, 2u);
  EXPECT_GE(before.pce.at(leaf3)[0], 123456789012ULL);
  EXPECT_LT(before.pce.at(leaf3)[0], 123456789012ULL + 100000);
  const auto spine2 = std::make_pair(unsigned{before.lidOf.at("mspine2")}, 5u);
  EXPECT_GE(before.pce.at(spine2)[1], 98765432109ULL);
  const auto leaf6 = std::make_pair(unsigned{before.lidOf.at("mleaf6")}, 1u);
  EXPECT_EQ(before.pc.at(leaf6)[0], 7u);
}

TEST_F(MadEngineSimTest, DroppedMadsAreRetriedAndTheBatchCompletes) {
  // Discover while the fabric is clean, then drop 20% of the MADs on the client's own link.
  const auto targets = writeScratchFile("mad-engine-targets.txt", "");
  std::filesystem::remove(targets);
  const Sweep clean = sweep(targets.string());
  ASSERT_EQ(clean.ok, clean.total);
  ASSERT_TRUE(fabric_->cmd(R"(Error "mleaf1"[1] 20)").exitCode == 0);
  const Sweep lossy = sweep(targets.string(), 10);
  fabric_->cmd(R"(Error "mleaf1"[1] 0)");
  EXPECT_EQ(lossy.total, 2u * 80u);
  EXPECT_EQ(lossy.ok, lossy.total);
  EXPECT_GT(lossy.lost + lossy.timeouts, 0u);
  EXPECT_GT(lossy.retries, 0u);
  EXPECT_EQ(lossy.failed, 0u);
}

}  // namespace
}  // namespace ibfabric::testing
