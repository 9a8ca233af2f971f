// The GPU pool in ibfabricd on an ibsim + OpenSM fabric (4 hosts x 2 HCAs), over real HTTP: a
// training job gets two whole hosts of one leaf; an ibsim Unlink of one of its hosts' HCA links
// turns the allocation degraded with a replacement host and a pool_allocation_degraded event;
// after a daemon restart the allocations (and the degraded state) are still there, replayed
// from the journal. Every wait is bounded.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>
#include <string>

#include "discovery/netfile.h"
#include "discovery/topogen.h"
#include "tests/support/daemon_process.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json call(httplib::Client& c, const std::string& method, const std::string& path, const json& body,
          int expected) {
  httplib::Headers h{{"Authorization", "Bearer p00l"}};
  httplib::Result res = method == "GET" ? c.Get(path.c_str())
                        : method == "POST"
                            ? c.Post(path.c_str(), h, body.dump(), "application/json")
                        : method == "PUT" ? c.Put(path.c_str(), h, body.dump(), "application/json")
                                          : c.Delete(path.c_str(), h);
  EXPECT_TRUE(res) << method << " " << path;
  if (!res) return {};
  EXPECT_EQ(res->status, expected) << method << " " << path << ": " << res->body;
  json j = json::parse(res->body, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << res->body;
  return j;
}

int startDaemon(DaemonProcess& d) { return d.waitForPort(60s); }

TEST(PoolDaemonSim, TrainingJobDegradesOnUnlinkAndSurvivesRestart) {
  TopoOptions o;
  o.leaves = 2;
  o.spines = 2;
  o.hostsPerLeaf = 2;
  o.hcasPerHost = 2;
  auto gen = generateTopology("two-level", o);
  auto net = writeScratchFile("pool.net", gen.headerComment() + formatNetFile(gen.fabric));
  SimFabric fabric(net, "pool");
  auto inventory = writeScratchFile(
      "pool-inventory.json",
      R"({"hosts": [{"name": "dgx[0001-0004]", "gpu_count": 2, "model": "H100-80GB",
                     "memory_gb": 80, "mig_capable": true},
                    {"name": "ghost01", "gpu_count": 8}]})");
  const auto journal = scratchDir() / "pool-journal";
  std::filesystem::remove_all(journal);
  auto config = writeScratchFile(
      "pool.yaml",
      "sweep_interval: 0.5\ncrawl_interval: 0.5\napi_token: p00l\npool:\n  inventory: " +
          inventory.string() + "\n  journal: " + journal.string() +
          "\n  quotas:\n    - {class: inference, max_percent: 50}\n");
  const std::vector<std::string> args = {"--config", config.string(), "--listen", "127.0.0.1:0"};

  auto daemon = std::make_unique<DaemonProcess>(fabric, args);
  int port = startDaemon(*daemon);
  ASSERT_GT(port, 0) << daemon->log();
  auto client = std::make_unique<httplib::Client>("127.0.0.1", port);
  client->set_read_timeout(30, 0);
  httplib::Client* c = client.get();

  // The pool joins the fabric: four known hosts, ghost01 reported.
  ASSERT_TRUE(waitFor(
      [&] {
        auto res = c->Get("/api/v1/pool");
        if (!res || res->status != 200) return false;
        return json::parse(res->body)["total_gpus"] == 8;
      },
      60s, 100ms))
      << daemon->log();
  auto pool = call(*c, "GET", "/api/v1/pool", {}, 200);
  EXPECT_EQ(pool["unknown_hosts"], json::array({"ghost01"}));
  ASSERT_EQ(pool["quotas"].size(), 1u);
  EXPECT_EQ(pool["quotas"][0]["active"], true);

  // Writes need the token.
  EXPECT_EQ(c->Post("/api/v1/pool/allocations", "{}", "application/json")->status, 401);
  const json training = {{"job_id", "train-1"}, {"gpus", 4},      {"gpus_per_host", 2},
                         {"class", "training"}, {"priority", 10}, {"sharing", "exclusive"},
                         {"preemptible", false}};
  auto created = call(*c, "POST", "/api/v1/pool/allocations", training, 201);
  auto hosts = created["allocation"]["hosts"];
  ASSERT_EQ(hosts.size(), 2u) << created.dump();
  EXPECT_EQ(hosts[0]["host"], "dgx0001");
  EXPECT_EQ(hosts[1]["host"], "dgx0002");
  EXPECT_EQ(hosts[0]["gpus"], json::array({0, 1}));
  EXPECT_EQ(call(*c, "POST", "/api/v1/pool/allocations", training, 200)["created"], false);
  json other = training;
  other["gpus"] = 2;
  call(*c, "POST", "/api/v1/pool/allocations", other, 409);
  call(*c, "POST", "/api/v1/pool/allocations", json{{"job_id", "x"}}, 400);
  // Inference within its 50% quota, then over it.
  json inf = {{"job_id", "inf-1"}, {"gpus", 1}, {"class", "inference"}};
  call(*c, "POST", "/api/v1/pool/allocations", inf, 201);
  inf["job_id"] = "inf-2";
  inf["gpus"] = 4;
  EXPECT_NE(call(*c, "POST", "/api/v1/pool/allocations", inf, 409)["error"]["message"]
                .get<std::string>()
                .find("quota"),
            std::string::npos);
  auto metrics = c->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("ibfabric_pool_gpus{class=\"training\",state=\"allocated\"} 4"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("ibfabric_pool_allocation_duration_seconds_count 3"),
            std::string::npos);

  // Unlink one HCA of dgx0002 (not the SM's or the daemon's HCA): degraded with a replacement.
  auto r = fabric.cmd(R"(Unlink "dgx0002-mlx5_1")");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  json degraded;
  ASSERT_TRUE(waitFor(
      [&] {
        degraded = call(*c, "GET", "/api/v1/pool/allocations/train-1", {}, 200);
        return degraded["state"] == "degraded";
      },
      60s, 200ms))
      << degraded.dump() << "\n"
      << daemon->log();
  EXPECT_NE(degraded["degraded"]["reason"].get<std::string>().find("dgx0002"), std::string::npos)
      << degraded.dump();
  ASSERT_TRUE(degraded["degraded"]["replacement"].is_string()) << degraded.dump();
  const std::string replacement = degraded["degraded"]["replacement"];
  EXPECT_TRUE(replacement == "dgx0003" || replacement == "dgx0004") << replacement;
  EXPECT_EQ(call(*c, "GET", "/api/v1/pool/hosts/dgx0002", {}, 200)["health"], "down");
  auto events = call(*c, "GET", "/api/v1/events?type=pool_allocation_degraded", {}, 200);
  ASSERT_EQ(events["events"].size(), 1u) << events.dump();
  EXPECT_NE(events["events"][0]["message"].get<std::string>().find("train-1"), std::string::npos);

  // Restart: the journal brings back both allocations, the degraded state and no new ones.
  const int st = daemon->signalAndWait(SIGTERM, 10s);
  ASSERT_TRUE(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0) << st << daemon->log();
  client.reset();
  daemon = std::make_unique<DaemonProcess>(fabric, args);
  port = startDaemon(*daemon);
  ASSERT_GT(port, 0) << daemon->log();
  client = std::make_unique<httplib::Client>("127.0.0.1", port);
  client->set_read_timeout(30, 0);
  c = client.get();
  auto list = call(*c, "GET", "/api/v1/pool/allocations", {}, 200)["allocations"];
  ASSERT_EQ(list.size(), 2u) << list.dump();
  EXPECT_EQ(list[0]["job_id"], "train-1");
  EXPECT_EQ(list[0]["state"], "degraded");
  EXPECT_EQ(list[0]["hosts"], created["allocation"]["hosts"]);
  EXPECT_EQ(list[1]["job_id"], "inf-1");
  // Same request after the restart: the same allocation, not a second one.
  ASSERT_TRUE(waitFor(
      [&] {
        auto res = c->Get("/api/v1/pool");
        return res && res->status == 200 && json::parse(res->body)["total_gpus"] == 8;
      },
      60s, 100ms));
  EXPECT_EQ(call(*c, "POST", "/api/v1/pool/allocations", training, 200)["created"], false);
  EXPECT_EQ(call(*c, "DELETE", "/api/v1/pool/allocations/train-1", {}, 200)["released"], "train-1");
  call(*c, "DELETE", "/api/v1/pool/allocations/train-1", {}, 404);
  const int st2 = daemon->signalAndWait(SIGTERM, 10s);
  EXPECT_TRUE(st2 != -1 && WIFEXITED(st2) && WEXITSTATUS(st2) == 0) << st2 << daemon->log();
}

}  // namespace
}  // namespace ibfabric::testing
