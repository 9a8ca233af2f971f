// ibfabricd on a real ibsim + OpenSM fabric over real HTTP, in the situations where a poller
// easily makes things worse than they are:
//   - started before the subnet manager: it waits (health `waiting_for_subnet`, with the
//     reason), with one MAD proxy child, and is ready within 2 s of SUBNET UP plus one sweep;
//     OpenSM's own sends never fail for lack of simulator client slots;
//   - a host's only cable unlinked: a link-down for that cable, and no degraded or error event
//     on any other link for the next 10 sweeps (the switch relay errors the daemon's own probes
//     cause on its leaf port are `unreachable_traffic`, not a bad cable);
//   - 30% of the PMA queries to two switches dropped: every sweep is published, >= 95% of the
//     other ports are read in each, and the dropped switches' unread ports are stale (their
//     last good reading's time shown), not failed, raising no alarm; back to all ok after;
//   - half the NodeInfo SMPs of every node dropped for 30 s: the crawls are suspect (health,
//     metric), the model is kept (no link_down, port_gone or pool allocation degraded), and
//     everything is back within 2 crawls of the drops ending.
// Every wait is bounded; the fabric, OpenSM and the daemon are stopped in teardown.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "tests/support/daemon_process.h"
#include "tests/support/rest_get.h"
#include "tests/support/scope_exit.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Http : JsonClient {
  explicit Http(int port) : JsonClient(port) {}
  std::string metrics() {
    auto res = client.Get("/metrics");
    return res && res->status == 200 ? res->body : std::string();
  }
  /// Events with id > since of these types ("a,b").
  json events(std::uint64_t since, const std::string& types = "") {
    std::string path = "/api/v1/events?limit=10000&since=" + std::to_string(since);
    if (!types.empty()) path += "&type=" + types;
    return ok(path)["events"];
  }
  std::uint64_t lastEventId() { return ok("/api/v1/events?limit=10000&since=0")["last_id"]; }
  std::uint64_t sequence() { return ok("/api/v1/health")["sweep"].value("sequence", 0ull); }
};

/// The value of a metric line "name value" (no labels); -1 when absent.
double metricValue(const std::string& page, const std::string& name) {
  const std::string needle = "\n" + name + " ";
  const auto at = page.find(needle);
  if (at == std::string::npos) return -1;
  return std::stod(page.substr(at + needle.size()));
}

json fabricState(const SimFabric& fabric) {
  std::ifstream in(fabric.stateDir() / "state.json");
  return json::parse(in, nullptr, false);
}

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(DaemonLifecycle, StartedBeforeTheSmItWaitsAndIsReadySoonAfterSubnetUp) {
  const auto net = writeScratchFile("early.net", fatTreeText("e", 2, 2, 2));
  SimFabric fabric(net, "early", SimFabric::Options{{"--no-sm"}, 300s});
  const auto config = writeScratchFile(
      "early.yaml",
      "sweep_interval: 0.5\ncrawl_interval: 2\ncrawl_timeout: 5\nmad_proxy_restart_cap: 5\n");
  DaemonProcess daemon(fabric, {"--config", config.string(), "--listen", "127.0.0.1:0"}, "early");
  const int port = daemon.waitForPort(60s);
  ASSERT_GT(port, 0) << daemon.log();
  Http http(port);

  // No SM: the local port is not Active (or has no LID / no SM LID yet).
  json h;
  ASSERT_TRUE(waitFor(
      [&] {
        h = http.get("/api/v1/health").second;
        return h.is_object() && h["status"] == "waiting_for_subnet" &&
               h["subnet"].contains("reason") && h["subnet"]["port_state"].get<std::string>() != "";
      },
      30s, 100ms))
      << h.dump() << daemon.log();
  const std::string reason = h["subnet"]["reason"];
  EXPECT_TRUE(reason.rfind("port state ", 0) == 0 || reason == "no LID" || reason == "no SM LID")
      << reason;
  EXPECT_EQ(metricValue(http.metrics(), "ibfabric_waiting_for_subnet"), 1) << http.metrics();
  EXPECT_EQ(h["crawl"]["runs"], 0) << h.dump();

  // OpenSM comes up on the first host (the daemon runs on the last one).
  const json st = fabricState(fabric);
  const std::string smHost = "ehost1-1";
  ASSERT_NE(st.value("clientHost", ""), smHost) << st.dump();
  const auto osmDir = scratchDir() / ("early-osm-" + fabric.name());
  std::filesystem::create_directories(osmDir / "cache");
  const auto osmLog = osmDir / "opensm.log";
  const auto osmConf = writeScratchFile(
      "early-opensm.conf", "routing_engine ftree\nforce_log_flush TRUE\nlog_file " +
                               osmLog.string() + "\ndump_files_dir " + osmDir.string() + "\n");
  ProcessResult sm;
  bool smStopped = false;
  std::thread smThread([&] {
    sm = fabric.run(
        {"env", "OSM_TMP_DIR=" + osmDir.string(), "OSM_CACHE_DIR=" + (osmDir / "cache").string(),
         "opensm", "-F", osmConf.string()},
        240s, smHost);
  });
  // OpenSM stops before the simulator (and before the thread that waits for it is joined).
  auto stopSm = [&] {
    if (smStopped) return;
    smStopped = true;
    waitFor([&] { return processNamed(fabric, "opensm") > 0; }, 5s);
    if (const pid_t p = processNamed(fabric, "opensm"); p > 0) ::kill(p, SIGTERM);
    smThread.join();
  };
  const ScopeExit stopSmAtExit(stopSm);

  ASSERT_TRUE(
      waitFor([&] { return readFile(osmLog).find("SUBNET UP") != std::string::npos; }, 120s, 20ms))
      << readFile(osmLog);
  const auto subnetUp = Clock::now();
  ASSERT_TRUE(waitFor([&] { return http.get("/api/v1/health/ready").first == 200; }, 60s, 20ms))
      << http.get("/api/v1/health").second.dump() << daemon.log();
  const double took = std::chrono::duration<double>(Clock::now() - subnetUp).count();
  std::printf("[ early start ] SUBNET UP -> ready in %.2f s\n", took);
  RecordProperty("subnet_up_to_ready_seconds", std::to_string(took));
  EXPECT_LE(took, 2.5) << "2 s after SUBNET UP plus one 0.5 s sweep";

  h = http.ok("/api/v1/health");
  EXPECT_EQ(h["status"], "ready") << h.dump();
  EXPECT_EQ(h["subnet"]["waiting"], false);
  EXPECT_GT(h["subnet"]["local_lid"].get<int>(), 0) << h.dump();
  EXPECT_GT(h["subnet"]["sm_lid"].get<int>(), 0) << h.dump();
  EXPECT_EQ(h["sweep"]["ports_ok"], h["sweep"]["ports"]) << h.dump();
  // The metrics page is rendered between sweeps: wait for one rendered after the start.
  std::string page;
  ASSERT_TRUE(waitFor(
      [&] {
        page = http.metrics();
        return metricValue(page, "ibfabric_ready") == 1;
      },
      10s, 100ms))
      << page;
  const double starts = metricValue(page, "ibfabric_mad_proxy_starts_total");
  EXPECT_GE(starts, 1) << page;
  EXPECT_LE(starts, 3) << page;
  EXPECT_EQ(metricValue(page, "ibfabric_waiting_for_subnet"), 0) << page;
  EXPECT_LE(h["sweep"]["counter_source_starts"].get<int>(), 3) << h.dump();
  // Every crawl saw LIDs: the nodes answer by LID.
  const json nodes = http.ok("/api/v1/nodes");
  for (const auto& n : nodes["nodes"]) EXPECT_NE(n.value("lid", 0), 0) << n.dump();

  // OpenSM's own MADs never failed for want of a simulator slot.
  const std::string log = readFile(osmLog);
  EXPECT_EQ(log.find("cannot write"), std::string::npos) << log;
  EXPECT_EQ(log.find("ERR 5430"), std::string::npos) << log;  // osm_vendor_send failed
  EXPECT_EQ(log.find("is unknown"), std::string::npos) << log;
  stopSm();
  EXPECT_EQ(sm.err.find("cannot write"), std::string::npos) << sm.describe();
  daemon.signalAndWait(SIGTERM, 10s);
}

TEST(DaemonLifecycle, UnlinkingAHostsOnlyCableAlarmsThatCableOnly) {
  const auto net = writeScratchFile("unlink1.net", fatTreeText("u", 2, 2, 2));
  SimFabric fabric(net, "unlink1");
  const auto config = writeScratchFile(
      "unlink1.yaml", "sweep_interval: 0.5\ncrawl_interval: 1\ncrawl_timeout: 5\n");
  DaemonProcess daemon(fabric, {"--config", config.string(), "--listen", "127.0.0.1:0"}, "unlink");
  const int port = daemon.waitForPort(60s);
  ASSERT_GT(port, 0) << daemon.log();
  Http http(port);
  ASSERT_TRUE(waitFor([&] { return http.get("/api/v1/health/ready").first == 200; }, 60s))
      << daemon.log();

  // uhost2-1: neither OpenSM's host (uhost1-1) nor the daemon's (uhost2-2).
  const json st = fabricState(fabric);
  const std::string victim = "uhost2-1";
  ASSERT_NE(st.value("clientHost", ""), victim);
  ASSERT_NE(st.value("smHost", ""), victim);
  std::string victimGuid;
  json nodes;
  ASSERT_TRUE(waitFor(
      [&] {
        nodes = http.ok("/api/v1/nodes?limit=1000");
        for (const auto& n : nodes["nodes"])
          if (n["description"] == victim) victimGuid = n["guid"];
        return !victimGuid.empty();
      },
      30s, 200ms))
      << nodes.dump();
  const std::uint64_t since = http.lastEventId();

  const auto r = fabric.cmd("Unlink \"" + victim + "\"[1]");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  auto touchesVictim = [&](const json& e) {
    return e["guid"] == victimGuid ||
           (e["remote"].is_object() && e["remote"]["guid"] == victimGuid);
  };
  json downs;
  ASSERT_TRUE(waitFor(
      [&] {
        downs = http.events(since, "link_down,port_gone,port_unreachable");
        for (const auto& e : downs)
          if (touchesVictim(e)) return true;
        return false;
      },
      30s, 100ms))
      << downs.dump() << daemon.log();
  const std::uint64_t seq = http.sequence();
  ASSERT_TRUE(waitFor([&] { return http.sequence() >= seq + 10; }, 60s, 100ms)) << daemon.log();

  const json bad = http.events(since, "link_degraded,error_threshold,flapping");
  for (const auto& e : bad)
    EXPECT_TRUE(touchesVictim(e)) << "an alarm on another link: " << e.dump();
  const json all = http.events(since);
  std::size_t unreachable = 0;
  for (const auto& e : all) unreachable += e["type"] == "unreachable_traffic";
  std::printf("[ unlink ] %zu events, %zu unreachable_traffic\n", all.size(), unreachable);
  daemon.signalAndWait(SIGTERM, 10s);
}

TEST(DaemonLifecycle, MadLossOnSomeSwitchesMarksTheirPortsStaleAndTheRestIsRead) {
  const auto net = writeScratchFile("partial.net", fatTreeText("pl", 2, 4, 4));
  SimFabric fabric(net, "partial");
  // One retry (the default is 3): at 30 % loss a PortCounters query then fails 9 % of the time,
  // so most sweeps have unread ports on the lossy switches; with 3 retries it is 0.8 %.
  const auto config = writeScratchFile(
      "partial.yaml", "sweep_interval: 0.5\ncrawl_interval: 60\nmad: {retries: 1}\n");
  DaemonProcess daemon(fabric, {"--config", config.string(), "--listen", "127.0.0.1:0"}, "partial");
  const int port = daemon.waitForPort(60s);
  ASSERT_GT(port, 0) << daemon.log();
  Http http(port);
  ASSERT_TRUE(waitFor([&] { return http.get("/api/v1/health/ready").first == 200; }, 60s))
      << daemon.log();
  const std::set<std::string> lossy = {guidOf(http, "plspine1"), guidOf(http, "plleaf1")};
  ASSERT_FALSE(lossy.count("")) << "lossy switches not in /nodes";
  const std::uint64_t since = http.lastEventId();

  // 30 % of the PortCounters GETs (attribute 0x12) to these switches' PMA are dropped where the
  // switch answers (so no error counter counts them: the cables are fine).
  auto setDrops = [&](int percent) {
    for (const char* sw : {"plspine1", "plleaf1"}) {
      const auto r =
          fabric.cmd(std::string("Error \"") + sw + "\" " + std::to_string(percent) + " 0x12");
      ASSERT_EQ(r.exitCode, 0) << r.describe();
    }
  };
  bool dropping = true;
  setDrops(30);
  ScopeExit undo([&] {
    if (dropping) setDrops(0);
  });

  // Watch the published sweeps through /links: every fetch is one sweep's snapshot.
  std::set<std::uint64_t> sweeps, sweepsWithStale;
  std::size_t staleEnds = 0;
  json staleEnd;  // one, for its port view
  json links;
  const bool enough = waitFor(
      [&] {
        const std::uint64_t before = http.sequence();
        links = http.ok("/api/v1/links?limit=1000")["links"];
        if (http.sequence() != before || before == 0) return false;  // a sweep in between
        std::size_t others = 0, othersOk = 0, stale = 0;
        for (const auto& l : links) {
          for (const char* side : {"a", "b"}) {
            const json& end = l[side];
            const json& reading = end["reading"];
            if (!reading.is_object()) continue;
            const bool ok = reading["status"] == "ok";
            if (!lossy.count(end["guid"])) {
              ++others;
              othersOk += ok;
              continue;
            }
            if (ok) continue;
            // Unread this sweep: stale, with the time of its last good reading.
            EXPECT_TRUE(reading["stale"].get<bool>()) << end.dump();
            EXPECT_TRUE(reading["last_ok_time"].is_number()) << end.dump();
            ++stale;
            staleEnd = end;
          }
        }
        EXPECT_GT(others, 0u);
        EXPECT_GE(static_cast<double>(othersOk), 0.95 * static_cast<double>(others))
            << othersOk << " of " << others << " other ports read in sweep " << before;
        sweeps.insert(before);
        if (stale > 0) sweepsWithStale.insert(before);
        staleEnds += stale;
        return sweeps.size() >= 20 && sweepsWithStale.size() >= 3;
      },
      90s, 200ms);
  ASSERT_TRUE(enough) << sweeps.size() << " sweeps seen, " << sweepsWithStale.size()
                      << " with stale ports" << daemon.log();
  const json h = http.ok("/api/v1/health");
  EXPECT_EQ(h["sweep"]["consecutive_failures"], 0) << h.dump();
  EXPECT_GE(metricValue(http.metrics(), "ibfabric_sweep_ports_stale"), 0.0);
  std::printf("[ partial ] %zu sweeps watched, %zu with stale ports (%zu stale ends in all)\n",
              sweeps.size(), sweepsWithStale.size(), staleEnds);

  // A port view says how old what it shows is (this port may have been read again since).
  const json view = http.ok("/api/v1/ports/" + staleEnd["guid"].get<std::string>() + "/" +
                            std::to_string(staleEnd["port"].get<int>()));
  EXPECT_TRUE(view["sample"]["last_ok_time"].is_number()) << view["sample"].dump();
  EXPECT_GE(view["sample"]["last_ok_age_seconds"].get<double>(), 0.0) << view["sample"].dump();
  EXPECT_EQ(view["sample"]["stale"], view["sample"]["status"] != "ok") << view["sample"].dump();

  setDrops(0);
  dropping = false;
  ASSERT_TRUE(waitFor(
      [&] {
        const json s = http.ok("/api/v1/health")["sweep"];
        return s.value("ports_stale", 1) == 0 && s.value("ports_ok", 0) == s.value("ports", -1);
      },
      30s, 100ms))
      << http.ok("/api/v1/health").dump();
  // No alarm of the loss's making. A port the subnet manager itself took out of Active meanwhile
  // (seen under ASan with a second test beside it: OpenSM, its SMPs timing out, put a host's
  // port back to Initialize) is a real change: its link's alarms (the discards of what was on
  // its way to the port) are the SM's. Only a PortInfo that read Initialize counts as that.
  const json all = http.events(since, "link_degraded,error_threshold,link_down,port_gone");
  const auto portKey = [](const json& end) {
    return end.value("guid", "") + "/" + end.value("port", json(0)).dump();
  };
  std::set<std::string> leftActive;
  for (const auto& e : all) {
    if (e["type"] != "link_down" ||
        e["message"].get<std::string>().find("-> Initialize") == std::string::npos)
      continue;
    leftActive.insert(portKey(e));
    if (e.contains("remote")) leftActive.insert(portKey(e["remote"]));
  }
  json bad = json::array();
  for (const auto& e : all) {
    if (!leftActive.count(portKey(e))) bad.push_back(e);
  }
  if (!leftActive.empty())
    std::printf("[ partial ] the SM took %zu port end(s) out of Active meanwhile: %zu events\n",
                leftActive.size(), all.size() - bad.size());
  EXPECT_TRUE(bad.empty()) << bad.dump();
  daemon.signalAndWait(SIGTERM, 10s);
}

/// Two leaves, two spines, hosts dgx1..dgx4 with one HCA each ("dgxN mlx5_0", so the pool
/// knows the hosts by name).
std::string lossyFabricText() {
  std::string t;
  for (int l = 1; l <= 2; ++l) {
    t += "Switch 4 \"dleaf" + std::to_string(l) + "\"\n";
    for (int h = 1; h <= 2; ++h)
      t += "[" + std::to_string(h) + "] \"dgx" + std::to_string(2 * (l - 1) + h) + "-hca\"[1]\n";
    t += "[3] \"dspine1\"[" + std::to_string(l) + "]\n[4] \"dspine2\"[" + std::to_string(l) +
         "]\n\n";
  }
  for (int s = 1; s <= 2; ++s)
    t += "Switch 2 \"dspine" + std::to_string(s) + "\"\n[1] \"dleaf1\"[" + std::to_string(2 + s) +
         "]\n[2] \"dleaf2\"[" + std::to_string(2 + s) + "]\n\n";
  for (int h = 1; h <= 4; ++h)
    t += "Hca 1 \"dgx" + std::to_string(h) + "-hca\" # \"dgx" + std::to_string(h) +
         " mlx5_0\"\n[1] \"dleaf" + std::to_string((h + 1) / 2) + "\"[" +
         std::to_string((h - 1) % 2 + 1) + "]\n\n";
  return t;
}

TEST(DaemonLifecycle, CrawlsUnderHeavyMadLossAreSuspectNotRemovals) {
  // The pool holds a job on dgx1 and dgx2 (OpenSM runs on dgx1, the daemon on dgx4).
  const auto net = writeScratchFile("lossy.net", lossyFabricText());
  SimFabric fabric(net, "lossy", SimFabric::Options{{"--sm-option", "sweep_interval 0"}, 300s});
  const auto inventory = writeScratchFile("lossy-inventory.json",
                                          R"({"hosts": [{"name": "dgx[1-4]", "gpu_count": 2}]})");
  const auto journal = scratchDir() / "lossy-journal";
  std::filesystem::remove_all(journal);
  // removal_after 40: 40 crawls 1 s apart outlast the 30 s loss episode, as 3 crawls at the
  // default 60 s interval (3 minutes) outlast a short one.
  const auto config =
      writeScratchFile("lossy.yaml",
                       "sweep_interval: 0.5\ncrawl_interval: 1\ncrawl_timeout: 5\napi_token: t0k\n"
                       "crawl_check: {max_loss: 0.10, removal_after: 40}\npool:\n  inventory: " +
                           inventory.string() + "\n  journal: " + journal.string() + "\n");
  DaemonProcess daemon(fabric, {"--config", config.string(), "--listen", "127.0.0.1:0"}, "lossy");
  const int port = daemon.waitForPort(60s);
  ASSERT_GT(port, 0) << daemon.log();
  Http http(port);
  ASSERT_TRUE(waitFor([&] { return http.get("/api/v1/health/ready").first == 200; }, 60s))
      << daemon.log();
  ASSERT_TRUE(waitFor(
      [&] {
        auto res = http.client.Get("/api/v1/pool");
        return res && res->status == 200 && json::parse(res->body)["total_gpus"] == 8;
      },
      30s, 100ms))
      << daemon.log();
  const json job = {{"job_id", "train-1"},
                    {"gpus", 4},
                    {"gpus_per_host", 2},
                    {"class", "training"},
                    {"preemptible", false}};
  auto created = http.client.Post("/api/v1/pool/allocations", {{"Authorization", "Bearer t0k"}},
                                  job.dump(), "application/json");
  ASSERT_TRUE(created && created->status == 201) << (created ? created->body : "no answer");
  const json topologyBefore = http.ok("/api/v1/topology")["links"];
  const std::uint64_t since = http.lastEventId();

  // Every port of every node drops half the NodeInfo SMPs it receives. (An ibsim drop of all
  // attributes also counts PortRcvErrors on the dropping port, which is a cable fault the
  // daemon rightly reports; one attribute is dropped where the SMA answers, uncounted.)
  const std::vector<std::string> nodes = {"dspine1",  "dspine2",  "dleaf1",   "dleaf2",
                                          "dgx1-hca", "dgx2-hca", "dgx3-hca", "dgx4-hca"};
  auto setDrops = [&](int percent) {
    for (const auto& n : nodes) {
      const auto r = fabric.cmd("Error \"" + n + "\" " + std::to_string(percent) + " 0x11");
      ASSERT_EQ(r.exitCode, 0) << r.describe();
    }
  };
  bool dropping = true;
  setDrops(50);
  ScopeExit undo([&] {
    if (dropping) setDrops(0);
  });
  const auto lossStart = Clock::now();
  json h;
  ASSERT_TRUE(waitFor(
      [&] {
        h = http.get("/api/v1/health").second;
        return h.is_object() && h["crawl"]["suspect_total"].get<int>() >= 1;
      },
      30s, 100ms))
      << h.dump() << daemon.log();
  // Hold the loss for 30 s in all, watching the health meanwhile.
  bool sawSuspect = false;
  waitFor(
      [&] {
        h = http.get("/api/v1/health").second;
        if (h.is_object() && h["crawl"]["suspect"] == true) {
          sawSuspect = true;
          EXPECT_NE(h["crawl"].value("suspect_reason", "").find("MADs failing"), std::string::npos)
              << h.dump();
          EXPECT_EQ(h["status"], "degraded") << h.dump();
        }
        return Clock::now() - lossStart >= 30s;
      },
      40s, 250ms);
  EXPECT_TRUE(sawSuspect);
  const json during = http.ok("/api/v1/health");
  const std::uint64_t suspects = during["crawl"]["suspect_total"];
  std::printf(
      "[ lossy ] %llu suspect crawls, %llu retried in 30 s\n",
      static_cast<unsigned long long>(suspects),
      static_cast<unsigned long long>(during["crawl"]["implausible_retries"].get<std::uint64_t>()));
  // /metrics is the latest rendering of the state (api/metrics/metrics_page.h): it follows the
  // health within one render, not at the same instant.
  double suspectMetric = 0;
  EXPECT_TRUE(waitFor(
      [&] {
        suspectMetric = metricValue(http.metrics(), "ibfabric_crawl_suspect_total");
        return suspectMetric >= static_cast<double>(suspects);
      },
      10s, 100ms))
      << suspectMetric << " < " << suspects;

  setDrops(0);
  dropping = false;
  const std::uint64_t runsAtStop = http.ok("/api/v1/health")["crawl"]["runs"];
  ASSERT_TRUE(waitFor(
      [&] {
        h = http.get("/api/v1/health/ready").second;
        return h.is_object() && h["ready"] == true && h["crawl"]["suspect"] == false &&
               h["crawl"]["runs"].get<std::uint64_t>() > runsAtStop;
      },
      30s, 100ms))
      << h.dump() << daemon.log();
  EXPECT_LE(h["crawl"]["runs"].get<std::uint64_t>() - runsAtStop, 2u) << h.dump();
  EXPECT_EQ(http.ok("/api/v1/topology")["links"], topologyBefore);

  const json bad = http.events(since, "link_down,port_gone,pool_allocation_degraded");
  EXPECT_TRUE(bad.empty()) << bad.dump();
  auto alloc = http.ok("/api/v1/pool/allocations/train-1");
  EXPECT_NE(alloc["state"], "degraded") << alloc.dump();
  daemon.signalAndWait(SIGTERM, 10s);
}

}  // namespace
}  // namespace ibfabric::testing
