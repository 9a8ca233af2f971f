// The federation's pure parts: its configuration, the merged views (health, fabric totals,
// pool), events merged by time with namespaced ids and a per-subnet cursor, the Slurm and
// Volcano exports with one root per subnet, and where a job goes (placement, pool allocation).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/federation/federation_config.h"
#include "api/federation/job_routing.h"
#include "api/federation/merged_events.h"
#include "api/federation/merged_exports.h"
#include "api/federation/merged_views.h"

namespace ibfabric::api::federation {
namespace {

using nlohmann::json;

SubnetAnswer ok(const std::string& subnet, json body, int status = 200) {
  SubnetAnswer a;
  a.subnet = subnet;
  a.available = true;
  a.status = status;
  a.body = std::move(body);
  return a;
}

SubnetAnswer text(const std::string& subnet, std::string t) {
  SubnetAnswer a = ok(subnet, nullptr);
  a.text = std::move(t);
  return a;
}

SubnetAnswer down(const std::string& subnet, const std::string& error = "cannot connect") {
  SubnetAnswer a;
  a.subnet = subnet;
  a.problem = {{"subnet", subnet}, {"available", false}, {"error", error}, {"age_seconds", 12.5}};
  return a;
}

TEST(FederationConfig, ParsesMembersAndDefaults) {
  const auto c = parseFederationConfig(R"(
listen: "127.0.0.1:0"
timeout: 2.5
placement: first
members:
  - {name: east, url: "http://10.0.0.1:9464", token: s3cret, timeout: 1}
  - {url: "http://10.0.0.2:9464/"}
)");
  EXPECT_EQ(c.listenPort, 0);
  EXPECT_EQ(c.timeout.count(), 2500);
  EXPECT_EQ(c.placement, RoutingPolicy::kFirst);
  ASSERT_EQ(c.members.size(), 2u);
  EXPECT_EQ(c.members[0].name, "east");
  EXPECT_EQ(c.members[0].token, "s3cret");
  EXPECT_EQ(c.timeoutOf(c.members[0]).count(), 1000);
  EXPECT_EQ(c.timeoutOf(c.members[1]).count(), 2500);
  EXPECT_EQ(c.members[1].name, "");
}

TEST(FederationConfig, ThePackagedExampleLoads) {
  const auto c = loadFederationConfigFile(IBFABRIC_SOURCE_DIR "/packaging/ibfabric-federate.yaml");
  EXPECT_EQ(c.members.size(), 2u);
  EXPECT_EQ(c.listenPort, 9470);
}

TEST(FederationConfig, RejectsWhatCannotWork) {
  EXPECT_THROW(parseFederationConfig("listen: 127.0.0.1:1\n"), FederationConfigError);
  EXPECT_THROW(parseFederationConfig("members: [{url: ftp://x}]\n"), FederationConfigError);
  EXPECT_THROW(parseFederationConfig("members: [{name: East, url: http://x}]\n"),
               FederationConfigError);
  EXPECT_THROW(
      parseFederationConfig("members: [{name: a, url: 'http://x'}, {name: a, url: 'http://y'}]\n"),
      FederationConfigError);
  EXPECT_THROW(parseFederationConfig("members: [{url: 'http://x', colour: red}]\n"),
               FederationConfigError);
  EXPECT_THROW(parseFederationConfig("placement: random\nmembers: [{url: 'http://x'}]\n"),
               FederationConfigError);
  EXPECT_EQ(sanitizeSubnetName("  Rack B/HDR  "), "rack-b-hdr");
  EXPECT_TRUE(validSubnetName("su-01"));
  EXPECT_FALSE(validSubnetName("-a"));
}

TEST(FederationViews, HealthIsDegradedWhenOneSubnetIsDown) {
  std::vector<SubnetAnswer> h = {
      ok("east", {{"status", "ready"}, {"ready", true}, {"role", "active"}}), down("west")};
  std::vector<json> members = {{{"subnet", "east"}, {"url", "http://e"}},
                               {{"subnet", "west"}, {"url", "http://w"}, {"age_seconds", 12.5}}};
  const json j = mergedHealth(h, members);
  EXPECT_EQ(j["status"], "degraded");
  EXPECT_EQ(j["available"], 1);
  EXPECT_EQ(j["subnets"][0]["role"], "active");
  EXPECT_EQ(j["subnets"][0]["available"], true);
  EXPECT_EQ(j["subnets"][1]["available"], false);
  EXPECT_EQ(j["subnets"][1]["error"], "cannot connect");
  EXPECT_EQ(j["subnets"][1]["age_seconds"], 12.5);
  EXPECT_EQ(mergedHealth({down("a")}, {})["status"], "unavailable");
}

TEST(FederationViews, FabricTotalsSumTheAvailableSubnets) {
  const json j = mergedFabric({ok("east", {{"switches", 6},
                                           {"hosts", 16},
                                           {"links", 24},
                                           {"max_level", 2},
                                           {"links_by_state", {{"active", 24}}},
                                           {"age_seconds", 3.0}}),
                               ok("west", {{"switches", 10},
                                           {"hosts", 32},
                                           {"links", 48},
                                           {"max_level", 3},
                                           {"links_by_state", {{"active", 47}, {"down", 1}}},
                                           {"age_seconds", 7.5}}),
                               down("north")});
  EXPECT_EQ(j["totals"]["switches"], 16);
  EXPECT_EQ(j["totals"]["hosts"], 48);
  EXPECT_EQ(j["totals"]["links_by_state"]["active"], 71);
  EXPECT_EQ(j["totals"]["links_by_state"]["down"], 1);
  EXPECT_EQ(j["totals"]["max_level"], 3);
  EXPECT_EQ(j["totals"]["age_seconds"], 7.5);
  EXPECT_EQ(j["available"], 2);
  EXPECT_EQ(j["subnets"][2]["error"], "cannot connect");
  EXPECT_EQ(j["subnets"][0]["summary"]["hosts"], 16);
}

TEST(FederationViews, PoolUsageTotalsAndSubnetsWithoutPool) {
  const json j = mergedPoolUsage(
      {ok("a", {{"total_gpus", 64}, {"usable_gpus", 64}, {"used_gpus", 8}, {"free_gpus", 56}}),
       ok("b", {{"error", {{"message", "no pool"}}}}, 404), down("c")});
  EXPECT_EQ(j["totals"]["free_gpus"], 56.0);
  EXPECT_TRUE(j["subnets"][1]["pool"].is_null());
  EXPECT_EQ(j["unavailable"].size(), 1u);
}

TEST(FederationViews, LinksRankByTheBusiestEnd) {
  const json idle = {{"a", {{"rates", {{"tx_utilization", 0.1}}}}}, {"b", {{"rates", nullptr}}}};
  const json busy = {{"a", {{"rates", nullptr}}},
                     {"b", {{"rates", {{"rx_utilization", 0.9}, {"congestion", 0.2}}}}},
                     {"health", {{"reasons", {"x", "y"}}}}};
  EXPECT_GT(linkSortMetric(busy, "utilization"), linkSortMetric(idle, "utilization"));
  EXPECT_DOUBLE_EQ(linkSortMetric(busy, "congestion"), 0.2);
  EXPECT_DOUBLE_EQ(linkSortMetric(busy, "errors"), 2.0);
}

TEST(FederationEvents, MergedByTimeWithNamespacedIdsAndACursor) {
  auto cursor = parseEventCursor("east:10,west:3");
  ASSERT_TRUE(cursor);
  EXPECT_EQ(cursor->of("east"), 10u);
  EXPECT_EQ(cursor->of("north"), 0u);
  EXPECT_FALSE(parseEventCursor("east:x"));
  EXPECT_FALSE(parseEventCursor(":4"));
  EXPECT_EQ(parseEventCursor("7")->of("any"), 7u);

  const json east = {{"events",
                      {{{"id", 11}, {"time", 100.0}, {"type", "link_down"}},
                       {{"id", 12}, {"time", 300.0}, {"type", "link_up"}}}}};
  const json west = {{"events", {{{"id", 4}, {"time", 200.0}, {"type", "link_degraded"}}}}};
  json j = mergeEvents({ok("east", east), ok("west", west), down("north")}, *cursor, 2);
  ASSERT_EQ(j["events"].size(), 2u);
  EXPECT_EQ(j["events"][0]["id"], "east:11");
  EXPECT_EQ(j["events"][1]["id"], "west:4");
  EXPECT_EQ(j["events"][1]["subnet"], "west");
  // east:12 was cut by the limit: the cursor stays before it; north keeps its position.
  EXPECT_EQ(j["last_id"], "east:11,west:4,north:0");
  EXPECT_EQ(j["unavailable"].size(), 1u);
  j = mergeEvents({ok("east", east), ok("west", west)}, *cursor, 10);
  EXPECT_EQ(j["events"].size(), 3u);
  EXPECT_EQ(j["events"][2]["id"], "east:12");
  EXPECT_EQ(j["last_id"], "east:12,west:4");
}

constexpr const char* kTreeA = R"(# Slurm topology.conf for topology/tree, generated by ibfabric
# 4 hosts in 2 leaf sets, 1 spine group(s); 3 switches
SwitchName=leaf-01 Nodes=a[01-02]
SwitchName=leaf-02 Nodes=a[03-04]
SwitchName=spine-01 Switches=leaf-[01-02]
SwitchName=ibfabric-root Switches=spine-01,spine-02
)";

constexpr const char* kTreeB = R"(#
SwitchName=leaf-01 Nodes=b[01-04]
)";

TEST(FederationExports, SlurmTreeHasOneRootPerSubnetAndPrefixedSwitches) {
  EXPECT_EQ(prefixedNames("east", "leaf-[01-02],spine-01"), "east-leaf-[01-02],east-spine-01");
  EXPECT_EQ(prefixedNames("east", "ibfabric-root"), "east");
  const std::string conf = mergedSlurmConf({text("east", kTreeA), text("west", kTreeB)});
  EXPECT_NE(conf.find("SwitchName=east-leaf-01 Nodes=a[01-02]\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("SwitchName=east-spine-01 Switches=east-leaf-[01-02]\n"), std::string::npos)
      << conf;
  EXPECT_NE(conf.find("SwitchName=east Switches=east-spine-01,east-spine-02\n"), std::string::npos)
      << conf;
  // A subnet whose export has no root gets one over its top switch.
  EXPECT_NE(
      conf.find("SwitchName=west-leaf-01 Nodes=b[01-04]\nSwitchName=west Switches=west-leaf-01\n"),
      std::string::npos)
      << conf;
  EXPECT_EQ(conf.find("ibfabric-root"), std::string::npos) << conf;
  EXPECT_NE(conf.find("# [east] 4 hosts in 2 leaf sets"), std::string::npos) << conf;
}

TEST(FederationExports, SlurmBlocksArePrefixedAndShareTheCommonSizes) {
  const std::string conf = mergedSlurmConf(
      {text("a", "BlockName=leaf-01 Nodes=a[1-4]\nBlockSizes=4,8,16\n"),
       text("b", "BlockName=leaf-01 Nodes=b[1-4]\nBlockSizes=4,8\n"), down("c", "timed out")});
  EXPECT_NE(conf.find("BlockName=a-leaf-01 Nodes=a[1-4]\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("BlockName=b-leaf-01 Nodes=b[1-4]\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("BlockSizes=4,8\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("# subnet c UNAVAILABLE: timed out"), std::string::npos) << conf;
}

TEST(FederationExports, HyperNodesArePrefixedPerSubnet) {
  const std::string yaml = R"(---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata:
  name: leaf-01
  labels:
    ibfabric.io/generated: "true"
spec:
  tier: 1
  tierName: leaf
  members:
  - type: Node
    selector:
      exactMatch:
        name: "dgx0001"
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata:
  name: ibfabric-root
  labels:
    ibfabric.io/generated: "true"
spec:
  tier: 2
  tierName: fabric
  members:
  - type: HyperNode
    selector:
      exactMatch:
        name: "leaf-01"
)";
  const std::string out = mergedHyperNodes({text("east", yaml), down("west")});
  EXPECT_NE(out.find("  name: east-leaf-01\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  name: east\n"), std::string::npos) << out;
  EXPECT_NE(out.find("        name: \"dgx0001\"\n"), std::string::npos) << out;
  EXPECT_NE(out.find("        name: \"east-leaf-01\"\n"), std::string::npos) << out;
  EXPECT_NE(out.find("    ibfabric.io/subnet: \"east\"\n"), std::string::npos) << out;
  EXPECT_NE(out.find("# subnet west UNAVAILABLE"), std::string::npos) << out;
}

json placed(double objective) {
  return {{"options", {{{"hosts", {"h1"}}, {"score", {{"objective", objective}}}}}},
          {"warnings", json::array()}};
}

json refused(int code, const std::string& message) {
  return {{"error", {{"code", code}, {"message", message}}}};
}

TEST(FederationJobs, PlacementGoesToTheSubnetThatFits) {
  auto r = routePlacement({ok("small", refused(422, "only 4 hosts"), 422), ok("big", placed(0.7))},
                          RoutingPolicy::kBest);
  ASSERT_TRUE(r.chosen);
  EXPECT_EQ(*r.chosen, 1u);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body["subnet"], "big");
  EXPECT_EQ(r.body["options"][0]["subnet"], "big");
  EXPECT_EQ(r.body["subnets"][0]["result"], "unsatisfiable");
  EXPECT_EQ(r.body["subnets"][0]["message"], "only 4 hosts");

  // Best: the highest objective; first: the configuration's order.
  r = routePlacement({ok("a", placed(0.5)), ok("b", placed(0.9)), down("c")}, RoutingPolicy::kBest);
  EXPECT_EQ(r.body["subnet"], "b");
  EXPECT_EQ(r.body["subnets"][2]["result"], "unavailable");
  r = routePlacement({ok("a", placed(0.5)), ok("b", placed(0.9))}, RoutingPolicy::kFirst);
  EXPECT_EQ(r.body["subnet"], "a");

  r = routePlacement({ok("a", refused(422, "too big"), 422), down("b")}, RoutingPolicy::kBest);
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(r.body["error"]["reason"], "unsatisfiable");
  EXPECT_NE(r.body["error"]["message"].get<std::string>().find("a: too big"), std::string::npos);
  r = routePlacement({ok("a", refused(400, "unknown field 'x'"), 400)}, RoutingPolicy::kBest);
  EXPECT_EQ(r.status, 400);
  r = routePlacement({down("a"), ok("b", refused(503, "no sweep yet"), 503)}, RoutingPolicy::kBest);
  EXPECT_EQ(r.status, 503);
}

TEST(FederationJobs, AllocationCandidatesByFreeGpus) {
  const std::vector<SubnetAnswer> usage = {
      ok("a", {{"free_gpus", 8}}), ok("b", {{"free_gpus", 32}}), ok("c", {{"free_gpus", 2}}),
      down("d"), ok("e", refused(404, "no pool"), 404)};
  EXPECT_EQ(allocationCandidates(usage, 4, RoutingPolicy::kBest), (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(allocationCandidates(usage, 4, RoutingPolicy::kFirst),
            (std::vector<std::size_t>{0, 1}));
  EXPECT_TRUE(allocationCandidates(usage, 64, RoutingPolicy::kBest).empty());
}

}  // namespace
}  // namespace ibfabric::api::federation
