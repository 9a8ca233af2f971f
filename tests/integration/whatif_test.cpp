// What-if on a real ibsim + OpenSM fabric (2 leaves, 2 spines, 4 hosts of 8 HCAs; OpenSM's ftree
// routes, read by the daemon): draining a leaf–spine cable (asked by REST and with
// `ibfabric whatif`) cuts no host off, takes one up-link from its leaf and names destinations
// the SM must reroute; draining the leaf loses every HCA cabled to it. A pool allocation on a host
// whose HCA cable is drained is listed with its predicted bottleneck now and after (0: a rail of
// it has no cable left, a 100 % drop) and the placement engine's alternatives, none of which
// uses that host (also in the CLI's summary). Then the cable is really
// unlinked: no host loses an HCA, and once the SM has rerouted and the tables are read again no
// forwarding entry points at the dead cable any more — what the what-if said the SM must do.
// Every wait is bounded; the daemon and the fabric are stopped in teardown.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

#include "discovery/netfile.h"
#include "discovery/topogen.h"
#include "tests/support/daemon_process.h"
#include "tests/support/net_edits.h"
#include "tests/support/rest_get.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json whatif(JsonClient& http, const json& drain) {
  auto res = http.client.Post("/api/v1/whatif", json{{"drain", drain}}.dump(), "application/json");
  EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no answer");
  return res ? json::parse(res->body, nullptr, false) : json();
}

TEST(WhatIfSim, ADrainOnPaperMatchesWhatTheUnlinkThenDoes) {
  TopoOptions o;
  o.leaves = 2;
  o.spines = 2;
  o.hostsPerLeaf = 2;
  o.hcasPerHost = 8;
  const GeneratedTopology gen = generateTopology("two-level", o);
  const auto net = writeScratchFile("whatif.net", gen.headerComment() + formatNetFile(gen.fabric));
  const NetNode* leaf = gen.fabric.find(gen.fabric.find("dgx0003-mlx5_1")->ports.at(0).remoteId);
  ASSERT_NE(leaf, nullptr);
  const NetPort* up = firstSwitchPort(gen.fabric, *leaf);
  ASSERT_NE(up, nullptr);
  std::size_t hcasOnLeaf = 0;
  for (const NetPort& p : leaf->ports)
    hcasOnLeaf += gen.fabric.find(p.remoteId)->type == NodeType::kCa;

  SimFabric fabric(net, "whatif");
  const auto inventory = writeScratchFile(
      "whatif-inventory.json", R"({"hosts": [{"name": "dgx[0001-0004]", "gpu_count": 8}]})");
  const auto journal = scratchDir() / "whatif-journal";
  std::filesystem::remove_all(journal);
  const auto config =
      writeScratchFile("whatif.yaml",
                       "sweep_interval: 0.5\ncrawl_interval: 600\nsm_traps: false\n"
                       "api_token: wh4t\npool:\n  inventory: " +
                           inventory.string() + "\n  journal: " + journal.string() + "\n");
  std::unique_ptr<JsonClient> http;
  int port = -1;
  auto daemon = startReadyDaemon(fabric, config, "whatif", http, &port);
  ASSERT_TRUE(daemon);
  const json cable = {{"node", leaf->name()}, {"port", up->port.value()}};
  json a;
  ASSERT_TRUE(waitFor(  // the tables are read with the first sweeps
      [&] {
        a = whatif(*http, {{"cables", {cable}}});
        return a["reroute"].is_object();
      },
      60s, 200ms))
      << a.dump();
  EXPECT_EQ(a["hosts_cut_off"], 0);
  EXPECT_EQ(a["hcas_lost"], 0);
  ASSERT_EQ(a["leaves"].size(), 1u) << a.dump();
  EXPECT_EQ(a["leaves"][0]["leaf"], leaf->name());
  EXPECT_EQ(a["leaves"][0]["drained"], 1);
  const int reroute = a["reroute"]["destinations"];
  EXPECT_GT(reroute, 0) << a.dump();

  // The CLI asks the same.
  const auto cli = runCli({"whatif", "--server", "http://127.0.0.1:" + std::to_string(port),
                           "--cable", leaf->name() + "/" + std::to_string(up->port.value())});
  ASSERT_EQ(cli.exitCode, 0) << cli.describe();
  EXPECT_NE(cli.out.find("destinations the SM must reroute: " + std::to_string(reroute)),
            std::string::npos)
      << cli.out;
  EXPECT_EQ(runCli({"whatif", "--server", "http://127.0.0.1:" + std::to_string(port), "--cable",
                    "no-such-node/1"})
                .exitCode,
            2);

  // A training allocation of two whole hosts; drain one HCA cable of its second host. The pool
  // joins the fabric on its own, after the tables: wait for its GPUs first.
  ASSERT_TRUE(waitFor(
      [&] {
        auto res = http->client.Get("/api/v1/pool");
        return res && res->status == 200 && json::parse(res->body)["total_gpus"].get<int>() > 0;
      },
      60s, 100ms));
  auto created = http->client.Post(
      "/api/v1/pool/allocations", httplib::Headers{{"Authorization", "Bearer wh4t"}},
      json{{"job_id", "train-1"}, {"gpus", 16}, {"gpus_per_host", 8}, {"class", "training"}}.dump(),
      "application/json");
  ASSERT_TRUE(created && created->status == 201) << (created ? created->body : "no answer");
  const json granted = json::parse(created->body)["allocation"]["hosts"];
  ASSERT_EQ(granted.size(), 2u) << created->body;
  const std::string victim = granted[1]["host"];
  const NetNode* victimHca = gen.fabric.find(victim + "-mlx5_0");
  ASSERT_NE(victimHca, nullptr) << victim;
  const json hcaCable = {{"node", victimHca->name()},
                         {"port", victimHca->ports.at(0).port.value()}};
  json w;
  ASSERT_TRUE(waitFor(  // the job service attributes the new allocation
      [&] {
        w = whatif(*http, {{"cables", {hcaCable}}});
        return w["allocations"].is_array() && !w["allocations"].empty() &&
               w["allocations"][0]["bottleneck"]["now_bytes_per_second"].is_number();
      },
      30s, 200ms))
      << w.dump();
  EXPECT_EQ(w["hcas_lost"], 1) << w.dump();
  ASSERT_EQ(w["allocations"].size(), 1u) << w.dump();
  const json& job = w["allocations"][0];
  EXPECT_EQ(job["job_id"], "train-1");
  EXPECT_EQ(job["source"], "pool");
  EXPECT_EQ(job["state"], "active");
  ASSERT_EQ(job["hosts_hit"].size(), 1u) << job.dump();
  EXPECT_EQ(job["hosts_hit"][0]["host"], victim);
  EXPECT_EQ(job["hosts_hit"][0]["hcas_lost"], 1);
  EXPECT_GT(job["bottleneck"]["now_bytes_per_second"].get<double>(), 0.0) << job.dump();
  EXPECT_EQ(job["bottleneck"]["after_bytes_per_second"].get<double>(), 0.0) << job.dump();
  EXPECT_DOUBLE_EQ(job["bottleneck"]["drop_fraction"].get<double>(), 1.0) << job.dump();
  ASSERT_TRUE(job["alternatives"].is_array()) << job.dump();
  ASSERT_FALSE(job["alternatives"].empty()) << job.dump();
  for (const auto& alt : job["alternatives"]) {
    EXPECT_EQ(alt["hosts"].size(), 2u);
    EXPECT_GT(alt["bottleneck_bytes_per_second"].get<double>(), 0.0) << alt.dump();
    for (const auto& h : alt["hosts"]) EXPECT_NE(h, victim) << alt.dump();
  }
  EXPECT_EQ(w["allocations_model"]["ready"], true) << w["allocations_model"].dump();
  const auto jobCli =
      runCli({"whatif", "--server", "http://127.0.0.1:" + std::to_string(port), "--cable",
              victimHca->name() + "/" + std::to_string(victimHca->ports.at(0).port.value())});
  ASSERT_EQ(jobCli.exitCode, 0) << jobCli.describe();
  EXPECT_NE(jobCli.out.find("job train-1 (pool, ring_allreduce): 1 of 2 hosts hit"),
            std::string::npos)
      << jobCli.out;
  EXPECT_NE(jobCli.out.find("(100 % lower)"), std::string::npos) << jobCli.out;
  EXPECT_NE(jobCli.out.find("alternative 1: "), std::string::npos) << jobCli.out;

  // The whole leaf: every HCA cabled to it, one per host on its rail.
  const json l = whatif(*http, {{"switches", {leaf->name()}}});
  EXPECT_EQ(l["hcas_lost"], hcasOnLeaf) << l.dump();

  // Now for real: no host loses an HCA, and after the SM's reroute nothing points at the cable.
  ASSERT_EQ(
      fabric.cmd("Unlink \"" + leaf->id + "\"[" + std::to_string(up->port.value()) + "]").exitCode,
      0);
  json after;
  EXPECT_TRUE(waitFor(
      [&] {
        after = whatif(*http, {{"cables", {cable}}});
        return after["reroute"].is_object() && after["reroute"]["destinations"] == 0;
      },
      90s, 500ms))
      << after.dump();
  for (const char* health : {"degraded", "down"})
    EXPECT_TRUE(http->ok(std::string("/api/v1/hosts?health=") + health)["hosts"].empty()) << health;
}

}  // namespace
}  // namespace ibfabric::testing
