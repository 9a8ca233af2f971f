// Jobs and attribution in the daemon (api/service/job_registry.h, job_service.h,
// congestion_episodes.h, api/http/routes/job_routes.cpp): the registry's validation and its file
// across restarts; congestion episodes (one report per episode); and over real HTTP on loopback
// with the fabric's seams faked (shortest-path tables served, sweeps every 30 ms): the token on
// writes, 400/404/409/413 answers, a pool allocation beside reported jobs, the links a job uses
// and who shares them, the link's jobs, /metrics (hottest links only) and one job_congested
// event per episode naming the neighbours.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "api/daemon/service_config.h"
#include "api/http/rest_server.h"
#include "api/service/congestion_episodes.h"
#include "api/service/job_registry.h"
#include "api/service/job_service.h"
#include "api/service/pool_service.h"
#include "discovery/net_topology.h"
#include "discovery/netfile.h"
#include "tests/support/fabrics.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using nlohmann::json;

int statusOf(std::string_view id, const json& body) {
  try {
    reportedJobFromBody(id, body);
    return 0;
  } catch (const JobError& e) {
    return e.status();
  }
}

TEST(JobRegistry, ValidatesTheBodyStrictly) {
  const json ok = {{"hosts", {"a", "b"}}, {"pattern", "alltoall"}};
  EXPECT_EQ(statusOf("slurm-123", ok), 0);
  auto job = reportedJobFromBody("slurm-123", ok);
  EXPECT_EQ(job.hosts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(job.pattern, routing::CommPattern::kAllToAll);
  EXPECT_EQ(statusOf("", ok), 400);
  EXPECT_EQ(statusOf(std::string(129, 'x'), ok), 400);
  EXPECT_EQ(statusOf("a*b", ok), 400);
  EXPECT_EQ(statusOf("j", json::array()), 400);
  EXPECT_EQ(statusOf("j", {{"hosts", {"a"}}}), 400);         // no pattern
  EXPECT_EQ(statusOf("j", {{"pattern", "alltoall"}}), 400);  // no hosts
  EXPECT_EQ(statusOf("j", {{"hosts", json::array()}, {"pattern", "alltoall"}}), 400);
  EXPECT_EQ(statusOf("j", {{"hosts", {"a", "a"}}, {"pattern", "alltoall"}}), 400);
  EXPECT_EQ(statusOf("j", {{"hosts", {"a", 7}}, {"pattern", "alltoall"}}), 400);
  EXPECT_EQ(statusOf("j", {{"hosts", {""}}, {"pattern", "alltoall"}}), 400);
  EXPECT_EQ(statusOf("j", {{"hosts", {"a"}}, {"pattern", "none"}}), 400);
  EXPECT_EQ(statusOf("j", {{"hosts", {"a"}}, {"pattern", "broadcast"}}), 400);
  EXPECT_EQ(statusOf("j", {{"hosts", {"a"}}, {"pattern", "alltoall"}, {"gpus", 8}}), 400);
  try {
    reportedJobFromBody("j", {{"hosts", {"a"}}, {"pattern", "ring_allreduce"}, {"x", 1}});
    FAIL();
  } catch (const JobError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown field x"));
  }
}

TEST(JobRegistry, SurvivesARestartThroughItsFile) {
  const auto dir = testing::scratchDir() / "job-registry";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto file = dir / JobRegistry::kFileName;
  {
    JobRegistry r(file);
    auto j = reportedJobFromBody("j1", {{"hosts", {"h2", "h1"}}, {"pattern", "ring_allreduce"}});
    j.registered = std::chrono::system_clock::time_point(std::chrono::milliseconds(1234567));
    j.bottleneckAtRegistration = 1.5e9;
    EXPECT_TRUE(r.put(j));
    EXPECT_FALSE(r.put(j));  // replaced
    EXPECT_TRUE(r.put(reportedJobFromBody("j2", {{"hosts", {"h3"}}, {"pattern", "alltoall"}})));
    EXPECT_TRUE(r.remove("j2"));
    EXPECT_FALSE(r.remove("j2"));
  }
  JobRegistry again(file);
  EXPECT_TRUE(again.loadProblem().empty());
  const auto jobs = again.list();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, "j1");
  EXPECT_EQ(jobs[0].hosts, (std::vector<std::string>{"h2", "h1"}));  // rank order kept
  EXPECT_EQ(jobs[0].registered.time_since_epoch(), std::chrono::milliseconds(1234567));
  EXPECT_EQ(jobs[0].bottleneckAtRegistration, 1.5e9);
  EXPECT_FALSE(std::filesystem::exists(dir / "jobs.json.tmp"));

  {
    std::ofstream(file) << "{\"jobs\": [{\"id\": \"x\"";  // torn: moved aside, start empty
  }
  JobRegistry torn(file);
  EXPECT_FALSE(torn.loadProblem().empty());
  EXPECT_TRUE(torn.list().empty());
  EXPECT_FALSE(std::filesystem::exists(file));
  int aside = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    aside += e.path().filename().string().rfind("jobs.json.bad-", 0) == 0;
  EXPECT_EQ(aside, 1);
}

TEST(JobRegistry, AFileThatCannotBeWrittenChangesNothing) {
  JobRegistry r("/proc/ibfabric-no-such-dir/jobs.json");
  try {
    r.put(reportedJobFromBody("j", {{"hosts", {"a"}}, {"pattern", "alltoall"}}));
    FAIL();
  } catch (const JobError& e) {
    EXPECT_EQ(e.status(), 500);
  }
  EXPECT_TRUE(r.list().empty());
}

TEST(CongestionEpisodes, ReportsOncePerEpisodeWithHysteresis) {
  CongestionEpisodes e(0.8, 0.6);
  using V = std::vector<std::pair<std::string, double>>;
  EXPECT_TRUE(e.update(V{{"a", 0.5}, {"b", 0.1}}).empty());
  EXPECT_EQ(e.update(V{{"a", 0.85}, {"b", 0.9}}), (std::vector<std::size_t>{0, 1}));
  EXPECT_TRUE(e.update(V{{"a", 0.95}, {"b", 0.9}}).empty());  // same episode
  EXPECT_TRUE(e.update(V{{"a", 0.7}, {"b", 0.9}}).empty());   // between the levels: still in it
  EXPECT_TRUE(e.inEpisode("a"));
  EXPECT_TRUE(e.update(V{{"a", 0.5}, {"b", 0.9}}).empty());  // a's episode ends
  EXPECT_FALSE(e.inEpisode("a"));
  EXPECT_EQ(e.update(V{{"a", 0.8}, {"b", 0.9}}), (std::vector<std::size_t>{0}));  // a new one
  EXPECT_TRUE(e.update(V{{"a", 0.9}}).empty());  // b left: forgotten
  EXPECT_EQ(e.update(V{{"a", 0.9}, {"b", 0.9}}), (std::vector<std::size_t>{1}));
}

TEST(JobConfig, TheJobsBlockSetsTheThresholds) {
  const auto c = loadConfigText("jobs: {congested_utilization: 0.9, clear_utilization: 0.5}\n");
  EXPECT_DOUBLE_EQ(c.jobsCongestedUtilization, 0.9);
  EXPECT_DOUBLE_EQ(c.jobsClearUtilization, 0.5);
  const auto d = loadConfigText("");
  EXPECT_DOUBLE_EQ(d.jobsCongestedUtilization, 0.8);
  EXPECT_DOUBLE_EQ(d.jobsClearUtilization, 0.6);
  EXPECT_THROW(loadConfigText("jobs: {congested_utilization: 1.5}\n"), ConfigError);
  EXPECT_THROW(loadConfigText("jobs: {clear_utilization: 0.9}\n"), ConfigError);  // above 0.8
  EXPECT_THROW(loadConfigText("jobs: {threshold: 0.9}\n"), ConfigError);
  EXPECT_THROW(loadConfigText("jobs: 3\n"), ConfigError);
}

/// Two leaves of four one-HCA hosts under one spine: every flow between the leaves crosses
/// leaf-1's (or leaf-2's) one up-link, the slowest links of the fabric. The pool has dgx0001 and
/// dgx0005.
class ApiJobs : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_.topology().push(topology_);
    PoolConfig pc;
    pc.enabled = true;
    pc.inventory = testing::writeScratchFile("api-jobs-pool.json",
                                             R"({"hosts": [{"name": "dgx0001", "gpu_count": 8},
                                     {"name": "dgx0005", "gpu_count": 8}]})")
                       .string();
    pool_ = std::make_unique<PoolService>(daemon_.service(), daemon_.placement(), pc);
    JobServiceOptions jo;
    jo.congestedUtilization = 1e-9;  // the fake's counters move a little every sweep: all hot
    jo.clearUtilization = 1e-10;
    daemon_.startJobs(pool_.get(), jo);
    RestOptions ro;
    ro.token = "t0ken";
    ASSERT_GT(daemon_.serve(ro, pool_.get()), 0);
    ASSERT_TRUE(daemon_.startAndWaitReady(
        2, [](const ServiceState& s) { return s.forwarding != nullptr; }, 20s));
    pool_->start();
    ASSERT_TRUE(testing::waitFor([&] { return pool_->pool().usage().totalGpus == 16; }, 10s));
  }
  void TearDown() override {
    daemon_.stopServing();
    if (daemon_.jobs()) daemon_.jobs()->stop();  // it reads the pool
    if (pool_) pool_->stop();
  }
  static testing::InProcessDaemon::Options daemonOptions() {
    testing::InProcessDaemon::Options o;
    o.counters->serveTables = true;
    return o;
  }
  httplib::Result call(const std::string& method, const std::string& path,
                       const std::string& body = "", const std::string& token = "t0ken") {
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    httplib::Client& c = daemon_.client();
    return method == "GET"    ? c.Get(path.c_str())
           : method == "POST" ? c.Post(path.c_str(), h, body, "application/json")
           : method == "PUT"  ? c.Put(path.c_str(), h, body, "application/json")
                              : c.Delete(path.c_str(), h);
  }
  json send(const std::string& method, const std::string& path, const std::string& body, int status,
            const std::string& token = "t0ken") {
    auto res = call(method, path, body, token);
    EXPECT_TRUE(res) << path;
    if (!res) return {};
    EXPECT_EQ(res->status, status) << method << " " << path << ": " << res->body;
    json j = json::parse(res->body, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << res->body;
    return j;
  }
  const Node& leafOf(const std::string& host) const {
    const Host& h = *topology_->findHost(host);
    return topology_->node(topology_->node(h.hcas[0]).port(PortNum(1))->remote->node);
  }
  /// leaf-1's one up-link port.
  PortNum upPort(const Node& leaf) const {
    for (const auto& p : leaf.ports)
      if (p && p->remote && topology_->node(p->remote->node).isSwitch()) return p->num;
    return PortNum(0);
  }

  /// The fabric with its leaf–spine cables at 4x SDR (HCA cables at HDR): under the fake's
  /// uniform counters the up-links are a job's hottest links.
  static TopologyPtr slowUplinks() {
    NetFabric net = testing::routableNet(testing::twoLevel(2, 1, 4));
    for (auto& n : net.nodes)
      for (auto& p : n.ports)
        if (n.id.find("spine") != std::string::npos ||
            p.remoteId.find("spine") != std::string::npos)
          p.rate = parseLinkRate("4xSDR");
    return topologyFromNetFabric(net, "memory");
  }

  TopologyPtr topology_ = slowUplinks();
  testing::InProcessDaemon daemon_{daemonOptions()};
  std::unique_ptr<PoolService> pool_;  // after daemon_: destroyed first
};

TEST_F(ApiJobs, ReportedJobsAreValidatedAndGuarded) {
  const std::string body = R"({"hosts": ["dgx0002", "dgx0006"], "pattern": "ring_allreduce"})";
  auto res = call("PUT", "/api/v1/jobs/r1", body, "");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = call("PUT", "/api/v1/jobs/r1", body, "wrong");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
  send("PUT", "/api/v1/jobs/r1", "{not json", 400);
  send("PUT", "/api/v1/jobs/r1", R"({"hosts": ["dgx0002"], "pattern": "none"})", 400);
  send("PUT", "/api/v1/jobs/a*b", body, 400);
  json e = send("PUT", "/api/v1/jobs/r1",
                R"({"hosts": ["dgx0002", "ghost1", "ghost2"], "pattern": "alltoall"})", 404);
  EXPECT_THAT(e["error"]["message"].get<std::string>(), HasSubstr("ghost1, ghost2"));
  res = call("PUT", "/api/v1/jobs/big", std::string(1100 * 1024, ' '));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  send("GET", "/api/v1/jobs/r1", "", 404);

  json j = send("PUT", "/api/v1/jobs/r1", body, 201);
  EXPECT_EQ(j["id"], "r1");
  EXPECT_EQ(j["source"], "reported");
  EXPECT_EQ(j["hosts"], json({"dgx0002", "dgx0006"}));
  EXPECT_TRUE(j["bottleneck_at_start_bytes_per_second"].is_number()) << j.dump();
  const double since = j["since_unix"];
  j = send("PUT", "/api/v1/jobs/r1", body, 200);  // the same job again: registration kept
  EXPECT_EQ(j["since_unix"], since);
  EXPECT_EQ(send("GET", "/api/v1/jobs", "", 200)["jobs"].size(), 1u);

  // A pool allocation's id belongs to the pool.
  send("POST", "/api/v1/pool/allocations",
       R"({"job_id": "train1", "gpus": 16, "gpus_per_host": 8, "class": "training"})", 201);
  send("PUT", "/api/v1/jobs/train1", body, 409);
  send("DELETE", "/api/v1/jobs/train1", "", 409);

  EXPECT_EQ(send("DELETE", "/api/v1/jobs/r1", "", 200)["removed"], "r1");
  send("DELETE", "/api/v1/jobs/r1", "", 404);
  send("GET", "/api/v1/jobs/r1/fabric", "", 404);
}

TEST_F(ApiJobs, AttributionNamesTheJobsOnASharedUplinkAndTheirShares) {
  send("POST", "/api/v1/pool/allocations",
       R"({"job_id": "train1", "gpus": 16, "gpus_per_host": 8, "class": "training"})", 201);
  send("PUT", "/api/v1/jobs/r1",
       R"({"hosts": ["dgx0002", "dgx0003", "dgx0007"], "pattern": "alltoall"})", 201);
  json list;
  ASSERT_TRUE(testing::waitFor(
      [&] {
        list = send("GET", "/api/v1/jobs", "", 200);
        return list["attributed"] == true;
      },
      10s))
      << list.dump();
  ASSERT_EQ(list["jobs"].size(), 2u);
  EXPECT_EQ(list["jobs"][0]["id"], "train1");
  EXPECT_EQ(list["jobs"][0]["source"], "pool");
  EXPECT_EQ(list["jobs"][0]["pattern"], "ring_allreduce");
  EXPECT_EQ(list["jobs"][1]["id"], "r1");

  // train1 (dgx0001 + dgx0005, a ring of two): 2 flows over both directions of the two HCA
  // cables and the two leaf–spine cables: 8 directed links, the up-links hottest.
  json f = send("GET", "/api/v1/jobs/train1/fabric", "", 200);
  EXPECT_EQ(f["flows"], 2);
  EXPECT_EQ(f["unrouted_flows"], 0);
  EXPECT_EQ(f["links"].size(), 8u) << f.dump();
  EXPECT_FALSE(f["truncated"].get<bool>());
  EXPECT_TRUE(f["bottleneck"]["now_bytes_per_second"].is_number()) << f.dump();
  EXPECT_TRUE(f["bottleneck"]["at_start_bytes_per_second"].is_number()) << f.dump();
  EXPECT_LE(f["hottest_links"].size(), 3u);
  // r1 shares both up-links with train1.
  ASSERT_EQ(f["neighbours"].size(), 1u) << f.dump();
  EXPECT_EQ(f["neighbours"][0]["job"], "r1");
  EXPECT_EQ(send("GET", "/api/v1/jobs/train1/fabric?limit=2", "", 200)["links"].size(), 2u);
  send("GET", "/api/v1/jobs/train1/fabric?limit=x", "", 400);
  send("GET", "/api/v1/jobs/nope/fabric", "", 404);

  // leaf-1's up-link: train1 one flow of weight 1; r1 (alltoall of 3) dgx0002 and dgx0003 each
  // send one flow of 1/2 to dgx0007: weight 1. Half each.
  const Node& leaf = leafOf("dgx0001");
  const std::string guid = toString(leaf.guid);
  json l =
      send("GET", "/api/v1/links/" + guid + "/" + std::to_string(upPort(leaf).value()) + "/jobs",
           "", 200);
  ASSERT_EQ(l["tx"]["jobs"].size(), 2u) << l.dump();
  double sum = 0;
  for (const auto& u : l["tx"]["jobs"]) {
    EXPECT_NEAR(u["share"].get<double>(), 0.5, 1e-9) << l.dump();
    sum += u["share"].get<double>();
  }
  EXPECT_NEAR(sum, 1.0, 1e-9);
  EXPECT_EQ(l["tx"]["from"]["guid"], guid);
  // Down the up-link towards leaf-1: train1's dgx0005 -> dgx0001 only (r1's dgx0007 sends to
  // dgx0002 and dgx0003: 2 flows of 1/2): half each again.
  ASSERT_EQ(l["rx"]["jobs"].size(), 2u) << l.dump();
  send("GET", "/api/v1/links/" + guid + "/99/jobs", "", 404);
  send("GET", "/api/v1/links/0x00000000deadbeef/1/jobs", "", 404);
  send("GET", "/api/v1/links/nope/1/jobs", "", 400);

  // /metrics: the hottest links only (3 per job at most), one info series per job.
  auto m = call("GET", "/metrics");
  ASSERT_TRUE(m);
  EXPECT_THAT(m->body, HasSubstr(R"(ibfabric_job_info{job_id="train1",source="pool",)"));
  EXPECT_THAT(m->body, HasSubstr(R"(ibfabric_job_info{job_id="r1",source="reported",)"));
  std::size_t series = 0;
  for (std::size_t p = m->body.find("\nibfabric_job_link_utilization_ratio{");
       p != std::string::npos; p = m->body.find("\nibfabric_job_link_utilization_ratio{", p + 1))
    ++series;
  EXPECT_GT(series, 0u);
  EXPECT_LE(series, 6u);
  if (::access("/usr/bin/promtool", X_OK) == 0) {
    const auto file = testing::writeScratchFile("api-jobs-metrics.txt", m->body);
    const auto r = testing::runProcess({"sh", "-c", "promtool check metrics < " + file.string()});
    EXPECT_EQ(r.exitCode, 0) << r.describe();
  }
}

TEST_F(ApiJobs, JobCongestedFiresOncePerEpisodeNamingTheNeighbours) {
  send("PUT", "/api/v1/jobs/r1",
       R"({"hosts": ["dgx0001", "dgx0005"], "pattern": "ring_allreduce"})", 201);
  send("PUT", "/api/v1/jobs/r2",
       R"({"hosts": ["dgx0002", "dgx0006"], "pattern": "ring_allreduce"})", 201);
  json ev;
  ASSERT_TRUE(testing::waitFor(
      [&] {
        ev = send("GET", "/api/v1/events?type=job_congested", "", 200);
        return ev["events"].size() >= 2;
      },
      10s))
      << ev.dump();
  // Many more sweeps: still one event per job (the fake's load never drops).
  const auto sweeps = daemon_.service().state()->sweep.runs;
  ASSERT_TRUE(
      testing::waitFor([&] { return daemon_.service().state()->sweep.runs >= sweeps + 10; }, 10s));
  ev = send("GET", "/api/v1/events?type=job_congested", "", 200);
  ASSERT_EQ(ev["events"].size(), 2u) << ev.dump();
  for (const auto& e : ev["events"]) {
    const std::string msg = e["message"];
    const bool r1 = msg.rfind("job r1:", 0) == 0;
    EXPECT_THAT(msg, HasSubstr(r1 ? "neighbours: r2" : "neighbours: r1")) << msg;
  }
  EXPECT_EQ(daemon_.jobs()->stats().congestedEvents, 2u);
}

TEST(ApiJobsNotReady, WithoutForwardingTablesJobsAreListedButNotAttributed) {
  testing::InProcessDaemon d;  // the fake source serves no tables
  d.topology().push(testing::routableTopology(testing::twoLevel(2, 1, 2)));
  d.startJobs();
  RestOptions ro;
  ro.token = "t0ken";
  ASSERT_GT(d.serve(ro), 0);
  ASSERT_TRUE(d.startAndWaitReady());
  httplib::Headers h{{"Authorization", "Bearer t0ken"}};
  auto res = d.client().Put("/api/v1/jobs/j", h,
                            R"({"hosts": ["dgx0001", "dgx0003"], "pattern": "alltoall"})",
                            "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 201) << res->body;
  const json put = json::parse(res->body);
  EXPECT_TRUE(put["bottleneck_at_start_bytes_per_second"].is_null()) << put.dump();
  res = d.client().Get("/api/v1/jobs");
  ASSERT_TRUE(res);
  const json list = json::parse(res->body);
  EXPECT_EQ(list["attributed"], false) << list.dump();
  EXPECT_THAT(list["not_ready"].get<std::string>(), HasSubstr("forwarding tables")) << list.dump();
  ASSERT_EQ(list["jobs"].size(), 1u);
  res = d.client().Get("/api/v1/jobs/j/fabric");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503) << res->body;
  // A link's jobs: the cable is known, nothing is attributed to it yet.
  const auto topo = d.service().state()->topology;
  const Node& hca = topo->node(topo->findHost("dgx0001")->hcas.at(0));
  res = d.client().Get("/api/v1/links/" + toString(hca.guid) + "/1/jobs");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  const json l = json::parse(res->body);
  EXPECT_EQ(l["attributed"], false);
  EXPECT_TRUE(l["tx"].is_null());
  d.stopServing();
}

}  // namespace
}  // namespace ibfabric::api
