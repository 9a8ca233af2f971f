// The event log survives the daemon: ibfabricd with a state directory on a real ibsim + OpenSM
// fabric, a cable unlinked and relinked, then stopped with SIGTERM and restarted, and killed
// with SIGKILL and restarted: /events?since=0 still holds the earlier events with their ids and
// texts, new ids follow the old ones, and health reports the store. A damaged store file is
// moved aside at start (reported in health and metrics), never trusted and never a crash.
// Every wait is bounded; the daemons and the fabric are stopped in teardown.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/daemon_process.h"
#include "tests/support/rest_get.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

json allEvents(JsonClient& http) { return http.ok("/api/v1/events?since=0&limit=10000"); }

/// Waits until the journal has written every event up to `id`.
bool writtenUpTo(JsonClient& http, std::uint64_t id) {
  return waitFor(
      [&] {
        const json st = http.ok("/api/v1/health")["store"];
        return st["consecutive_failures"] == 0 && st["last_written_id"].get<std::uint64_t>() >= id;
      },
      10s, 100ms);
}

/// Every event of `before` is in `after` with the same id, type, node, port and message.
void expectKept(const json& before, const json& after) {
  std::map<std::uint64_t, json> byId;
  for (const auto& e : after["events"]) byId[e["id"].get<std::uint64_t>()] = e;
  for (const auto& e : before["events"]) {
    const auto it = byId.find(e["id"].get<std::uint64_t>());
    ASSERT_NE(it, byId.end()) << "event lost: " << e.dump();
    for (const char* field : {"type", "guid", "node", "port", "message", "remote"})
      EXPECT_EQ(it->second[field], e[field]) << field << " of " << e.dump();
    EXPECT_NEAR(it->second["time"].get<double>(), e["time"].get<double>(), 0.002);
  }
}

TEST(DurableEvents, EventsAndTheirIdsSurviveSigtermAndSigkill) {
  const auto net = writeScratchFile("durable.net", fatTreeText("de", 2, 2, 2));
  SimFabric fabric(net, "durable");
  const fs::path state = scratchDir() / "durable-state";
  fs::remove_all(state);
  const auto config = writeScratchFile(
      "durable.yaml", "sweep_interval: 0.5\ncrawl_interval: 1\ncrawl_timeout: 5\nstate: {dir: " +
                          state.string() + "}\n");
  std::unique_ptr<JsonClient> http;
  auto daemon = startReadyDaemon(fabric, config, "durable", http);
  ASSERT_TRUE(daemon);
  json h = http->ok("/api/v1/health");
  EXPECT_EQ(h["store"]["enabled"], true) << h.dump();
  EXPECT_EQ(h["store"]["path"], (state / "ibfabric.db").string());
  EXPECT_EQ(h["store"]["restored_events"], 0);
  EXPECT_TRUE(h["store"]["moved_aside"].is_null());

  // A cable goes down: link_down (and whatever else the daemon says about it).
  const std::string victim = "dehost2-1";
  ASSERT_EQ(fabric.cmd("Unlink \"" + victim + "\"[1]").exitCode, 0);
  ASSERT_TRUE(waitFor(
      [&] {
        const json all = allEvents(*http);
        for (const auto& e : all["events"])
          if (e["type"] == "link_down") return true;
        return false;
      },
      30s, 100ms))
      << allEvents(*http).dump();
  const json first = allEvents(*http);
  const std::uint64_t firstLast = first["last_id"];
  ASSERT_TRUE(writtenUpTo(*http, firstLast));
  {
    // A second daemon on the same state directory stops at start, touching nothing.
    DaemonProcess second(fabric, {"--config", config.string(), "--listen", "127.0.0.1:0"},
                         "durable-second");
    EXPECT_LT(second.waitForPort(30s), 0);
    EXPECT_TRUE(
        waitFor([&] { return second.log().find("in use") != std::string::npos; }, 30s, 100ms))
        << second.log();
    for (const auto& f : fs::directory_iterator(state))
      EXPECT_EQ(f.path().filename().string().find("ibfabric.db."), std::string::npos) << f.path();
  }
  daemon->signalAndWait(SIGTERM, 15s);
  daemon.reset();

  // Restarted: the same events, the same ids; the next event's id follows them.
  daemon = startReadyDaemon(fabric, config, "durable", http);
  ASSERT_TRUE(daemon);
  h = http->ok("/api/v1/health");
  EXPECT_GE(h["store"]["restored_events"].get<std::uint64_t>(), first["events"].size()) << h.dump();
  expectKept(first, allEvents(*http));
  ASSERT_EQ(fabric.cmd("ReLink \"" + victim + "\"[1]").exitCode, 0);
  json upEvent;
  ASSERT_TRUE(waitFor(
      [&] {
        const json all = allEvents(*http);
        for (const auto& e : all["events"])
          if (e["type"] == "link_up") upEvent = e;
        return upEvent.is_object();
      },
      30s, 100ms))
      << allEvents(*http).dump();
  EXPECT_GT(upEvent["id"].get<std::uint64_t>(), firstLast);
  const json second = allEvents(*http);
  // Once the journal's once-a-second write has taken them: SIGKILL.
  ASSERT_TRUE(writtenUpTo(*http, second["last_id"]));
  const pid_t pid = daemon->daemonPid();
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  daemon->signalAndWait(SIGTERM, 15s);  // the sim run wrapper ends with its child
  daemon.reset();

  daemon = startReadyDaemon(fabric, config, "durable", http);
  ASSERT_TRUE(daemon);
  const json third = allEvents(*http);
  expectKept(second, third);
  EXPECT_GE(third["last_id"].get<std::uint64_t>(), second["last_id"].get<std::uint64_t>());
  std::printf("[ durable ] %zu events before SIGTERM, %zu before SIGKILL, all kept\n",
              first["events"].size(), second["events"].size());
  daemon->signalAndWait(SIGTERM, 15s);
  daemon.reset();

  // A damaged file: moved aside at start, reported, and a new store works.
  {
    std::fstream f(state / "ibfabric.db", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.write("not a database, not at all", 26);
  }
  daemon = startReadyDaemon(fabric, config, "durable", http);
  ASSERT_TRUE(daemon);
  h = http->ok("/api/v1/health");
  ASSERT_TRUE(h["store"]["moved_aside"].is_string()) << h.dump();
  EXPECT_TRUE(fs::exists(h["store"]["moved_aside"].get<std::string>()));
  EXPECT_EQ(h["store"]["moved_aside_reason"].get<std::string>().rfind("corrupt", 0), 0u)
      << h.dump();
  EXPECT_NE(daemon->log().find("moved aside"), std::string::npos) << daemon->log();
  const std::string movedAside = "\nibfabric_store_moved_aside 1";
  EXPECT_NE(metricsWith(http->client, {movedAside}).find(movedAside), std::string::npos);
  daemon->signalAndWait(SIGTERM, 15s);
}

}  // namespace
}  // namespace ibfabric::testing
