// The kube-scheduler extender and the scheduler exports through the real daemon's HTTP server on
// an ibsim + OpenSM fabric: every host passes the filter while the fabric is healthy; after
// `Unlink` of one host's HCA cable the filter drops that host (and keeps the others), prioritize
// still scores every candidate, the Slurm export leaves the host out, and `ibfabric export
// --server` prints what the daemon serves. Bounded waits only.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "discovery/netfile.h"
#include "discovery/topogen.h"
#include "tests/support/daemon_process.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

using Daemon = DaemonProcess;

json post(httplib::Client& c, const std::string& path, const json& body) {
  auto res = c.Post(path.c_str(), body.dump(), "application/json");
  EXPECT_TRUE(res) << path;
  if (!res) return {};
  EXPECT_EQ(res->status, 200) << path << ": " << res->body;
  return json::parse(res->body, nullptr, false);
}

json extenderArgs(const std::vector<std::string>& names, bool allowDegraded = false) {
  return {{"Pod",
           {{"metadata",
             {{"name", "train-0"},
              {"namespace", "ml"},
              {"annotations",
               {{"ibfabric.io/peer-hosts", "dgx0001"},
                {"ibfabric.io/allow-degraded", allowDegraded ? "true" : "false"}}}}},
            {"spec", {{"schedulerName", "default-scheduler"}}}}},
          {"Nodes", nullptr},
          {"NodeNames", names}};
}

TEST(ExtenderSim, FilterDropsAHostWhoseHcaLinkIsUnlinked) {
  TopoOptions o;
  o.leaves = 2;
  o.spines = 2;
  o.hostsPerLeaf = 2;
  GeneratedTopology g = generateTopology("two-level", o);
  auto net = writeScratchFile("extender.net", g.headerComment() + formatNetFile(g.fabric));
  SimFabric fabric(net, "extender");
  auto config = writeScratchFile("extender.yaml", "sweep_interval: 0.5\n");
  Daemon daemon(
      fabric, {"--config", config.string(), "--listen", "127.0.0.1:0", "--crawl-interval", "0.5"});
  const int port = daemon.waitForPort(60s);
  ASSERT_GT(port, 0) << daemon.log();
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(30, 0);
  ASSERT_TRUE(waitFor(
      [&] {
        auto res = c.Get("/api/v1/health");
        return res && res->status == 200;
      },
      60s, 100ms))
      << daemon.log();

  const std::vector<std::string> all = {"dgx0001", "dgx0002", "dgx0003", "dgx0004"};
  // Healthy fabric: every host passes.
  ASSERT_TRUE(waitFor(
      [&] {
        json r = post(c, "/scheduler/filter", extenderArgs(all));
        return r["NodeNames"] == json(all) && r["FailedNodes"].empty();
      },
      30s, 200ms))
      << post(c, "/scheduler/filter", extenderArgs(all)).dump();
  auto slurm = c.Get("/api/v1/export/slurm-topology");
  ASSERT_TRUE(slurm);
  EXPECT_EQ(slurm->status, 200);
  EXPECT_NE(slurm->body.find("SwitchName=leaf-01 Nodes=dgx[0001-0002]\n"), std::string::npos)
      << slurm->body;

  // Unplug dgx0002's only HCA (OpenSM runs on dgx0001, the daemon on dgx0004). The daemon's
  // probes of the vanished port are dropped at leaf-02, whose port to dgx0004 then counts
  // PortRcvSwitchRelayErrors: dgx0004 may turn degraded, so the pod accepts degraded hosts.
  auto unlink = fabric.cmd(R"(Unlink "dgx0002-mlx5_0"[1])");
  ASSERT_EQ(unlink.exitCode, 0) << unlink.describe();
  json last;
  ASSERT_TRUE(waitFor(
      [&] {
        last = post(c, "/scheduler/filter", extenderArgs(all, true));
        return last["FailedNodes"].contains("dgx0002");
      },
      60s, 200ms))
      << last.dump() << "\n"
      << daemon.log();
  EXPECT_EQ(last["NodeNames"], json({"dgx0001", "dgx0003", "dgx0004"})) << last.dump();
  EXPECT_EQ(last["Error"], "");
  EXPECT_NE(last["FailedNodes"]["dgx0002"].get<std::string>().find("HCA link down"),
            std::string::npos)
      << last.dump();
  EXPECT_TRUE(last["FailedAndUnresolvableNodes"].contains("dgx0002"));

  json prio = post(c, "/scheduler/prioritize", extenderArgs({"dgx0003", "dgx0004"}));
  ASSERT_TRUE(prio.is_array()) << prio.dump();
  ASSERT_EQ(prio.size(), 2u);
  for (const auto& hp : prio) {
    EXPECT_GE(hp["Score"].get<int>(), 0);
    EXPECT_LE(hp["Score"].get<int>(), 10);
  }

  auto excluded = c.Get("/api/v1/export/slurm-topology?plugin=block&exclude_unhealthy=true");
  ASSERT_TRUE(excluded);
  EXPECT_EQ(excluded->status, 200);
  // Left out on request, and said so in a comment (the host is remembered, not forgotten).
  EXPECT_NE(excluded->body.find("# left out: dgx0002: down ("), std::string::npos)
      << excluded->body;
  EXPECT_NE(excluded->body.find("BlockName=leaf-01 Nodes=dgx0001\n"), std::string::npos)
      << excluded->body;
  EXPECT_NE(excluded->body.find("BlockName=leaf-02 Nodes=dgx[0003-0004]\n"), std::string::npos)
      << excluded->body;
  // Not excluded: it keeps its place under its leaf.
  auto kept = c.Get("/api/v1/export/slurm-topology?plugin=block");
  ASSERT_TRUE(kept);
  EXPECT_NE(kept->body.find("BlockName=leaf-01 Nodes=dgx[0001-0002]\n"), std::string::npos)
      << kept->body;
  auto bad = c.Get("/api/v1/export/slurm-topology?plugin=torus");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  // Kueue: v1beta2 by default; object names and API versions checked, the reason in the 400.
  auto kueue = c.Get("/api/v1/export/kueue-topology");
  ASSERT_TRUE(kueue);
  EXPECT_EQ(kueue->status, 200);
  EXPECT_EQ(kueue->body.rfind("apiVersion: kueue.x-k8s.io/v1beta2\n", 0), 0u) << kueue->body;
  for (const char* query : {"name=bad_name", "api_version=foo/bar", "name=Fabric"}) {
    auto rejected = c.Get(std::string("/api/v1/export/kueue-topology?") + query);
    ASSERT_TRUE(rejected);
    EXPECT_EQ(rejected->status, 400) << query;
    EXPECT_NE(
        rejected->body.find(std::string(query).substr(0, std::string(query).find('=')) + ": '"),
        std::string::npos)
        << rejected->body;
  }

  // The CLI asks the daemon.
  auto cli = runCli({"export", "k8s-labels", "--format", "json", "--server",
                     "http://127.0.0.1:" + std::to_string(port)});
  ASSERT_EQ(cli.exitCode, 0) << cli.describe();
  json labels = json::parse(cli.out, nullptr, false);
  EXPECT_EQ(labels["nodes"]["dgx0003"]["ibfabric.io/leaf"], "leaf-02") << cli.out;
}

}  // namespace
}  // namespace ibfabric::testing
