// Forwarding tables of a switch LID routing cannot reach, read by directed route, on a real
// ibsim fabric routed by OpenSM ftree. The SM is told not to reroute (sweep_on_trap FALSE,
// sweep_interval 0); after `Unlink "rleaf1"[4]` the replies of rleaf1 to our HCA (on rleaf4)
// still go up the dead cable, so LID-routed SMPs to it go unanswered. ibfabricd keeps serving
// every table (rleaf1's read by directed route: /api/v1/routing/tables, /metrics), and
// `ibfabric routes --validate` reads it the same way. Bounded waits only.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/daemon_process.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// 2 spines, 4 leaves, 2 hosts each: "dleaf<l>" ports 1-2 hosts "dhost<l>-<h>", 3-4 spines.
std::filesystem::path fabricFile() {
  return writeScratchFile("lft-dr.net", fatTreeText("d", 2, 4, 2));
}

const json* switchEntry(const json& tables, const std::string& name) {
  for (const auto& s : tables["switches"]) {
    if (s["switch"] == name) return &s;
  }
  return nullptr;
}

TEST(LftDirectRouteSim, SwitchUnreachableByLidIsReadByDirectRouteInDaemonAndCli) {
  SimFabric::Options o;
  o.upArgs = {"--sm-option", "sweep_on_trap=FALSE", "--sm-option", "sweep_interval=0"};
  SimFabric fabric(fabricFile(), "lftdr", o);
  DaemonProcess daemon(fabric, {"--listen", "127.0.0.1:0", "--sweep-interval", "0.5"}, "lftdr");
  const int port = daemon.waitForPort(60s);
  ASSERT_GT(port, 0) << daemon.log();
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30, 0);
  json tables;
  auto get = [&](const std::string& path) {
    auto res = c.Get(path);
    return res && res->status == 200 ? json::parse(res->body, nullptr, false) : json();
  };
  ASSERT_TRUE(waitFor(
      [&] {
        tables = get("/api/v1/routing/tables");
        return tables.is_object() && tables["ok"] == 6;
      },
      60s, 100ms))
      << tables.dump(2) << daemon.log();
  EXPECT_EQ(tables["direct_route"], 0);
  ASSERT_EQ(tables["switches"].size(), 6u);
  EXPECT_EQ((*switchEntry(tables, "dleaf1"))["direct_route"], false);

  auto unlink = fabric.cmd(R"(Unlink "dleaf1"[4])");
  ASSERT_EQ(unlink.exitCode, 0) << unlink.describe();
  // The next probe (or the crawl that sees the cable gone) misses dleaf1 by LID; its table is
  // read again by directed route: all six tables stay fresh.
  ASSERT_TRUE(waitFor(
      [&] {
        tables = get("/api/v1/routing/tables");
        const json* s = tables.is_object() ? switchEntry(tables, "dleaf1") : nullptr;
        return s && (*s)["direct_route"] == true;
      },
      60s, 100ms))
      << tables.dump(2) << daemon.log();
  const json& leaf1 = *switchEntry(tables, "dleaf1");
  EXPECT_EQ(leaf1["state"], "ok") << tables.dump(2);
  EXPECT_TRUE(leaf1["table_read_at"].is_number());
  EXPECT_EQ(tables["ok"], 6) << tables.dump(2);
  EXPECT_EQ(tables["missing"], 0);
  EXPECT_EQ(tables["direct_route"], 1);
  auto dr = get("/api/v1/routing/tables?state=ok");
  EXPECT_EQ(dr["switches"].size(), 6u);
  auto bad = c.Get("/api/v1/routing/tables?state=fresh");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  auto v = get("/api/v1/routing/validation");
  EXPECT_EQ(v["switches_with_tables"], 6) << v.dump(2);
  EXPECT_EQ(v["table_status"]["direct_route"], 1) << v.dump(2);
  // /metrics is rendered in the background: it shows the new state within a few renders.
  std::string metrics;
  EXPECT_TRUE(waitFor(
      [&] {
        auto m = c.Get("/metrics");
        metrics = m && m->status == 200 ? m->body : "";
        return metrics.find("ibfabric_lft_switches_direct_route 1") != std::string::npos;
      },
      30s, 100ms))
      << metrics;
  EXPECT_NE(metrics.find("ibfabric_lft_switches{state=\"ok\"} 6"), std::string::npos) << metrics;
  EXPECT_EQ(daemon.signalAndWait(SIGTERM, 20s), 0) << daemon.log();

  // The CLI's full read falls back the same way; with dleaf1's table read, the validation
  // names the black hole its own table points into (port 4, down).
  auto cli = fabric.run(
      {IBFABRIC_CLI_PATH, "routes", "--validate", "--format", "json", "--limit", "1000"}, 60s);
  EXPECT_EQ(cli.exitCode, 2) << cli.describe();
  auto j = json::parse(cli.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << cli.out;
  EXPECT_EQ(j["switches_with_tables"], 6) << cli.out;
  EXPECT_EQ(j["switches_read_by_direct_route"], json::array({"dleaf1"})) << cli.out;
  EXPECT_TRUE(j["table_failures"].empty()) << cli.out;
  bool leafIntoDeadPort = false;
  for (const auto& p : j["validation"]["problems"]) {
    const std::string d = p["detail"];
    if (p["kind"] == "black_hole" && d.find("\"dleaf1\"") != std::string::npos &&
        d.find("port 4, which is down") != std::string::npos) {
      leafIntoDeadPort = true;
    }
  }
  EXPECT_TRUE(leafIntoDeadPort) << j["validation"].dump(2);
}

}  // namespace
}  // namespace ibfabric::testing
