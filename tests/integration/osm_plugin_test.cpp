// The OpenSM event plugin on a real ibsim + OpenSM fabric, with ibfabricd crawling only every
// 60 s: an Unlinked leaf-spine cable is a link_down in /api/v1/events within a second (the
// plugin forwards OpenSM's trap 128, the daemon re-probes that switch), ReLink is a link_up, the
// reroute reaches the forwarding-table refresh hook; with the daemon stopped OpenSM keeps
// sweeping and the plugin counts what it drops, and a restarted daemon gets the stream back.
// Every wait is bounded.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/daemon_process.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

#ifdef IBFABRIC_OSM_PLUGIN_PATH

json getJson(httplib::Client& c, const std::string& path) {
  auto res = c.Get(path.c_str());
  if (!res) return {};
  return json::parse(res->body, nullptr, false);
}

double wallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::size_t countInFile(const std::filesystem::path& file, const std::string& needle) {
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

/// Long-polls /events for one event of `type` after `since`; returns it (null on timeout).
std::future<json> pollFor(int port, const std::string& type, std::uint64_t since) {
  return std::async(std::launch::async, [=] {
    httplib::Client pc("127.0.0.1", port);
    pc.set_read_timeout(40, 0);
    auto res =
        pc.Get(("/api/v1/events?type=" + type + "&wait=30&since=" + std::to_string(since)).c_str());
    if (!res || res->status != 200) return json();
    auto j = json::parse(res->body, nullptr, false);
    return j.is_object() && !j["events"].empty() ? j["events"][0] : json();
  });
}

bool mentions(const json& event, const std::string& node) {
  return event.is_object() && (event["node"] == node ||
                               (event["remote"].is_object() && event["remote"]["node"] == node));
}

TEST(OsmPluginSim, SubSecondLinkEventsReroutesAndDaemonRestarts) {
  const auto socket = scratchDir() / "osm-events.sock";
  auto net = writeScratchFile("osm.net", fatTreeText("o", 2, 2, 2));
  SimFabric::Options fo;
  fo.upArgs = {"--osm-plugin",  IBFABRIC_OSM_PLUGIN_PATH, "--osm-plugin-options",
               socket.string(), "--sm-sweep-interval",    "5"};
  SimFabric fabric(net, "osm", fo);
  const auto opensmLog = fabric.stateDir() / "opensm.log";
  EXPECT_EQ(countInFile(fabric.stateDir() / "opensm.conf", "event_plugin_name ibfabric_osm\n"), 1u);
  EXPECT_EQ(countInFile(fabric.stateDir() / "opensm.conf", "sweep_interval 5\n"), 1u);

  const std::vector<std::string> args = {"--listen",    "127.0.0.1:0",  "--crawl-interval",
                                         "60",          "--osm-events", socket.string(),
                                         "--log-level", "debug"};
  auto daemon = std::make_unique<DaemonProcess>(fabric, args, "osmd");
  int port = daemon->waitForPort(60s);
  ASSERT_GT(port, 0) << daemon->log();
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30, 0);
  ASSERT_TRUE(waitFor(
      [&] {
        auto h = getJson(c, "/api/v1/health");
        return h.is_object() && h["ready"] == true && h["osm"]["connected"] == true;
      },
      60s, 100ms))
      << getJson(c, "/api/v1/health").dump() << "\n"
      << daemon->log();
  auto health = getJson(c, "/api/v1/health");
  EXPECT_EQ(health["osm"]["osm_version"], "OpenSM 3.3.23") << health.dump();
  EXPECT_EQ(health["osm"]["sm_state"], "master") << health.dump();
  ASSERT_EQ(getJson(c, "/api/v1/topology")["links"], 8);
  const auto crawlsBefore = health["crawl"]["runs"].get<std::uint64_t>();

  // Unlink a leaf-spine cable: link_down within a second, long before the next crawl.
  std::uint64_t last = getJson(c, "/api/v1/events")["last_id"];
  auto down = pollFor(port, "link_down", last);
  const double t0 = wallNow();
  auto r = fabric.cmd(R"(Unlink "oleaf1"[3])");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  ASSERT_EQ(down.wait_for(40s), std::future_status::ready);
  const json downEvent = down.get();
  const double downLatency = wallNow() - t0;
  ASSERT_TRUE(mentions(downEvent, "oleaf1")) << downEvent.dump() << "\n" << daemon->log();
  const double downStamp = downEvent["time"].get<double>() - t0;
  std::printf(
      "unlink -> link_down: event stamped %.0f ms after the Unlink, seen by the "
      "long-poll after %.0f ms\n",
      downStamp * 1000, downLatency * 1000);
  RecordProperty("unlink_to_link_down_ms", std::to_string(downStamp * 1000));
  EXPECT_LT(downStamp, 1.0) << daemon->log();
  EXPECT_LT(downLatency, 1.5);
  // Published before the event: the cable is down (kept, missing).
  EXPECT_EQ(getJson(c, "/api/v1/topology")["links_by_state"].value("active", 0), 7);
  health = getJson(c, "/api/v1/health");
  EXPECT_EQ(health["crawl"]["runs"], crawlsBefore) << "the change came without a crawl\n"
                                                   << daemon->log();
  EXPECT_GE(health["osm"]["port_probes"].get<int>(), 1) << health.dump();
  EXPECT_GE(health["osm"]["events"]["trap"].get<int>(), 1) << health.dump();

  // OpenSM reroutes around the missing cable: LFT changes, then the refresh hook.
  ASSERT_TRUE(
      waitFor([&] { return getJson(c, "/api/v1/health")["osm"]["route_refresh_requests"] >= 1; },
              30s, 100ms))
      << getJson(c, "/api/v1/health").dump() << "\n"
      << daemon->log();

  // ReLink: link_up once OpenSM has brought the port to Active.
  last = getJson(c, "/api/v1/events")["last_id"];
  auto up = pollFor(port, "link_up", last);
  const double t1 = wallNow();
  r = fabric.cmd(R"(ReLink "oleaf1"[3])");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  ASSERT_EQ(up.wait_for(40s), std::future_status::ready);
  const json upEvent = up.get();
  ASSERT_TRUE(mentions(upEvent, "oleaf1")) << upEvent.dump() << "\n" << daemon->log();
  const double upStamp = upEvent["time"].get<double>() - t1;
  std::printf("relink -> link_up: %.0f ms\n", upStamp * 1000);
  RecordProperty("relink_to_link_up_ms", std::to_string(upStamp * 1000));
  EXPECT_LT(upStamp, 5.0);
  ASSERT_TRUE(waitFor(
      [&] { return getJson(c, "/api/v1/topology")["links_by_state"].value("active", 0) == 8; },
      10s));

  // /metrics is rendered in the background after each state change: wait for the rendering
  // that includes the trap and the route refresh.
  std::string body;
  const auto has = [&](const char* text) { return body.find(text) != std::string::npos; };
  EXPECT_TRUE(waitFor(
      [&] {
        auto m = c.Get("/metrics");
        if (!m) return false;
        body = m->body;
        return has("ibfabric_osm_events_total{type=\"trap\"}") &&
               !has("ibfabric_route_refresh_requests_total 0");
      },
      10s, 100ms));
  EXPECT_TRUE(has("ibfabric_osm_connected 1"));
  EXPECT_TRUE(has("ibfabric_osm_events_total{type=\"trap\"}"));
  EXPECT_TRUE(has("ibfabric_osm_plugin_dropped_total"));
  EXPECT_FALSE(has("ibfabric_route_refresh_requests_total 0"));

  // The daemon stops: OpenSM keeps running and sweeping; the plugin drops and counts.
  const int status = daemon->signalAndWait(SIGTERM, 5s);
  ASSERT_NE(status, -1) << daemon->log();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << "\n" << daemon->log();
  daemon.reset();
  const std::size_t sweepsBefore = countInFile(opensmLog, "SUBNET UP");
  r = fabric.cmd(R"(Unlink "oleaf2"[4])");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  ASSERT_TRUE(waitFor([&] { return countInFile(opensmLog, "SUBNET UP") > sweepsBefore; }, 30s))
      << "OpenSM did not sweep after the Unlink while the daemon was away";
  EXPECT_FALSE(fabricProcesses(fabric.name()).empty());

  // The daemon comes back: the plugin reconnects, reports its drops, and events flow again.
  daemon = std::make_unique<DaemonProcess>(fabric, args, "osmd2");
  port = daemon->waitForPort(60s);
  ASSERT_GT(port, 0) << daemon->log();
  httplib::Client c2("127.0.0.1", port);
  c2.set_read_timeout(30, 0);
  ASSERT_TRUE(waitFor(
      [&] {
        auto h = getJson(c2, "/api/v1/health");
        return h.is_object() && h["ready"] == true && h["osm"]["connected"] == true;
      },
      60s, 100ms))
      << daemon->log();
  health = getJson(c2, "/api/v1/health");
  EXPECT_GT(health["osm"]["plugin_dropped"].get<int>(), 0) << health.dump();
  EXPECT_EQ(getJson(c2, "/api/v1/topology")["links"], 7);  // its first crawl saw the Unlink
  last = getJson(c2, "/api/v1/events")["last_id"];
  up = pollFor(port, "link_up", last);
  r = fabric.cmd(R"(ReLink "oleaf2"[4])");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  ASSERT_EQ(up.wait_for(40s), std::future_status::ready);
  const json resumed = up.get();
  // The cable went down before this daemon started: it learns the far end from a crawl.
  EXPECT_TRUE(mentions(resumed, "oleaf2")) << resumed.dump() << "\n" << daemon->log();
  const int status2 = daemon->signalAndWait(SIGTERM, 5s);
  ASSERT_NE(status2, -1) << daemon->log();
  EXPECT_TRUE(WIFEXITED(status2) && WEXITSTATUS(status2) == 0) << status2 << "\n" << daemon->log();
}

TEST(OsmPluginCli, BadPluginAndSocketPathsAreClearErrors) {
  auto net = writeScratchFile("osm-bad.net", fatTreeText("b", 1, 1, 1));
  auto r = runCli({"sim", "up", net.string(), "--name", uniqueFabricName("osmbad"), "--osm-plugin",
                   "/tmp/not-a-plugin.so"});
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  EXPECT_NE(r.err.find("must be a lib<name>.so file"), std::string::npos) << r.describe();
  r = runCli({"sim", "up", net.string(), "--name", uniqueFabricName("osmbad"), "--osm-plugin",
              (scratchDir() / "libmissing.so").string()});
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  EXPECT_NE(r.err.find("no such OpenSM plugin"), std::string::npos) << r.describe();

  // The daemon refuses a socket path that is an ordinary file (and leaves the file alone).
  auto file = writeScratchFile("osm-not-a-socket.txt", "keep me");
  r = runProcess({IBFABRIC_DAEMON_PATH, "--listen", "127.0.0.1:0", "--osm-events", file.string()},
                 30s);
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  EXPECT_NE(r.err.find("not a socket"), std::string::npos) << r.describe();
  EXPECT_TRUE(std::filesystem::is_regular_file(file));
}

#else
TEST(OsmPluginSim, SubSecondLinkEventsReroutesAndDaemonRestarts) {
  GTEST_SKIP() << "libibfabric_osm.so is not built (no OpenSM headers)";
}
#endif

}  // namespace
}  // namespace ibfabric::testing
