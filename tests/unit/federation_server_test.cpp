// ibfabric-federate's server against fake members (in-process HTTP servers,
// tests/fakes/fake_member_daemon.h): a member down, slow (past its timeout) or answering
// garbage marks its subnet unavailable with the error and age, quickly, and the others are
// still served; lists are tagged and paged across subnets; events merge; placements and pool
// allocations go to the subnet that takes the job.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "api/federation/federation_server.h"
#include "tests/fakes/fake_member_daemon.h"

namespace ibfabric::api::federation {
namespace {

using nlohmann::json;
using testing::FakeMemberDaemon;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

json hostsOf(const std::string& prefix, int n) {
  json hosts = json::array();
  for (int i = 1; i <= n; ++i)
    hosts.push_back({{"name", prefix + std::to_string(i)}, {"hcas", json::array()}});
  return hosts;
}

/// A member with /health, /topology and a paged /hosts of `n` hosts named <prefix>1..n.
void playDaemon(FakeMemberDaemon& m, const std::string& prefix, int n, json health = {}) {
  if (health.is_null()) health = {{"status", "ready"}, {"ready", true}};
  m.json("GET", "/api/v1/health", 200, health);
  m.json("GET", "/api/v1/topology", 200, {{"switches", 3}, {"hosts", n}, {"links", n + 2}});
  const json all = hostsOf(prefix, n);
  m.handle("GET", "/api/v1/hosts", [all](const httplib::Request& req, httplib::Response& res) {
    std::size_t from = req.has_param("cursor") ? std::stoul(req.get_param_value("cursor")) : 0;
    std::size_t limit = req.has_param("limit") ? std::stoul(req.get_param_value("limit")) : 1000;
    json page = json::array();
    for (std::size_t i = from; i < all.size() && page.size() < limit; ++i) page.push_back(all[i]);
    json body = {{"hosts", page}};
    if (from + page.size() < all.size()) body["next_cursor"] = std::to_string(from + page.size());
    res.set_content(body.dump(), "application/json");
  });
}

class FederationServerTest : public ::testing::Test {
 protected:
  /// The federation over `members` (names a, b, c, ...) with `timeout` per member, no cache.
  void start(const std::vector<FakeMemberDaemon*>& members,
             std::chrono::milliseconds timeout = 2000ms, const std::string& extra = "") {
    FederationConfig c;
    c.timeout = timeout;
    c.cacheTtl = 0ms;
    c.apiToken = "fed-token";
    for (std::size_t i = 0; i < members.size(); ++i) {
      MemberConfig m;
      m.name = std::string(1, static_cast<char>('a' + i));
      m.url = members[i] ? members[i]->url() : "http://127.0.0.1:" + std::to_string(closedPort());
      m.token = "member-token-" + m.name;
      c.members.push_back(m);
    }
    if (extra == "first") c.placement = RoutingPolicy::kFirst;
    server_ = std::make_unique<FederationServer>(c);
    port_ = server_->bind("127.0.0.1", 0);
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_->run(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client_->set_read_timeout(20, 0);
    // Bounded wait until the server answers.
    for (auto until = Clock::now() + 10s; Clock::now() < until;)
      if (client_->Get("/api/v1/health/live")) break;
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  /// A port nothing listens on (bound, then closed).
  static int closedPort() {
    FakeMemberDaemon gone;
    const int p = gone.port();
    gone.stop();
    return p;
  }
  std::pair<int, json> get(const std::string& path) {
    auto r = client_->Get(path);
    if (!r) return {-1, nullptr};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  std::pair<int, json> post(const std::string& path, const json& body,
                            const std::string& token = "fed-token") {
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    auto r = client_->Post(path, h, body.dump(), "application/json");
    if (!r) return {-1, nullptr};
    return {r->status, json::parse(r->body, nullptr, false)};
  }

  std::unique_ptr<FederationServer> server_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
  int port_ = -1;
};

TEST_F(FederationServerTest, HealthNamesEachSubnetAndItsRole) {
  FakeMemberDaemon a, b;
  playDaemon(a, "a", 2,
             {{"status", "ready"},
              {"ready", true},
              {"role", "standby"},
              {"subnet", {{"name", "campus-a"}, {"prefix", "0xfe80000000000000"}}}});
  playDaemon(b, "b", 2);
  ASSERT_NO_FATAL_FAILURE(start({&a, &b}));
  auto [status, j] = get("/api/v1/health");
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["subnets"][0]["subnet"], "a");  // the operator's name wins
  EXPECT_EQ(j["subnets"][0]["reported_name"], "campus-a");
  EXPECT_EQ(j["subnets"][0]["subnet_prefix"], "0xfe80000000000000");
  EXPECT_EQ(j["subnets"][0]["role"], "standby");
  EXPECT_FALSE(j["subnets"][1].contains("role"));
}

TEST_F(FederationServerTest, AMemberWithoutANameIsCalledWhatItReports) {
  FakeMemberDaemon a;
  playDaemon(a, "a", 1, {{"status", "ready"}, {"ready", true}, {"subnet", "Hall 7"}});
  FederationConfig c;
  c.members.push_back({"", a.url(), "", std::nullopt});
  FederationServer s(c);
  EXPECT_EQ(s.board().name(0), "subnet-1");
  s.probeMembers();
  EXPECT_EQ(s.board().name(0), "hall-7");
}

TEST_F(FederationServerTest, DownSlowAndMalformedMembersAreUnavailableQuickly) {
  FakeMemberDaemon good, slow, garbage;
  playDaemon(good, "g", 3);
  playDaemon(slow, "s", 3);
  playDaemon(garbage, "m", 3);
  slow.setDelay(1500ms);
  garbage.setMalformed(true);
  ASSERT_NO_FATAL_FAILURE(start({&good, nullptr, &slow, &garbage}, 300ms));

  const auto t0 = Clock::now();
  auto [status, j] = get("/api/v1/hosts");
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_LT(took, 1.4) << "a slow member held the answer up";
  ASSERT_EQ(status, 200) << j.dump();
  ASSERT_EQ(j["hosts"].size(), 3u) << j.dump();
  for (const auto& h : j["hosts"]) EXPECT_EQ(h["subnet"], "a");
  ASSERT_EQ(j["unavailable"].size(), 3u) << j.dump();
  std::map<std::string, std::string> errors;
  for (const auto& u : j["unavailable"]) errors[u["subnet"]] = u["error"];
  EXPECT_NE(errors["b"].find("cannot connect"), std::string::npos) << errors["b"];
  EXPECT_NE(errors["c"].find("timed out"), std::string::npos) << errors["c"];
  EXPECT_NE(errors["d"].find("malformed JSON"), std::string::npos) << errors["d"];

  auto [hs, health] = get("/api/v1/health");
  EXPECT_EQ(hs, 200);
  EXPECT_EQ(health["status"], "degraded");
  EXPECT_EQ(health["available"], 1);
  EXPECT_TRUE(health["subnets"][1]["age_seconds"].is_null());  // never answered
}

TEST_F(FederationServerTest, AMemberThatGoesDownKeepsItsAgeAndTheOthersAreServed) {
  FakeMemberDaemon a, b;
  playDaemon(a, "a", 2);
  playDaemon(b, "b", 4);
  ASSERT_NO_FATAL_FAILURE(start({&a, &b}));
  auto [s1, f1] = get("/api/v1/fabric");
  ASSERT_EQ(s1, 200) << f1.dump();
  EXPECT_EQ(f1["totals"]["hosts"], 6);
  b.stop();
  auto [s2, f2] = get("/api/v1/fabric");
  ASSERT_EQ(s2, 200) << f2.dump();
  EXPECT_EQ(f2["totals"]["hosts"], 2);
  EXPECT_EQ(f2["subnets"][1]["available"], false);
  EXPECT_TRUE(f2["subnets"][1]["age_seconds"].is_number()) << f2.dump();
  EXPECT_TRUE(f2["subnets"][1]["last_ok"].is_number()) << f2.dump();
  a.stop();
  auto [s3, f3] = get("/api/v1/fabric");
  EXPECT_EQ(s3, 503) << f3.dump();
  auto [s4, h4] = get("/api/v1/health");
  EXPECT_EQ(s4, 503);
  EXPECT_EQ(h4["status"], "unavailable");
}

TEST_F(FederationServerTest, HostsPageAcrossSubnetsExactlyOnce) {
  FakeMemberDaemon a, b;
  playDaemon(a, "a", 5);
  playDaemon(b, "b", 3);
  ASSERT_NO_FATAL_FAILURE(start({&a, &b}));
  std::multiset<std::string> seen;
  std::string cursor;
  for (int page = 0; page < 20; ++page) {
    auto [status, j] = get("/api/v1/hosts?limit=3" + (cursor.empty() ? "" : "&cursor=" + cursor));
    ASSERT_EQ(status, 200) << j.dump();
    EXPECT_LE(j["hosts"].size(), 3u);
    for (const auto& h : j["hosts"]) {
      seen.insert(h["name"].get<std::string>());
      EXPECT_EQ(h["subnet"], h["name"].get<std::string>().substr(0, 1));
    }
    if (!j.contains("next_cursor")) break;
    cursor = j["next_cursor"];
  }
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 8u);
  // Filters pass through; subnet= selects; a bad cursor or subnet is a 400.
  auto [s1, only] = get("/api/v1/hosts?subnet=b&rail=0");
  ASSERT_EQ(s1, 200);
  EXPECT_EQ(only["hosts"].size(), 3u);
  EXPECT_EQ(b.requests().back().query, "rail=0");
  EXPECT_EQ(get("/api/v1/hosts?subnet=zz").first, 400);
  EXPECT_EQ(get("/api/v1/hosts?cursor=garbage").first, 400);
}

TEST_F(FederationServerTest, AHostIsFoundInItsSubnet) {
  FakeMemberDaemon a, b;
  playDaemon(a, "a", 1);
  playDaemon(b, "b", 1);
  b.json("GET", "/api/v1/hosts/b1", 200, {{"name", "b1"}});
  ASSERT_NO_FATAL_FAILURE(start({&a, &b}));
  auto [status, j] = get("/api/v1/hosts/b1");
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["subnet"], "b");
  EXPECT_EQ(get("/api/v1/hosts/nobody").first, 404);
}

TEST_F(FederationServerTest, EventsMergeByTimeAndTheCursorRoundTrips) {
  FakeMemberDaemon a, b;
  a.handle("GET", "/api/v1/events", [](const httplib::Request& req, httplib::Response& res) {
    json events = json::array();
    if (req.get_param_value("since") == "0")
      events = {{{"id", 1}, {"time", 10.0}, {"type", "link_down"}},
                {{"id", 2}, {"time", 30.0}, {"type", "link_up"}}};
    res.set_content(json{{"events", events}, {"last_id", 2}}.dump(), "application/json");
  });
  b.handle("GET", "/api/v1/events", [](const httplib::Request& req, httplib::Response& res) {
    json events = json::array();
    if (req.get_param_value("since") == "0")
      events = {{{"id", 7}, {"time", 20.0}, {"type", "link_degraded"}}};
    res.set_content(json{{"events", events}, {"last_id", 7}}.dump(), "application/json");
  });
  ASSERT_NO_FATAL_FAILURE(start({&a, &b}));
  auto [status, j] = get("/api/v1/events");
  ASSERT_EQ(status, 200) << j.dump();
  ASSERT_EQ(j["events"].size(), 3u);
  EXPECT_EQ(j["events"][0]["id"], "a:1");
  EXPECT_EQ(j["events"][1]["id"], "b:7");
  EXPECT_EQ(j["events"][2]["id"], "a:2");
  EXPECT_EQ(j["last_id"], "a:2,b:7");
  auto [s2, next] = get("/api/v1/events?since=" + j["last_id"].get<std::string>());
  ASSERT_EQ(s2, 200);
  EXPECT_TRUE(next["events"].empty());
  EXPECT_NE(a.requests().back().query.find("since=2"), std::string::npos)
      << a.requests().back().query;
  EXPECT_EQ(get("/api/v1/events?since=a:x").first, 400);
}

TEST_F(FederationServerTest, PlacementIsRoutedToTheSubnetThatFits) {
  FakeMemberDaemon small, big;
  small.json(
      "POST", "/api/v1/placement", 422,
      {{"error",
        {{"code", 422}, {"message", "4 hosts asked, 2 eligible"}, {"reason", "unsatisfiable"}}}});
  big.json("POST", "/api/v1/placement", 200,
           {{"options", {{{"hosts", {"b1", "b2", "b3", "b4"}}, {"score", {{"objective", 0.8}}}}}},
            {"warnings", json::array()}});
  ASSERT_NO_FATAL_FAILURE(start({&small, &big, nullptr}));
  auto [status, j] = post("/api/v1/placement", {{"hosts", 4}}, "");
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["subnet"], "b");
  EXPECT_EQ(j["options"][0]["hosts"].size(), 4u);
  EXPECT_EQ(j["subnets"][0]["result"], "unsatisfiable");
  EXPECT_EQ(j["subnets"][2]["result"], "unavailable");
  EXPECT_EQ(json::parse(big.requests().back().body), json({{"hosts", 4}}));
  EXPECT_EQ(post("/api/v1/placement", json("nope"), "").first, 400);
}

TEST_F(FederationServerTest, PoolAllocationsGoWhereTheGpusAreAndStayThere) {
  FakeMemberDaemon a, b;
  for (auto* m : {&a, &b}) {
    m->json("GET", "/api/v1/pool/allocations/job-1", 404,
            {{"error", {{"code", 404}, {"message", "no allocation"}}}});
    m->json("GET", "/api/v1/pool/allocations", 200, {{"allocations", json::array()}});
  }
  a.json("GET", "/api/v1/pool", 200, {{"free_gpus", 4}, {"total_gpus", 8}});
  b.json("GET", "/api/v1/pool", 200, {{"free_gpus", 16}, {"total_gpus", 16}});
  b.json("POST", "/api/v1/pool/allocations", 201,
         {{"allocation", {{"job_id", "job-1"}, {"gpus", 8}}}, {"created", true}});
  ASSERT_NO_FATAL_FAILURE(start({&a, &b}));
  EXPECT_EQ(post("/api/v1/pool/allocations", {{"job_id", "job-1"}, {"gpus", 8}}, "").first, 401);
  EXPECT_EQ(post("/api/v1/pool/allocations", {{"job_id", "job-1"}, {"gpus", 8}}, "bad").first, 403);
  auto [status, j] =
      post("/api/v1/pool/allocations", {{"job_id", "job-1"}, {"gpus", 8}, {"class", "training"}});
  ASSERT_EQ(status, 201) << j.dump();
  EXPECT_EQ(j["subnet"], "b");
  EXPECT_EQ(j["allocation"]["subnet"], "b");
  EXPECT_EQ(b.requests().back().authorization, "Bearer member-token-b");
  // The same job again goes to the subnet that holds it.
  b.json("GET", "/api/v1/pool/allocations/job-1", 200, {{"job_id", "job-1"}});
  b.json("POST", "/api/v1/pool/allocations", 200,
         {{"allocation", {{"job_id", "job-1"}}}, {"created", false}});
  a.json("GET", "/api/v1/pool", 200, {{"free_gpus", 64}});
  auto [again, j2] =
      post("/api/v1/pool/allocations", {{"job_id", "job-1"}, {"gpus", 8}, {"class", "training"}});
  EXPECT_EQ(again, 200) << j2.dump();
  EXPECT_EQ(j2["subnet"], "b");
  // Too big for every subnet: 409 with what each said.
  auto [none, j3] =
      post("/api/v1/pool/allocations", {{"job_id", "job-2"}, {"gpus", 500}, {"class", "training"}});
  EXPECT_EQ(none, 409) << j3.dump();
  EXPECT_EQ(j3["attempts"].size(), 2u) << j3.dump();
  auto [ps, usage] = get("/api/v1/pool");
  EXPECT_EQ(ps, 200);
  EXPECT_EQ(usage["totals"]["free_gpus"], 80.0);
}

TEST_F(FederationServerTest, ExportsAreRefusedWhileASubnetIsMissingUnlessPartial) {
  FakeMemberDaemon a;
  a.text("GET", "/api/v1/export/slurm-topology", 200,
         "SwitchName=leaf-01 Nodes=a[1-2]\nSwitchName=ibfabric-root Switches=leaf-01\n");
  ASSERT_NO_FATAL_FAILURE(start({&a, nullptr}));
  auto r = client_->Get("/api/v1/export/slurm-topology");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503) << r->body;
  r = client_->Get("/api/v1/export/slurm-topology?partial=true");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_NE(r->body.find("SwitchName=a Switches=a-leaf-01"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("# subnet b UNAVAILABLE"), std::string::npos) << r->body;
  EXPECT_EQ(r->get_header_value("X-Ibfabric-Unavailable-Subnets"), "b");
  EXPECT_EQ(get("/api/v1/export/slurm-topology?format=yaml").first, 400);
}

}  // namespace
}  // namespace ibfabric::api::federation
