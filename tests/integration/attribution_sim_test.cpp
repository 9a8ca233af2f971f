// Attribution on a real ibsim + OpenSM fabric (2 leaves, 2 spines, 3 one-HCA hosts per leaf;
// OpenSM's ftree routes, read by the daemon from the switches). Two reported jobs whose routes
// share one of leaf-01's spine up-links (chosen from GET /api/v1/routes: LID routing sends both
// destinations over the same up-port): the link's jobs are both, with the shares their routes
// give (flows counted on /routes); with the up-link made hot (PerformanceSet raising
// PortXmitData at ~90% of the link while the sweeps run) each job's hottest link is that link,
// the other job is its neighbour, /metrics has the job's series for it, and `job_congested`
// fires once per job naming the other — not again on later sweeps. The reported jobs survive a
// restart of the daemon (state.dir). Every wait is bounded; daemon and fabric stopped in teardown.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "discovery/netfile.h"
#include "discovery/topogen.h"
#include "tests/support/daemon_process.h"
#include "tests/support/rest_get.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kToken = "t0ken";

int put(JsonClient& http, const std::string& path, const json& body) {
  httplib::Headers h{{"Authorization", std::string("Bearer ") + kToken}};
  auto res = http.client.Put(path, h, body.dump(), "application/json");
  return res ? res->status : -1;
}

/// The (guid, port) every hop of the route src -> dst transmits from ("" when no route yet).
std::vector<std::pair<std::string, int>> routeHops(JsonClient& http, const std::string& src,
                                                   const std::string& dst) {
  auto [status, body] = http.get("/api/v1/routes?src=" + src + "&dst=" + dst);
  std::vector<std::pair<std::string, int>> out;
  if (status != 200 || body["routes"].size() != 1 || body["routes"][0]["status"] != "ok")
    return out;
  for (const auto& h : body["routes"][0]["hops"])
    out.emplace_back(h["from"]["guid"].get<std::string>(), h["from"]["port"].get<int>());
  return out;
}

std::size_t eventsOf(JsonClient& http, const std::string& job) {
  const json ev = http.ok("/api/v1/events?type=job_congested");
  std::size_t n = 0;
  for (const auto& e : ev["events"])
    n += e["message"].get<std::string>().rfind("job " + job + ":", 0) == 0;
  return n;
}

TEST(AttributionSim, TwoJobsOnOneSpineUplinkAreNamedWithTheirSharesAndCongested) {
  TopoOptions o;
  o.leaves = 2;
  o.spines = 2;
  o.hostsPerLeaf = 3;
  const GeneratedTopology gen = generateTopology("two-level", o);
  const auto net = writeScratchFile("attribution.net", formatNetFile(gen.fabric));
  SimFabric fabric(net, "attribution");
  const auto stateDir = scratchDir() / "attribution-state";
  std::filesystem::remove_all(stateDir);
  const auto config =
      writeScratchFile("attribution.yaml",
                       "sweep_interval: 0.5\ncrawl_interval: 600\nsm_traps: false\n"
                       "api_token: " +
                           std::string(kToken) +
                           "\njobs: {congested_utilization: 0.5, clear_utilization: 0.2}\n"
                           "state: {dir: " +
                           stateDir.string() + "}\n");
  std::unique_ptr<JsonClient> http;
  int port = -1;
  auto daemon = startReadyDaemon(fabric, config, "attribution", http, &port);
  ASSERT_TRUE(daemon);

  // leaf-01's up-port towards each host of leaf-02 (LID routing: by destination).
  const NetNode* leaf = gen.fabric.find("leaf-01");  // ibsim's name; the daemon's description:
  ASSERT_NE(leaf, nullptr);
  const std::string leafGuid = guidOf(*http, leaf->name());
  ASSERT_FALSE(leafGuid.empty());
  std::map<int, std::vector<std::string>> byUpPort;
  for (const char* dst : {"dgx0004", "dgx0005", "dgx0006"}) {
    std::vector<std::pair<std::string, int>> hops;
    ASSERT_TRUE(waitFor(  // the tables are read with the first sweeps
        [&] {
          hops = routeHops(*http, "dgx0001", dst);
          return hops.size() == 4;  // HCA, leaf-01, spine, leaf-02
        },
        60s, 200ms))
        << dst;
    ASSERT_EQ(hops[1].first, leafGuid);
    byUpPort[hops[1].second].push_back(dst);
  }
  // Three destinations over two up-ports: one port carries two of them.
  int upPort = -1;
  for (const auto& [p, dsts] : byUpPort)
    if (dsts.size() >= 2) upPort = p;
  ASSERT_GT(upPort, 0);
  const std::string d1 = byUpPort[upPort][0], d2 = byUpPort[upPort][1];
  const std::map<std::string, std::vector<std::string>> jobs = {{"jobA", {"dgx0001", d1}},
                                                                {"jobB", {"dgx0002", d2}}};
  for (const auto& [id, hosts] : jobs)
    ASSERT_EQ(put(*http, "/api/v1/jobs/" + id, {{"hosts", hosts}, {"pattern", "ring_allreduce"}}),
              201)
        << id;

  // The shares the routes give: each job's flows (a ring of two: both directions) over the
  // up-link, counted on /routes.
  std::map<std::string, int> crossing;
  int total = 0;
  for (const auto& [id, hosts] : jobs)
    for (std::size_t i = 0; i < hosts.size(); ++i)
      for (const auto& hop : routeHops(*http, hosts[i], hosts[(i + 1) % hosts.size()]))
        if (hop == std::pair{leafGuid, upPort}) {
          ++crossing[id];
          ++total;
        }
  ASSERT_GT(crossing["jobA"], 0);
  ASSERT_GT(crossing["jobB"], 0);
  const std::string linkJobs = "/api/v1/links/" + leafGuid + "/" + std::to_string(upPort) + "/jobs";
  json l;
  ASSERT_TRUE(waitFor(
      [&] {
        l = http->ok(linkJobs);
        return l["attributed"] == true && l["tx"]["jobs"].size() == 2;
      },
      30s, 200ms))
      << l.dump();
  for (const auto& u : l["tx"]["jobs"]) {
    const std::string id = u["job"];
    EXPECT_EQ(u["flows"], crossing[id]) << l.dump();
    EXPECT_NEAR(u["share"].get<double>(), double(crossing[id]) / total, 1e-9) << l.dump();
  }

  // Heat the up-link until both jobs' job_congested events are there (bounded).
  const auto start = Clock::now();
  const double unitsPerSecond = 0.9 * 25e9 / 4;  // 90% of 4x HDR, in 4-octet units
  auto heat = [&] {
    const double t = std::chrono::duration<double>(Clock::now() - start).count();
    const auto value = static_cast<std::uint64_t>(1e10 + unitsPerSecond * t);
    fabric.cmd("PerformanceSet \"leaf-01\"[" + std::to_string(upPort) +
               "] PortCountersExtended.PortXmitData=" + std::to_string(value));
  };
  ASSERT_TRUE(waitFor(
      [&] {
        heat();
        return eventsOf(*http, "jobA") >= 1 && eventsOf(*http, "jobB") >= 1;
      },
      90s, 100ms))
      << http->ok("/api/v1/events?type=job_congested").dump() << daemon->log();
  const json ev = http->ok("/api/v1/events?type=job_congested");
  for (const auto& e : ev["events"]) {
    const std::string msg = e["message"];
    const std::string other = msg.rfind("job jobA:", 0) == 0 ? "jobB" : "jobA";
    EXPECT_NE(msg.find("neighbours: " + other), std::string::npos) << msg;
    EXPECT_EQ(e["guid"], leafGuid) << e.dump();  // the transmitting port
    EXPECT_EQ(e["port"], upPort) << e.dump();
  }

  // The job's view: its hottest link is the heated up-link, shared with the other job (still
  // heated while asked: a sweep without new traffic would read the link cooling down).
  json f;
  ASSERT_TRUE(waitFor(
      [&] {
        heat();
        f = http->ok("/api/v1/jobs/jobA/fabric");
        return !f["hottest_links"].empty() &&
               f["hottest_links"][0].value("utilization", 0.0) >= 0.5;
      },
      60s, 100ms))
      << f.dump();
  ASSERT_FALSE(f["hottest_links"].empty()) << f.dump();
  EXPECT_EQ(f["hottest_links"][0]["from"]["guid"], leafGuid) << f.dump();
  EXPECT_EQ(f["hottest_links"][0]["from"]["port"], upPort) << f.dump();
  EXPECT_GE(f["hottest_links"][0]["utilization"].get<double>(), 0.5) << f.dump();
  ASSERT_EQ(f["neighbours"].size(), 1u) << f.dump();
  EXPECT_EQ(f["neighbours"][0]["job"], "jobB");
  EXPECT_TRUE(f["bottleneck"]["now_bytes_per_second"].is_number()) << f.dump();
  const std::string series = "ibfabric_job_link_utilization_ratio{job_id=\"jobA\",guid=\"" +
                             leafGuid + "\",port=\"" + std::to_string(upPort) + "\"}";
  const std::string page = metricsWith(http->client, {series});
  EXPECT_NE(page.find(series), std::string::npos);

  // Later sweeps, still hot: the same episode, no new event.
  const std::uint64_t sweeps = http->ok("/api/v1/health")["sweep"]["runs"];
  ASSERT_TRUE(waitFor(
      [&] {
        heat();
        return http->ok("/api/v1/health")["sweep"]["runs"].get<std::uint64_t>() >= sweeps + 4;
      },
      30s, 100ms));
  EXPECT_EQ(eventsOf(*http, "jobA"), 1u);
  EXPECT_EQ(eventsOf(*http, "jobB"), 1u);

  // The reported jobs survive a restart.
  ASSERT_TRUE(WIFEXITED(daemon->signalAndWait(SIGTERM, 20s))) << daemon->log();
  daemon = startReadyDaemon(fabric, config, "attribution-2", http, &port);
  ASSERT_TRUE(daemon);
  const json list = http->ok("/api/v1/jobs");
  ASSERT_EQ(list["jobs"].size(), 2u) << list.dump();
  EXPECT_EQ(list["jobs"][0]["id"], "jobA");
  EXPECT_EQ(list["jobs"][0]["hosts"], json(jobs.at("jobA")));
  EXPECT_TRUE(WIFEXITED(daemon->signalAndWait(SIGTERM, 20s))) << daemon->log();
}

}  // namespace
}  // namespace ibfabric::testing
