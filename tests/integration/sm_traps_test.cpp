// The SM's traps through the standard subscription (SA InformInfo), on a real ibsim + OpenSM
// fabric without the OpenSM plugin: does OpenSM on ibsim deliver the Reports, and does the daemon
// act on them? ibsim's switches send trap 128 to the SM on Unlink/ReLink; OpenSM forwards it to
// every subscriber as a SubnAdmReport (ibsim hands it only to a client registered as an SM: the
// daemon's SA proxy does so under the simulator, api/daemon/mad_proxy_child.cpp). The daemon
// (sweeps every 60 s, a crawl every 10 minutes) subscribes at start, then a leaf-spine Unlink
// must be a link_down in /links?state=down and ReLink a link_up, both well before the next
// scheduled sweep, with the Reports counted in /health and /metrics. Every wait is bounded; the
// daemon and the fabric are stopped in teardown.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdlib>
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

/// The down links of /links?state=down, as "<a node>[<a port>]-<b node>[<b port>]".
std::set<std::string> downLinks(JsonClient& http) {
  std::set<std::string> out;
  const json body = http.ok("/api/v1/links?state=down");  // (a temporary's member would dangle)
  for (const auto& l : body["links"])
    out.insert(l["a"]["node"].get<std::string>() + "[" + l["a"]["port"].dump() + "]-" +
               l["b"]["node"].get<std::string>() + "[" + l["b"]["port"].dump() + "]");
  return out;
}

TEST(SmTrapsSim, OpenSmReportsBringLinkChangesBetweenSweeps) {
  TopoOptions o;
  o.leaves = 2;
  o.spines = 2;
  o.hostsPerLeaf = 2;
  const GeneratedTopology gen = generateTopology("two-level", o);
  const auto net = writeScratchFile("traps.net", gen.headerComment() + formatNetFile(gen.fabric));
  // leaf-02's first up-link (the daemon and OpenSM sit under leaf-01).
  const NetNode* leaf = gen.fabric.find("leaf-02");
  ASSERT_NE(leaf, nullptr);
  const NetPort* up = firstSwitchPort(gen.fabric, *leaf);
  ASSERT_NE(up, nullptr);
  const NetNode* spine = gen.fabric.find(up->remoteId);
  const std::string upLink = leaf->name() + "[" + std::to_string(up->port.value()) + "]-" +
                             spine->name() + "[" + std::to_string(up->remotePort.value()) + "]";

  SimFabric fabric(net, "traps");
  const auto config = writeScratchFile(
      "traps.yaml", "sweep_interval: 60\ncrawl_interval: 600\ncrawl_timeout: 10\nsm_traps: true\n");
  std::unique_ptr<JsonClient> http;
  // ibsim hands Reports only to an SM client: the SA proxy registers as one when asked.
  ::setenv("IBFABRIC_SIM_SM_CLIENT", "1", 1);
  auto daemon = startReadyDaemon(fabric, config, "traps", http);
  ::unsetenv("IBFABRIC_SIM_SM_CLIENT");
  ASSERT_TRUE(daemon);

  // Subscribed at the SM (OpenSM accepts SubnAdmSet(InformInfo) for 64, 65, 128 and 144).
  ASSERT_TRUE(
      waitFor([&] { return http->ok("/api/v1/health")["sm_traps"].value("subscribed", false); },
              30s, 100ms))
      << http->ok("/api/v1/health")["sm_traps"].dump() << daemon->log();
  json health = http->ok("/api/v1/health");
  EXPECT_EQ(health["sm_traps"]["sm_lid"], health["subnet"]["sm_lid"]);
  EXPECT_EQ(health["sm_traps"]["last_error"], "");
  EXPECT_TRUE(downLinks(*http).empty());

  ASSERT_EQ(
      fabric.cmd("Unlink \"" + leaf->id + "\"[" + std::to_string(up->port.value()) + "]").exitCode,
      0);
  ASSERT_TRUE(waitFor([&] { return downLinks(*http).count(upLink) > 0; }, 20s, 100ms))
      << upLink << " not in " << http->ok("/api/v1/links?state=down").dump()
      << http->ok("/api/v1/health")["sm_traps"].dump() << daemon->log();
  auto reports128 = [&] {
    return http->ok("/api/v1/health")["sm_traps"]["reports"].value("128", 0);
  };
  EXPECT_TRUE(waitFor([&] { return reports128() >= 1; }, 10s, 100ms))
      << http->ok("/api/v1/health")["sm_traps"].dump();
  // Before the next scheduled sweep (60 s; a sweep follows each model change): the trap's.
  EXPECT_NE(daemon->log().find("sm trap 128 (port state change)"), std::string::npos);
  EXPECT_TRUE(hasEvent(*http, "link_down", leaf->name()));

  ASSERT_EQ(
      fabric.cmd("ReLink \"" + leaf->id + "\"[" + std::to_string(up->port.value()) + "]").exitCode,
      0);
  ASSERT_TRUE(waitFor([&] { return downLinks(*http).empty(); }, 30s, 100ms))
      << http->ok("/api/v1/links?state=down").dump() << daemon->log();
  EXPECT_TRUE(hasEvent(*http, "link_up", leaf->name()));
  EXPECT_TRUE(waitFor([&] { return reports128() >= 2; }, 10s, 100ms))
      << http->ok("/api/v1/health")["sm_traps"].dump();
  health = http->ok("/api/v1/health");
  EXPECT_EQ(health["sm_traps"]["failures"], 0) << health["sm_traps"].dump();

  const std::string page = metricsWith(
      http->client,
      {"ibfabric_sm_trap_subscribed 1", "ibfabric_sm_trap_reports_total{trap=\"128\"}"});
  EXPECT_NE(page.find("ibfabric_sm_trap_subscribed 1"), std::string::npos);
  EXPECT_EQ(page.find("ibfabric_sm_trap_reports_total{trap=\"128\"} 0"), std::string::npos);
}

}  // namespace
}  // namespace ibfabric::testing
