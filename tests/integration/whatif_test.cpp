// What-if on a real ibsim + OpenSM fabric (2 leaves, 2 spines, 4 hosts of 8 HCAs; OpenSM's ftree
// routes, read by the daemon): draining a leaf–spine cable (asked by REST and with
// `ibfabric whatif`) cuts no host off, takes one up-link from its leaf and names destinations
// the SM must reroute; draining the leaf loses every HCA cabled to it. Then the cable is really
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
  const auto config = writeScratchFile(
      "whatif.yaml", "sweep_interval: 0.5\ncrawl_interval: 600\nsm_traps: false\n");
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
