// A fabric that remembers, on a real ibsim + OpenSM fabric (2 leaves, 2 spines, 4 hosts of 8
// HCAs; OpenSM on dgx0001; sweeps every 0.5 s, a crawl every 10 minutes, no plugin, no trap
// subscription): one HCA cable of dgx0003 and one leaf-spine cable unlinked → both in
// /links?state=down with since-when within two sweeps after the one under way, through the
// sweeps' PortInfo probes, without a crawl, the HCA's port Down, dgx0003 degraded naming the HCA
// and its rail, its link series still on /metrics with the down value, the extender failing
// dgx0003 (passing it with allow-degraded), the Slurm export still listing it under its leaf,
// link_down events; both ReLinked → up within two sweeps (link_up), then pulled again. SIGTERM
// and restart, then kill -9 and restart: both cables still known and down with the same since,
// the HCA a missing node (node_missing, its missing-since series). Forgetting: present hardware
// is refused (409), the missing HCA is forgotten with the CLI, the missing leaf-spine cable by
// REST; ReLinked, that cable is back as a present one (which cannot be forgotten). Every wait is
// bounded; the daemons and the fabric are stopped in teardown.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <filesystem>
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
namespace fs = std::filesystem;

constexpr const char* kToken = "r3member";

/// The down links of /links?state=down, by "<a node>[<a port>]-<b node>[<b port>]".
std::map<std::string, json> downLinks(JsonClient& http) {
  std::map<std::string, json> out;
  const json body = http.ok("/api/v1/links?state=down");
  for (const auto& l : body["links"])
    out[l["a"]["node"].get<std::string>() + "[" + l["a"]["port"].dump() + "]-" +
        l["b"]["node"].get<std::string>() + "[" + l["b"]["port"].dump() + "]"] = l;
  return out;
}

/// Both pulled cables are down and missing (with their since-when), after at most `timeout`.
bool bothMissing(JsonClient& http, const std::string& hcaLink, const std::string& upLink,
                 std::chrono::milliseconds timeout = 30s) {
  return waitFor(
      [&] {
        auto down = downLinks(http);
        return down.count(hcaLink) && down.count(upLink) && down[hcaLink]["missing"].is_object() &&
               down[upLink]["missing"].is_object();
      },
      timeout, 100ms);
}

json extenderArgs(const std::vector<std::string>& names, bool allowDegraded) {
  return {
      {"Pod",
       {{"metadata",
         {{"name", "train-0"},
          {"namespace", "ml"},
          {"annotations", {{"ibfabric.io/allow-degraded", allowDegraded ? "true" : "false"}}}}}}},
      {"Nodes", nullptr},
      {"NodeNames", names}};
}

json filter(JsonClient& http, bool allowDegraded) {
  auto res = http.client.Post("/scheduler/filter",
                              extenderArgs({"dgx0002", "dgx0003"}, allowDegraded).dump(),
                              "application/json");
  EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no answer");
  return res ? json::parse(res->body, nullptr, false) : json();
}

TEST(RememberedFabricSim, MissingHardwareStaysInEveryViewAcrossRestartsUntilForgotten) {
  TopoOptions o;
  o.leaves = 2;
  o.spines = 2;
  o.hostsPerLeaf = 2;
  o.hcasPerHost = 8;
  const GeneratedTopology gen = generateTopology("two-level", o);
  const auto net =
      writeScratchFile("remember.net", gen.headerComment() + formatNetFile(gen.fabric));
  // dgx0003's second HCA and its leaf's first up-link (dgx0001, OpenSM's host, stays whole).
  const NetNode* hca = gen.fabric.find("dgx0003-mlx5_1");
  ASSERT_NE(hca, nullptr);
  const NetNode* leaf = gen.fabric.find(hca->ports.at(0).remoteId);
  ASSERT_NE(leaf, nullptr);
  const NetPort* up = firstSwitchPort(gen.fabric, *leaf);
  ASSERT_NE(up, nullptr);
  const NetNode* spine = gen.fabric.find(up->remoteId);
  const std::string hcaLink = hca->name() + "[1]-" + leaf->name() + "[" +
                              std::to_string(hca->ports.at(0).remotePort.value()) + "]";
  const std::string upLink = leaf->name() + "[" + std::to_string(up->port.value()) + "]-" +
                             spine->name() + "[" + std::to_string(up->remotePort.value()) + "]";

  SimFabric fabric(net, "remember");
  const fs::path state = scratchDir() / "remember-state";
  fs::remove_all(state);
  const auto config = writeScratchFile(
      "remember.yaml",
      "sweep_interval: 0.5\ncrawl_interval: 600\ncrawl_timeout: 10\nsm_traps: false\napi_token: " +
          std::string(kToken) + "\nstate: {dir: " + state.string() + "}\n");
  std::unique_ptr<JsonClient> http;
  int port = -1;
  auto daemon = startReadyDaemon(fabric, config, "remember", http, &port);
  ASSERT_TRUE(daemon);
  const std::size_t links = http->ok("/api/v1/topology")["links"];
  const std::string hcaGuid = guidOf(*http, hca->name());
  ASSERT_FALSE(hcaGuid.empty());
  EXPECT_TRUE(downLinks(*http).empty());
  auto slurmBefore = http->client.Get("/api/v1/export/slurm-topology");
  ASSERT_TRUE(slurmBefore);

  const auto sweepNow = [&] { return http->ok("/api/v1/health")["sweep"]["sequence"].get<int>(); };
  const int sweepAtUnlink = sweepNow();
  ASSERT_EQ(fabric.cmd("Unlink \"" + hca->id + "\"[1]").exitCode, 0);
  ASSERT_EQ(
      fabric.cmd("Unlink \"" + leaf->id + "\"[" + std::to_string(up->port.value()) + "]").exitCode,
      0);
  ASSERT_TRUE(bothMissing(*http, hcaLink, upLink)) << http->ok("/api/v1/links").dump();
  // Within two sweeps after the one that was under way (and the one the poll may trail by).
  EXPECT_LE(sweepNow() - sweepAtUnlink, 4) << "sweeps it took";
  auto down = downLinks(*http);
  const double hcaSince = down[hcaLink]["missing"]["since"];
  const double upSince = down[upLink]["missing"]["since"];
  EXPECT_LE(down[hcaLink]["missing"]["last_seen"].get<double>(), hcaSince);
  EXPECT_EQ(down[hcaLink]["state"], "down");
  EXPECT_EQ(http->ok("/api/v1/topology")["links"], links);  // nothing left the model
  // Seen by the sweeps' probes (the crawl runs every 10 minutes).
  json summary = http->ok("/api/v1/topology");
  EXPECT_EQ(summary["missing"]["links"], 2) << summary.dump();

  // The HCA's port is Down; its host degraded, naming it and its rail.
  json node = http->ok("/api/v1/nodes/" + hcaGuid);
  EXPECT_EQ(node["ports"][0]["state"], "Down") << node.dump();
  ASSERT_TRUE(waitFor(
      [&] {
        const json h = http->ok("/api/v1/hosts/dgx0003");
        return h.value("health", json()).value("status", "") == "degraded";
      },
      30s, 100ms))
      << http->ok("/api/v1/hosts/dgx0003").dump();
  const json host = http->ok("/api/v1/hosts/dgx0003");
  const std::string reason = host["health"]["reason"];
  EXPECT_NE(reason.find(hca->name()), std::string::npos) << reason;
  if (node.contains("rail")) {
    EXPECT_NE(reason.find("(rail " + node["rail"].dump() + ")"), std::string::npos) << reason;
  }
  EXPECT_EQ(host["hcas"].size(), 8u);

  // Metrics: the cable's series stay, with the down value (3).
  const std::string downSeries = "ibfabric_link_health_id{guid=\"" + hcaGuid + "\",port=\"1\"";
  std::string value;
  EXPECT_TRUE(waitFor(  // the page is rendered off the request path: the next rendering
      [&] {
        auto m = http->client.Get("/metrics");
        const auto at = m ? m->body.find(downSeries) : std::string::npos;
        if (at == std::string::npos) return false;
        value = m->body.substr(m->body.find('}', at) + 1, 2);
        return value == " 3";
      },
      30s, 200ms))
      << downSeries << " has" << value;

  // The extender fails the degraded host (unless allowed); Slurm keeps it under its leaf.
  const json failed = filter(*http, false);
  EXPECT_TRUE(failed["FailedNodes"].contains("dgx0003")) << failed.dump();
  EXPECT_EQ(failed["NodeNames"], json({"dgx0002"})) << failed.dump();
  EXPECT_EQ(filter(*http, true)["NodeNames"], json({"dgx0002", "dgx0003"}));
  auto slurm = http->client.Get("/api/v1/export/slurm-topology");
  ASSERT_TRUE(slurm);
  EXPECT_EQ(slurm->body, slurmBefore->body);

  EXPECT_TRUE(hasEvent(*http, "link_down", hca->name()));

  // ReLinked, both are up again within two sweeps after the one under way (the re-checks of
  // the switches holding missing cables), then pulled again for the restarts below.
  const std::string relinkHca = "ReLink \"" + hca->id + "\"[1]";
  const std::string relinkUp =
      "ReLink \"" + leaf->id + "\"[" + std::to_string(up->port.value()) + "]";
  const int sweepAtRelink = sweepNow();
  ASSERT_EQ(fabric.cmd(relinkHca).exitCode, 0);
  ASSERT_EQ(fabric.cmd(relinkUp).exitCode, 0);
  ASSERT_TRUE(waitFor([&] { return downLinks(*http).empty(); }, 30s, 100ms))
      << http->ok("/api/v1/links?state=down").dump();
  EXPECT_LE(sweepNow() - sweepAtRelink, 4) << "sweeps it took";
  EXPECT_TRUE(hasEvent(*http, "link_up", hca->name()));
  EXPECT_TRUE(hasEvent(*http, "link_up", leaf->name()));
  // Back in the model (init or active); Active once OpenSM has activated them, every cable.
  EXPECT_TRUE(
      waitFor([&] { return http->ok("/api/v1/links?state=active")["count"] == links; }, 60s, 200ms))
      << http->ok("/api/v1/links?state=init").dump();
  ASSERT_EQ(fabric.cmd("Unlink \"" + hca->id + "\"[1]").exitCode, 0);
  ASSERT_EQ(
      fabric.cmd("Unlink \"" + leaf->id + "\"[" + std::to_string(up->port.value()) + "]").exitCode,
      0);
  ASSERT_TRUE(bothMissing(*http, hcaLink, upLink)) << http->ok("/api/v1/links").dump();
  down = downLinks(*http);
  const double hcaSince2 = down[hcaLink]["missing"]["since"];
  const double upSince2 = down[upLink]["missing"]["since"];
  EXPECT_GT(hcaSince2, hcaSince);  // missing again, since now
  EXPECT_GT(upSince2, upSince);

  // Restarts: SIGTERM, then kill -9 (after the journal's write): both cables still missing,
  // with their first since.
  for (const int sig : {SIGTERM, SIGKILL}) {
    if (sig == SIGKILL) {
      // Once the journal has written this run's model (its first crawl's: with both cables
      // missing). SIGTERM writes the model on the way out; kill -9 does not.
      ASSERT_TRUE(waitFor(
          [&] { return http->ok("/api/v1/health")["store"]["fabric"]["writes"].get<int>() >= 1; },
          10s, 100ms))
          << http->ok("/api/v1/health")["store"].dump();
      const pid_t pid = daemon->daemonPid();
      ASSERT_GT(pid, 0);
      ASSERT_EQ(::kill(pid, SIGKILL), 0);
    }
    daemon->signalAndWait(SIGTERM, 15s);
    daemon.reset();
    daemon = startReadyDaemon(fabric, config, "remember", http, &port);
    ASSERT_TRUE(daemon);
    const json restored = http->ok("/api/v1/health")["store"]["fabric"];
    EXPECT_EQ(restored["restored_cables"], links) << restored.dump();
    ASSERT_TRUE(bothMissing(*http, hcaLink, upLink)) << http->ok("/api/v1/links").dump();
    down = downLinks(*http);
    // The store keeps milliseconds.
    EXPECT_NEAR(down[hcaLink]["missing"]["since"].get<double>(), hcaSince2, 0.002);
    EXPECT_NEAR(down[upLink]["missing"]["since"].get<double>(), upSince2, 0.002);
    EXPECT_TRUE(hasEvent(*http, "link_down", hca->name()));  // the events are durable too
    // The restarted daemon's first crawl no longer finds the HCA: a missing node, no LID.
    node = http->ok("/api/v1/nodes/" + hcaGuid);
    EXPECT_TRUE(node["missing"].is_object()) << node.dump();
    EXPECT_EQ(node["lid"], 0) << node.dump();
    summary = http->ok("/api/v1/topology");
    EXPECT_EQ(summary["missing"]["cas"], 1) << summary.dump();
    // Its missing-since series (IbNodeMissing), its name in node_info.
    const std::vector<std::string> needles = {
        "ibfabric_node_missing_since_timestamp_seconds{guid=\"" + hcaGuid + "\"}",
        "ibfabric_node_info{guid=\"" + hcaGuid + "\",host=\"dgx0003\""};
    const std::string page = metricsWith(http->client, needles, 30s);
    for (const auto& n : needles) EXPECT_NE(page.find(n), std::string::npos) << n;
  }
  EXPECT_TRUE(hasEvent(*http, "node_missing", hca->name()));

  // The HCA the crawl lost comes back with its cable, without a crawl: the sweeps re-check its
  // leaf, whose port reads linked, and the node answering there by directed route (NodeInfo) is
  // the remembered HCA at the remembered port. Within two sweeps; Active with its LID once OpenSM
  // has activated it.
  const auto linkUps = [&] {
    // Held by name: a range-for over a member of the temporary would dangle.
    const json ups = http->ok("/api/v1/events?since=0&limit=10000&type=link_up");
    int n = 0;
    for (const auto& e : ups["events"])
      n += e["node"] == hca->name() ||
           (e["remote"].is_object() && e["remote"]["node"] == hca->name());
    return n;
  };
  const int upsBefore = linkUps();
  const int crawlsBefore = http->ok("/api/v1/health")["crawl"]["runs"].get<int>();
  const int sweepAtHcaBack = sweepNow();
  ASSERT_EQ(fabric.cmd(relinkHca).exitCode, 0);
  ASSERT_TRUE(waitFor([&] { return !downLinks(*http).count(hcaLink); }, 30s, 100ms))
      << http->ok("/api/v1/links?state=down").dump();
  EXPECT_LE(sweepNow() - sweepAtHcaBack, 4) << "sweeps it took";
  EXPECT_EQ(linkUps(), upsBefore + 1) << http->ok("/api/v1/events?since=0&limit=10000").dump(1);
  node = http->ok("/api/v1/nodes/" + hcaGuid);
  EXPECT_TRUE(node["missing"].is_null()) << node.dump();
  EXPECT_EQ(http->ok("/api/v1/topology")["missing"]["cas"], 0);
  EXPECT_TRUE(waitFor(
      [&] {
        const json n = http->ok("/api/v1/nodes/" + hcaGuid);
        return n["lid"].get<int>() != 0 && n["ports"][0]["state"] == "Active";
      },
      90s, 200ms))
      << http->ok("/api/v1/nodes/" + hcaGuid).dump();
  EXPECT_EQ(http->ok("/api/v1/health")["crawl"]["runs"].get<int>(), crawlsBefore);
  // Pulled again, and crawled: a missing node once more, for the forgetting below.
  ASSERT_EQ(fabric.cmd("Unlink \"" + hca->id + "\"[1]").exitCode, 0);
  ASSERT_TRUE(waitFor([&] { return downLinks(*http).count(hcaLink) > 0; }, 30s, 100ms));
  EXPECT_EQ(http->post("/api/v1/discover", kToken).first, 202);
  ASSERT_TRUE(waitFor([&] { return http->ok("/api/v1/nodes/" + hcaGuid)["missing"].is_object(); },
                      60s, 200ms));

  // Forgetting: present hardware never; the missing HCA with the CLI, the cable by REST.
  httplib::Headers auth{{"Authorization", std::string("Bearer ") + kToken}};
  auto present =
      http->client.Delete(("/api/v1/nodes/" + guidOf(*http, leaf->name())).c_str(), auth);
  ASSERT_TRUE(present);
  EXPECT_EQ(present->status, 409) << present->body;
  EXPECT_EQ(http->client.Delete(("/api/v1/nodes/" + hcaGuid).c_str())->status, 401);
  const auto tokenFile = writeScratchFile("remember.token", std::string(kToken) + "\n");
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  auto cli =
      runCli({"forget", "--server", url, "--node", hcaGuid, "--token-file", tokenFile.string()});
  EXPECT_EQ(cli.exitCode, 0) << cli.describe();
  EXPECT_EQ(http->get("/api/v1/nodes/" + hcaGuid).first, 404);
  EXPECT_TRUE(hasEvent(*http, "hardware_forgotten", hca->name()));
  down = downLinks(*http);
  EXPECT_EQ(down.count(hcaLink), 0u);
  ASSERT_EQ(down.count(upLink), 1u);
  const std::string leafGuid = guidOf(*http, leaf->name());
  const std::string cablePath =
      "/api/v1/links/" + leafGuid + "/" + std::to_string(up->port.value());
  auto forgotten = http->client.Delete(cablePath.c_str(), auth);
  ASSERT_TRUE(forgotten);
  EXPECT_EQ(forgotten->status, 200) << forgotten->body;
  EXPECT_TRUE(downLinks(*http).empty());
  EXPECT_EQ(http->ok("/api/v1/topology")["links"], links - 2);

  // The leaf-spine cable comes back: forgotten, it is a new cable to the next crawl (asked for).
  ASSERT_EQ(
      fabric.cmd("ReLink \"" + leaf->id + "\"[" + std::to_string(up->port.value()) + "]").exitCode,
      0);
  EXPECT_EQ(http->post("/api/v1/discover", kToken).first, 202);
  ASSERT_TRUE(
      waitFor([&] { return http->ok("/api/v1/topology")["links"] == links - 1; }, 60s, 200ms))
      << http->ok("/api/v1/topology").dump();
  EXPECT_TRUE(downLinks(*http).empty());
  // A cable that is present cannot be forgotten.
  auto cable = http->client.Delete(cablePath.c_str(), auth);
  ASSERT_TRUE(cable);
  EXPECT_EQ(cable->status, 409) << cable->body;
  daemon->signalAndWait(SIGTERM, 15s);
}

}  // namespace
}  // namespace ibfabric::testing
