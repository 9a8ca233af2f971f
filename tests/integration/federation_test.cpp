// ibfabric-federate over two simulated subnets: two ibsim instances (each its own
// IBSIM_SOCKNAME through `ibfabric sim up`) with two-level fat trees of different sizes, one
// ibfabricd each, and the federation binary in front of them. The hosts of both are listed with
// their subnet; a job that fits only the bigger subnet is placed there (the small one says
// unsatisfiable); the Slurm export has one root per subnet; with the small subnet's daemon
// stopped, its subnet is marked unavailable (error and age) and the big one is still served.
//
// Fabrics: "small" 2 leaves x 2 hosts, 1 spine (sa0001-sa0004); "big" 3 leaves x 3 hosts,
// 2 spines (sb0001-sb0009). Every wait is bounded; every process is stopped by its owner.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "discovery/netfile.h"
#include "discovery/topogen.h"
#include "tests/support/background_process.h"
#include "tests/support/daemon_process.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::filesystem::path fabricFile(const std::string& name, const std::string& prefix, int leaves,
                                 int spines, int hostsPerLeaf) {
  TopoOptions o;
  o.leaves = leaves;
  o.spines = spines;
  o.hostsPerLeaf = hostsPerLeaf;
  o.hostPrefix = prefix;
  return writeScratchFile(name + ".net", formatNetFile(generateTopology("two-level", o).fabric));
}

TEST(FederationSim, TwoSubnetsOneViewPlacementRoutedAndASubnetDown) {
  SimFabric small(fabricFile("fed-small", "sa", 2, 1, 2), "fed-small");
  SimFabric big(fabricFile("fed-big", "sb", 3, 2, 3), "fed-big");
  const auto daemonConfig = writeScratchFile("fed-daemon.yaml", "sweep_interval: 0.5\n");
  std::unique_ptr<JsonClient> smallHttp, bigHttp;
  int smallPort = 0, bigPort = 0;
  auto smallDaemon = startReadyDaemon(small, daemonConfig, "fed-small", smallHttp, &smallPort);
  ASSERT_TRUE(smallDaemon);
  auto bigDaemon = startReadyDaemon(big, daemonConfig, "fed-big", bigHttp, &bigPort);
  ASSERT_TRUE(bigDaemon);

  const auto config = writeScratchFile("federation.yaml",
                                       "listen: 127.0.0.1:0\ntimeout: 3\ncache_ttl: 0\nmembers:\n"
                                       "  - {name: small, url: \"http://127.0.0.1:" +
                                           std::to_string(smallPort) +
                                           "\"}\n"
                                           "  - {name: big, url: \"http://127.0.0.1:" +
                                           std::to_string(bigPort) + "\"}\n");
  BackgroundProcess federate({IBFABRIC_FEDERATE_PATH, "--config", config.string()},
                             writeScratchFile("federation.log", ""));
  const auto listening = federate.waitForLog("listening on http://127.0.0.1:", 30s);
  ASSERT_TRUE(listening) << federate.log();
  JsonClient fed(std::stoi(*listening), 30);

  // Hosts of both subnets, each with its subnet.
  auto [hs, hosts] = fed.get("/api/v1/hosts");
  ASSERT_EQ(hs, 200) << hosts.dump();
  std::set<std::string> names;
  for (const auto& h : hosts["hosts"]) {
    const std::string name = h["name"];
    names.insert(name);
    EXPECT_EQ(h["subnet"], name.rfind("sa", 0) == 0 ? "small" : "big") << h.dump();
  }
  EXPECT_EQ(names.size(), 13u) << hosts.dump();
  EXPECT_TRUE(hosts["unavailable"].empty()) << hosts.dump();
  auto [fs, fabric] = fed.get("/api/v1/fabric");
  ASSERT_EQ(fs, 200) << fabric.dump();
  EXPECT_EQ(fabric["totals"]["hosts"], 13) << fabric.dump();

  // Links page across the two subnets, each tagged; events carry namespaced ids.
  auto [ls, links] = fed.get("/api/v1/links?limit=7");
  ASSERT_EQ(ls, 200) << links.dump();
  EXPECT_EQ(links["links"].size(), 7u) << links.dump();
  std::set<std::string> linkSubnets;
  std::string cursor = links.value("next_cursor", "");
  for (const auto& l : links["links"]) linkSubnets.insert(l["subnet"].get<std::string>());
  for (int page = 0; page < 20 && !cursor.empty(); ++page) {
    auto [s, more] = fed.get("/api/v1/links?limit=7&cursor=" + cursor);
    ASSERT_EQ(s, 200) << more.dump();
    for (const auto& l : more["links"]) linkSubnets.insert(l["subnet"].get<std::string>());
    cursor = more.value("next_cursor", "");
  }
  EXPECT_EQ(linkSubnets, (std::set<std::string>{"small", "big"}));
  auto [es, events] = fed.get("/api/v1/events");
  ASSERT_EQ(es, 200) << events.dump();
  for (const auto& e : events["events"])
    EXPECT_EQ(e["id"].get<std::string>().rfind(e["subnet"].get<std::string>() + ":", 0), 0u)
        << e.dump();
  EXPECT_NE(events["last_id"].get<std::string>().find("big:"), std::string::npos);
  auto hyper = fed.client.Get("/api/v1/export/volcano-hypernodes");
  ASSERT_TRUE(hyper);
  EXPECT_EQ(hyper->status, 200) << hyper->body;
  EXPECT_NE(hyper->body.find("ibfabric.io/subnet: \"small\""), std::string::npos) << hyper->body;
  EXPECT_NE(hyper->body.find("ibfabric.io/subnet: \"big\""), std::string::npos) << hyper->body;

  // A 6-host job fits only the big subnet (each daemon is ready for placements once it read
  // the forwarding tables: bounded wait until both answer).
  json placed;
  const bool routed = waitFor(
      [&] {
        auto r = fed.client.Post("/api/v1/placement", R"({"hosts": 6})", "application/json");
        if (!r) return false;
        placed = json::parse(r->body, nullptr, false);
        return r->status == 200 && placed["subnets"][0]["result"] == "unsatisfiable";
      },
      90s, 250ms);
  ASSERT_TRUE(routed) << placed.dump();
  EXPECT_EQ(placed["subnet"], "big") << placed.dump();
  ASSERT_FALSE(placed["options"].empty()) << placed.dump();
  for (const auto& h : placed["options"][0]["hosts"])
    EXPECT_EQ(h.get<std::string>().rfind("sb", 0), 0u) << placed.dump();

  // One root switch per subnet in the Slurm export.
  auto slurm = fed.client.Get("/api/v1/export/slurm-topology");
  ASSERT_TRUE(slurm);
  EXPECT_EQ(slurm->status, 200) << slurm->body;
  EXPECT_NE(slurm->body.find("SwitchName=small "), std::string::npos) << slurm->body;
  EXPECT_NE(slurm->body.find("SwitchName=big "), std::string::npos) << slurm->body;
  EXPECT_EQ(slurm->body.find("ibfabric-root"), std::string::npos) << slurm->body;

  // The small subnet's daemon stops: its subnet is unavailable, the big one still served.
  EXPECT_GE(smallDaemon->signalAndWait(SIGTERM, 30s), 0);
  smallDaemon.reset();
  auto [h2s, health] = fed.get("/api/v1/health");
  EXPECT_EQ(h2s, 200) << health.dump();
  EXPECT_EQ(health["status"], "degraded") << health.dump();
  EXPECT_EQ(health["subnets"][0]["available"], false) << health.dump();
  EXPECT_TRUE(health["subnets"][0]["age_seconds"].is_number()) << health.dump();
  EXPECT_FALSE(health["subnets"][0]["error"].get<std::string>().empty()) << health.dump();
  EXPECT_EQ(health["subnets"][1]["available"], true) << health.dump();
  auto [h3s, after] = fed.get("/api/v1/hosts");
  ASSERT_EQ(h3s, 200) << after.dump();
  EXPECT_EQ(after["hosts"].size(), 9u) << after.dump();
  ASSERT_EQ(after["unavailable"].size(), 1u) << after.dump();
  EXPECT_EQ(after["unavailable"][0]["subnet"], "small") << after.dump();
  auto r = fed.client.Post("/api/v1/placement", R"({"hosts": 2})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(json::parse(r->body, nullptr, false)["subnet"], "big") << r->body;
  auto slurmDown = fed.client.Get("/api/v1/export/slurm-topology");
  ASSERT_TRUE(slurmDown);
  EXPECT_EQ(slurmDown->status, 503);

  expectCleanStop(federate, "ibfabric-federate");
  EXPECT_GE(bigDaemon->signalAndWait(SIGTERM, 30s), 0);
}

}  // namespace
}  // namespace ibfabric::testing
