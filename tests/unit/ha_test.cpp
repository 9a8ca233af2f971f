// Active/standby on one subnet (api/service/role_election.h, api/daemon/ha_monitor.h,
// fabric_service_role.cpp): the pure role decision in every mode, the `ha:` configuration, a
// peer's health answer, a standby FabricService that sweeps nothing and crawls rarely until it
// is made active, its health, headers and metrics.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/daemon/ha_monitor.h"
#include "api/daemon/service_config.h"
#include "api/http/ha_json.h"
#include "api/http/json_views.h"
#include "api/metrics/metrics.h"
#include "api/service/role_election.h"
#include "tests/support/fabrics.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;
using testing::waitFor;

PeerView peer(std::string url, bool live, std::optional<std::uint64_t> guid) {
  PeerView p;
  p.url = std::move(url);
  p.live = live;
  if (guid) p.portGuid = Guid(*guid);
  if (!live) p.error = "connection refused";
  return p;
}

TEST(HaRoleElection, AlwaysIsActive) {
  RoleInputs in;
  EXPECT_EQ(decideRole(in).role, HaRole::kActive);
  EXPECT_EQ(parseHaMode("follow_sm"), HaMode::kFollowSm);
  EXPECT_EQ(parseHaMode("lowest_guid"), HaMode::kLowestGuid);
  EXPECT_EQ(parseHaMode("always"), HaMode::kAlways);
  EXPECT_FALSE(parseHaMode("etcd"));
  EXPECT_EQ(toString(HaRole::kStandby), "standby");
  EXPECT_EQ(parseHaRole("active"), HaRole::kActive);
}

TEST(HaRoleElection, FollowSmIsActiveBesideTheMasterSm) {
  RoleInputs in;
  in.mode = HaMode::kFollowSm;
  EXPECT_EQ(decideRole(in).role, HaRole::kStandby) << "nothing known yet";
  in.localLid = 5;
  EXPECT_EQ(decideRole(in).role, HaRole::kStandby) << "no SM yet";
  in.smLid = 5;
  EXPECT_EQ(decideRole(in).role, HaRole::kActive) << "the SM is on our port";
  in.smLid = 7;
  EXPECT_EQ(decideRole(in).role, HaRole::kStandby);
  in.localNodeGuid = Guid(0x100000);
  in.smNodeGuid = Guid(0x100000);  // the SM on the other port of our HCA
  EXPECT_EQ(decideRole(in).role, HaRole::kActive);
  in.smNodeGuid = Guid(0x100010);
  const auto d = decideRole(in);
  EXPECT_EQ(d.role, HaRole::kStandby);
  EXPECT_NE(d.reason.find("LID 7"), std::string::npos) << d.reason;
  // The OpenSM plugin's state decides when it is connected.
  in.osmSmState = "master";
  EXPECT_EQ(decideRole(in).role, HaRole::kActive);
  in.smLid = 5;
  in.osmSmState = "standby";
  EXPECT_EQ(decideRole(in).role, HaRole::kStandby);
}

TEST(HaRoleElection, LowestGuidAmongLiveInstances) {
  RoleInputs in;
  in.mode = HaMode::kLowestGuid;
  in.peers = {peer("http://b:9464", true, 0x100012)};
  EXPECT_EQ(decideRole(in).role, HaRole::kStandby) << "our GUID unknown: standby";
  in.localPortGuid = Guid(0x100011);
  EXPECT_EQ(decideRole(in).role, HaRole::kActive);
  in.peers.push_back(peer("http://c:9464", true, 0x100001));
  auto d = decideRole(in);
  EXPECT_EQ(d.role, HaRole::kStandby);
  EXPECT_NE(d.reason.find("http://c:9464"), std::string::npos) << d.reason;
  in.peers.back().live = false;  // the lower one stopped answering: we take over
  EXPECT_EQ(decideRole(in).role, HaRole::kActive);
  // Ourselves in the list (one peer list deployed everywhere), and a peer that does not know
  // its GUID yet: neither competes.
  in.peers = {peer("http://a:9464", true, 0x100011), peer("http://d:9464", true, std::nullopt)};
  EXPECT_EQ(decideRole(in).role, HaRole::kActive);
}

TEST(HaConfigTest, Keys) {
  const ServiceConfig c = loadConfigText(
      "ha:\n  mode: lowest_guid\n  peers: [\"http://10.0.0.2:9464\", \"https://b:1\"]\n"
      "  peer_timeout: 0.5\n  poll_interval: 0.25\n  standby_crawl_interval: 120\n"
      "subnet_name: plane-a\n");
  EXPECT_EQ(c.ha.mode, "lowest_guid");
  ASSERT_EQ(c.ha.peers.size(), 2u);
  EXPECT_EQ(c.ha.peers[1], "https://b:1");
  EXPECT_EQ(c.ha.peerTimeout, 500ms);
  EXPECT_EQ(c.ha.pollInterval, 250ms);
  EXPECT_EQ(c.ha.standbyCrawlInterval, 120s);
  EXPECT_EQ(c.subnetName, "plane-a");
  const ServiceConfig d = loadConfigText("");
  EXPECT_EQ(d.ha.mode, "always");
  EXPECT_TRUE(d.subnetName.empty());
  EXPECT_THROW(loadConfigText("ha: {mode: etcd}\n"), ConfigError);
  EXPECT_THROW(loadConfigText("ha: {mode: lowest_guid}\n"), ConfigError) << "no peers";
  EXPECT_THROW(loadConfigText("ha: {mode: follow_sm, peer: x}\n"), ConfigError);
  EXPECT_THROW(loadConfigText("ha: {peers: [\"b:9464\"]}\n"), ConfigError) << "not a URL";
  EXPECT_THROW(loadConfigText("ha: {peer_timeout: 0}\n"), ConfigError);
  EXPECT_THROW(loadConfigText("ha: [1]\n"), ConfigError);
}

TEST(HaMonitorTest, AStandbyWaitsForAStartingPeerToLearnItsGuid) {
  std::vector<PeerAnswer> answers = {{peer("http://a", true, std::nullopt), 3.0}};
  const auto held = holdForStartingPeers(HaRole::kStandby, answers, 30s);
  ASSERT_TRUE(held);
  EXPECT_EQ(held->role, HaRole::kStandby);
  EXPECT_NE(held->reason.find("http://a"), std::string::npos) << held->reason;
  EXPECT_FALSE(holdForStartingPeers(HaRole::kActive, answers, 30s)) << "active: never held";
  answers[0].uptimeSeconds = 45;  // past the grace: a peer stuck before its first crawl
  EXPECT_FALSE(holdForStartingPeers(HaRole::kStandby, answers, 30s));
  answers[0] = {peer("http://a", true, 0x100001), 3.0};  // knows its GUID: the election decides
  EXPECT_FALSE(holdForStartingPeers(HaRole::kStandby, answers, 30s));
  answers[0] = {peer("http://a", false, std::nullopt), std::nullopt};  // not live
  EXPECT_FALSE(holdForStartingPeers(HaRole::kStandby, answers, 30s));
}

TEST(HaMonitorTest, PeerHealthAnswers) {
  const auto answer = peerFromHealth(
      "http://b",
      R"({"role":"standby","uptime_seconds":3.5,"ha":{"port_guid":"0x0000000000100012"}})");
  EXPECT_EQ(answer.uptimeSeconds, 3.5);
  const PeerView& p = answer.view;
  EXPECT_TRUE(p.live);
  EXPECT_EQ(p.portGuid, Guid(0x100012));
  EXPECT_EQ(p.role, HaRole::kStandby);
  const auto old = peerFromHealth("http://c", R"({"status":"ready"})").view;  // without HA
  EXPECT_TRUE(old.live);
  EXPECT_FALSE(old.portGuid);
  EXPECT_FALSE(peerFromHealth("http://d", "<html>").view.live);
  // An uptime that is no duration is not believed (never cast out of range).
  for (const char* up : {"-1", "-1e300", "1e300"})
    EXPECT_FALSE(
        peerFromHealth("http://e", std::string(R"({"uptime_seconds":)") + up + "}").uptimeSeconds)
        << up;
  // Nobody listens there: not live, quickly.
  const auto dead = httpPeerFetcher()("http://127.0.0.1:1", 500ms).view;
  EXPECT_FALSE(dead.live);
  EXPECT_FALSE(dead.error.empty());
}

FabricServiceOptions standbyOptions() {
  FabricServiceOptions o;
  o.crawlInterval = 10s;  // an active one would not crawl again within the test
  o.sweepInterval = 20ms;
  o.retryBase = 10ms;
  o.haMode = HaMode::kLowestGuid;
  o.standbyCrawlInterval = 30ms;
  o.standbyPoll = 10ms;
  o.subnetName = "plane-a";
  return o;
}

testing::InProcessDaemon::Options daemonOptions() {
  testing::InProcessDaemon::Options o;
  o.service = standbyOptions();
  return o;
}

TEST(HaStandby, SweepsNothingCrawlsRarelyAndTakesOverAtOnce) {
  testing::InProcessDaemon d(daemonOptions());
  d.topology().push(testing::fatTreeTopology("", 2, 2, 2));
  FabricService& service = d.service();
  EXPECT_TRUE(service.standby()) << "undecided: standby";
  service.start();
  // The standby keeps its snapshot warm at the standby interval, and sweeps nothing.
  ASSERT_TRUE(waitFor([&] { return d.topology().calls() >= 4; }, 10s));
  EXPECT_EQ(d.counters()->sweeps, 0);
  auto s = service.state();
  EXPECT_TRUE(s->standby());
  EXPECT_FALSE(s->ready());
  EXPECT_TRUE(warmStandby(*s));
  auto health = healthJson(*s, std::chrono::system_clock::now());
  EXPECT_EQ(health["status"], "standby");
  EXPECT_EQ(health["role"], "standby");
  EXPECT_EQ(health["ha"]["mode"], "lowest_guid");
  EXPECT_EQ(health["subnet"]["name"], "plane-a");
  EXPECT_TRUE(health["snapshot_age_seconds"].is_number());
  // Clears are refused by a standby.
  EXPECT_EQ(service.clearCounters({Guid(1), PortNum(1)}, 1s).status,
            ClearCountersResult::Status::kNotReady);

  // Made active: it sweeps at once.
  service.setRole({HaRole::kActive, "test"}, {peer("http://b", false, std::nullopt)});
  ASSERT_TRUE(waitFor([&] { return service.state()->ready(); }, 10s));
  s = service.state();
  EXPECT_EQ(s->ha.role, HaRole::kActive);
  EXPECT_EQ(s->ha.roleChanges, 0u) << "the first decision is no change";
  health = healthJson(*s, std::chrono::system_clock::now());
  EXPECT_EQ(health["role"], "active");
  ASSERT_EQ(health["ha"]["peers"].size(), 1u);
  EXPECT_EQ(health["ha"]["peers"][0]["live"], false);
  const std::string page = renderMetrics(*s, service.events());
  EXPECT_NE(page.find("ibfabric_ha_active 1\n"), std::string::npos);
  EXPECT_NE(page.find("ibfabric_ha_info{mode=\"lowest_guid\",role=\"active\"} 1\n"),
            std::string::npos);
  EXPECT_NE(page.find("ibfabric_ha_peer_live{peer=\"http://b\"} 0\n"), std::string::npos);
  EXPECT_NE(page.find("ibfabric_subnet_info{subnet=\"plane-a\",subnet_prefix=\"\",sm_guid=\"\"} 1"),
            std::string::npos);

  // Standby again: the sweeps stop (the one running finishes).
  service.setRole({HaRole::kStandby, "test"});
  EXPECT_EQ(service.state()->ha.roleChanges, 1u);
  const int crawls = d.topology().calls();
  ASSERT_TRUE(waitFor([&] { return d.topology().calls() >= crawls + 3; }, 10s));
  const int sweeps = d.counters()->sweeps;
  ASSERT_TRUE(waitFor([&] { return d.topology().calls() >= crawls + 6; }, 10s));
  EXPECT_LE(d.counters()->sweeps, sweeps + 1);
  service.stop();
}

/// Every host, node and link object the daemon serves names its subnet: the operator's name.
TEST(SubnetTag, EveryHostNodeAndLinkObjectNamesTheSubnet) {
  testing::InProcessDaemon::Options o;
  o.service.subnetName = "plane-a";
  testing::InProcessDaemon d(o);
  d.topology().push(testing::fatTreeTopology("", 2, 2, 2));
  ASSERT_GT(d.serve(), 0);
  ASSERT_TRUE(d.startAndWaitReady());
  auto get = [&](const std::string& path) {
    auto res = d.client().Get(path);
    EXPECT_TRUE(res && res->status == 200) << path;
    return res ? nlohmann::json::parse(res->body, nullptr, false) : nlohmann::json();
  };
  int objects = 0;
  auto expectTagged = [&](const nlohmann::json& list, const std::string& what) {
    ASSERT_TRUE(list.is_array() && !list.empty()) << what;
    for (const auto& item : list) {
      EXPECT_EQ(item.value("subnet", ""), "plane-a") << what << ": " << item.dump();
      ++objects;
    }
  };
  expectTagged(get("/api/v1/hosts")["hosts"], "hosts");
  expectTagged(get("/api/v1/nodes")["nodes"], "nodes (cached document)");
  expectTagged(get("/api/v1/nodes?limit=3")["nodes"], "a page of nodes");
  expectTagged(get("/api/v1/switches")["switches"], "switches");
  expectTagged(get("/api/v1/links")["links"], "links");
  expectTagged(get("/api/v1/links?limit=2")["links"], "a page of links");
  const auto hosts = get("/api/v1/hosts")["hosts"];
  const std::string host = hosts[0]["name"];
  EXPECT_EQ(get("/api/v1/hosts/" + host)["subnet"], "plane-a");
  const std::string guid = hosts[0]["hcas"][0];
  EXPECT_EQ(get("/api/v1/nodes/" + guid)["subnet"], "plane-a");
  EXPECT_GT(objects, 20);

  // Without a name: the GID prefix once the local port was read; the fakes cannot read one, so
  // null (never a made-up name).
  ServiceState unnamed;
  EXPECT_TRUE(subnetTagJson(unnamed).is_null());
  unnamed.subnetId.gidPrefix = 0xfe80000000000000ull;
  EXPECT_EQ(subnetTagJson(unnamed), "0xfe80000000000000");
}

TEST(HaStandby, MonitorDecidesFromPeers) {
  testing::InProcessDaemon d(daemonOptions());
  d.topology().push(testing::fatTreeTopology("", 2, 2, 2));
  d.service().start();
  // The fakes cannot read a local port: our GUID stays unknown, so lowest_guid keeps standby.
  std::atomic<bool> lowerLive{true};
  HaMonitor monitor(d.service(), {HaMode::kLowestGuid, {"http://lower"}, 100ms, 10ms},
                    [&](const std::string& url, std::chrono::milliseconds) {
                      return PeerAnswer{peer(url, lowerLive, 0x1), 100.0};
                    });
  EXPECT_EQ(monitor.pollOnce().role, HaRole::kStandby);
  EXPECT_TRUE(d.service().state()->ha.decided);
  ASSERT_EQ(d.service().state()->ha.peers.size(), 1u);
  EXPECT_TRUE(d.service().state()->ha.peers[0].live);
  // An always-mode monitor makes it active: it sweeps.
  HaMonitor always(d.service(), {HaMode::kAlways, {}, 100ms, 10ms});
  always.start();
  ASSERT_TRUE(waitFor([&] { return d.counters()->sweeps > 0; }, 10s));
  always.stop();
}

}  // namespace
}  // namespace ibfabric::api
