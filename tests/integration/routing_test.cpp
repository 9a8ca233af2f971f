// Forwarding tables of a real ibsim fabric routed by OpenSM's ftree engine: `ibfabric routes`
// (LFTs read over umad, and from OpenSM's dump file) prints the same hops as `ibtracert`;
// validation finds the black hole an Unlinked spine cable leaves before the SM reroutes (the SM
// is told not to: sweep_on_trap FALSE, sweep_interval 0); ibfabricd serves /api/v1/routes,
// /routing/validation, /routing/balance and the routing metrics. Bounded waits only.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/rest_get.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

extern char** environ;

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// 2 spines, 4 leaves, 2 hosts each: "rleaf<l>" ports 1-2 hosts "rhost<l>-<h>", 3-4 spines.
std::filesystem::path fabricFile() {
  return writeScratchFile("routing.net", fatTreeText("r", 2, 4, 2));
}

SimFabric::Options noRerouteSm() {
  SimFabric::Options o;
  o.upArgs = {"--sm-option", "sweep_on_trap=FALSE", "--sm-option", "sweep_interval=0"};
  return o;
}

struct Hop {
  int out = 0, in = 0;
  std::string node;
  friend bool operator==(const Hop&, const Hop&) = default;
};

// "[1] -> switch port {0x...}[1] lid 2-2 "leaf0"" (ibtracert) and
// "[1] -> switch {0x...}[1] lid 2 "leaf0"" (ibfabric routes) alike.
std::vector<Hop> hops(const std::string& text) {
  static const std::regex re(R"re(^\[(\d+)\] -> .*\[(\d+)\] lid [0-9-]+ "([^"]*)"\s*$)re");
  std::vector<Hop> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, re)) out.push_back({std::stoi(m[1]), std::stoi(m[2]), m[3]});
  }
  return out;
}

std::string lidOf(const std::string& routesText, const std::string& prefix) {
  static const std::regex from(R"re(^From .* lid (\d+) ")re");
  static const std::regex to(R"(^To lid (\d+):)");
  std::istringstream in(routesText);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (prefix == "From" && std::regex_search(line, m, from)) return m[1];
    if (prefix == "To" && std::regex_search(line, m, to)) return m[1];
  }
  return "";
}

TEST(RoutingSim, RoutesEqualIbtracertFromSwitchesAndFromOpensmDump) {
  SimFabric fabric(fabricFile(), "routes", noRerouteSm());
  const auto dump = fabric.stateDir() / "dump" / "opensm-lfts.dump";
  ASSERT_TRUE(std::filesystem::exists(dump));
  const std::vector<std::pair<std::string, std::string>> pairs = {{"rhost1-1", "rhost4-2"},
                                                                  {"rhost2-2", "rhost3-1"},
                                                                  {"rhost4-1", "rhost1-2"},
                                                                  {"rhost3-1", "rhost3-2"},
                                                                  {"rhost1-2", "rspine2"}};
  for (const auto& [src, dst] : pairs) {
    auto ours = fabric.run({IBFABRIC_CLI_PATH, "routes", "--src", src, "--dst", dst}, 60s);
    ASSERT_EQ(ours.exitCode, 0) << ours.describe();
    const std::string srcLid = lidOf(ours.out, "From"), dstLid = lidOf(ours.out, "To");
    ASSERT_FALSE(srcLid.empty() || dstLid.empty()) << ours.out;
    auto real = fabric.run({"ibtracert", srcLid, dstLid}, 60s);
    ASSERT_EQ(real.exitCode, 0) << real.describe();
    const auto expected = hops(real.out);
    ASSERT_FALSE(expected.empty()) << real.out;
    EXPECT_EQ(hops(ours.out), expected) << src << " -> " << dst << "\nours:\n"
                                        << ours.out << "\nibtracert:\n"
                                        << real.out;
    auto fromDump = fabric.run(
        {IBFABRIC_CLI_PATH, "routes", "--lft-dump", dump.string(), "--src", src, "--dst", dst},
        60s);
    ASSERT_EQ(fromDump.exitCode, 0) << fromDump.describe();
    EXPECT_EQ(hops(fromDump.out), expected) << fromDump.out;
  }
  auto v =
      fabric.run({IBFABRIC_CLI_PATH, "routes", "--validate", "--balance", "--format", "json"}, 60s);
  ASSERT_EQ(v.exitCode, 0) << v.describe();
  auto j = json::parse(v.out);
  EXPECT_EQ(j["switches_with_tables"], 6);
  EXPECT_EQ(j["validation"]["pairs_checked"], 8 * 7);
  EXPECT_EQ(j["validation"]["pairs_ok"], 8 * 7);
  ASSERT_EQ(j["balance"]["leaves"].size(), 4u);
  EXPECT_DOUBLE_EQ(j["balance"]["max_imbalance"].get<double>(), 1.0);  // ftree: 3 + 3
}

TEST(RoutingSim, ValidationFindsTheBlackHoleOfAnUnlinkedSpineCableBeforeTheSmReroutes) {
  SimFabric fabric(fabricFile(), "blackhole", noRerouteSm());
  auto before = fabric.run({IBFABRIC_CLI_PATH, "routes", "--validate"}, 60s);
  ASSERT_EQ(before.exitCode, 0) << before.describe();
  const auto lftsBefore =
      std::filesystem::last_write_time(fabric.stateDir() / "dump" / "opensm-lfts.dump");

  // rleaf1 port 4 -> rspine2. The client (the last HCA, on rleaf4) keeps its own paths to every
  // switch but rleaf1, whose replies to it went up that cable.
  auto unlink = fabric.cmd(R"(Unlink "rleaf1"[4])");
  ASSERT_EQ(unlink.exitCode, 0) << unlink.describe();
  auto after = fabric.run(
      {IBFABRIC_CLI_PATH, "routes", "--validate", "--format", "json", "--limit", "1000"}, 60s);
  EXPECT_EQ(after.exitCode, 2) << after.describe();
  auto j = json::parse(after.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << after.out;
  const auto& v = j["validation"];
  EXPECT_GT(v["black_holes"].get<int>(), 0) << v.dump(2);
  bool spineForwardsIntoTheDeadPort = false;
  for (const auto& p : v["problems"]) {
    const std::string d = p["detail"];
    if (p["kind"] == "black_hole" && d.find("\"rspine2\"") != std::string::npos &&
        d.find("which is down") != std::string::npos) {
      spineForwardsIntoTheDeadPort = true;
    }
  }
  EXPECT_TRUE(spineForwardsIntoTheDeadPort) << v.dump(2);
  // The SM did not reroute in between (no new LFT dump).
  EXPECT_EQ(std::filesystem::last_write_time(fabric.stateDir() / "dump" / "opensm-lfts.dump"),
            lftsBefore);
}

// ibfabricd under `ibfabric sim run`, stdout/stderr to a file; killed if still running.
class Daemon {
 public:
  Daemon(const SimFabric& fabric, const std::vector<std::string>& args) {
    log_ = scratchDir() / ("routing-daemon-" + fabric.name() + ".log");
    std::vector<std::string> argv = {
        IBFABRIC_CLI_PATH, "sim", "run", "--name", fabric.name(), "--", IBFABRIC_DAEMON_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    posix_spawn_file_actions_addchdir_np(&fa, scratchDir().c_str());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, cargv[0], &fa, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("cannot start the daemon");
  }
  ~Daemon() { stop(); }
  int port() const {
    static const std::regex re(R"(listening on http://[^:]+:(\d+))");
    std::smatch m;
    const std::string text = log();
    return std::regex_search(text, m, re) ? std::stoi(m[1]) : -1;
  }
  std::string log() const {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  /// SIGTERM, then SIGKILL if it has not exited within 10 s.
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int st = 0;
    if (!waitFor([&] { return ::waitpid(pid_, &st, WNOHANG) == pid_; }, 10s, 20ms)) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &st, 0);
    }
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  std::filesystem::path log_;
};

TEST(RoutingSim, DaemonServesRoutesValidationAndBalance) {
  SimFabric fabric(fabricFile(), "rdaemon");
  Daemon daemon(fabric, {"--listen", "127.0.0.1:0", "--sweep-interval", "0.5"});
  int port = -1;
  ASSERT_TRUE(waitFor([&] { return (port = daemon.port()) > 0; }, 60s, 50ms)) << daemon.log();
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30, 0);
  ASSERT_TRUE(waitFor(
      [&] {
        auto res = c.Get("/api/v1/routing/validation");
        return res && res->status == 200;
      },
      60s, 100ms))
      << daemon.log();

  auto v = json::parse(c.Get("/api/v1/routing/validation")->body);
  EXPECT_EQ(v["source"], "mad");
  EXPECT_EQ(v["switches_with_tables"], 6);
  EXPECT_EQ(v["pairs_checked"], 8 * 7);
  EXPECT_EQ(v["pairs_ok"], 8 * 7);

  auto res = c.Get("/api/v1/routes?src=rhost1-1&dst=rhost4-2");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  auto r = json::parse(res->body)["routes"];
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]["status"], "ok");
  ASSERT_EQ(r[0]["hops"].size(), 4u);
  EXPECT_EQ(r[0]["hops"][0]["to"]["description"], "rleaf1");
  EXPECT_EQ(r[0]["hops"][3]["to"]["description"], "rhost4-2");
  // The daemon's route is the CLI's (same LFTs) and ibtracert's.
  auto cli = fabric.run({IBFABRIC_CLI_PATH, "routes", "--src", "rhost1-1", "--dst", "rhost4-2"});
  ASSERT_EQ(cli.exitCode, 0) << cli.describe();
  auto cliHops = hops(cli.out);
  ASSERT_EQ(cliHops.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r[0]["hops"][i]["from"]["port"], cliHops[i].out);
    EXPECT_EQ(r[0]["hops"][i]["to"]["port"], cliHops[i].in);
    EXPECT_EQ(r[0]["hops"][i]["to"]["description"], cliHops[i].node);
  }
  auto bad = c.Get("/api/v1/routes?src=nosuch&dst=rhost4-2");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 404);

  auto b = json::parse(c.Get("/api/v1/routing/balance")->body);
  ASSERT_EQ(b["leaves"].size(), 4u);
  EXPECT_DOUBLE_EQ(b["max_imbalance"].get<double>(), 1.0);

  const std::vector<std::string> want = {"ibfabric_collector_success{collector=\"routes\"} 1",
                                         "ibfabric_route_problems{kind=\"black_hole\"} 0",
                                         "ibfabric_uplink_route_imbalance_ratio{",
                                         "ibfabric_lft_read_duration_seconds "};
  const std::string m = metricsWith(c, want);
  for (const auto& w : want) EXPECT_NE(m.find(w), std::string::npos) << w;
  daemon.stop();
}

}  // namespace
}  // namespace ibfabric::testing
