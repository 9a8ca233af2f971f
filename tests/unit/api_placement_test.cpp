// POST /api/v1/placement: request parsing (every field, every bad input a 400 naming the field),
// answer JSON both ways, metrics text, and the route over real HTTP on loopback.
#include "api/http/placement_json.h"
#include "api/http/rest_server.h"
#include "api/metrics/collectors.h"
#include "api/service/placement_service.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "api/http/rest_server.h"
#include "tests/fakes/fake_sources.h"
#include "tests/support/fabrics.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using routing::PlacementError;

std::string errorOf(const json& body) {
  try {
    placementRequestFromJson(body);
  } catch (const PlacementError& e) {
    EXPECT_EQ(e.kind(), PlacementError::Kind::kInvalidRequest);
    return e.what();
  }
  return "";
}

TEST(ApiPlacement, RequestFromJson) {
  auto r = placementRequestFromJson(json::parse(R"({"hosts": 16, "pattern": "alltoall",
      "candidates": "dgx[0001-0003],login1", "exclude": ["dgx0002"], "allow_degraded": true,
      "alternatives": 3})"));
  EXPECT_EQ(r.hosts, 16);
  EXPECT_EQ(r.pattern, routing::CommPattern::kAllToAll);
  EXPECT_EQ(r.candidates, (std::vector<std::string>{"dgx0001", "dgx0002", "dgx0003", "login1"}));
  EXPECT_EQ(r.exclude, std::vector<std::string>{"dgx0002"});
  EXPECT_TRUE(r.allowDegraded);
  EXPECT_EQ(r.alternatives, 3);
  auto g = placementRequestFromJson(json::parse(R"({"gpus": 64, "gpus_per_host": 8})"));
  EXPECT_EQ(g.gpus, 64);
  EXPECT_EQ(g.pattern, routing::CommPattern::kRingAllreduce);
  auto back = placementRequestFromJson(placementRequestToJson(r));
  EXPECT_EQ(back.candidates, r.candidates);
  EXPECT_EQ(back.pattern, r.pattern);
}

TEST(ApiPlacement, BadRequestsNameTheField) {
  EXPECT_EQ(errorOf(json::array()), "the body must be a JSON object");
  EXPECT_EQ(errorOf({{"hosts", 4}, {"color", "red"}}), "unknown field 'color'");
  EXPECT_EQ(errorOf({{"hosts", "4"}}), "hosts: must be an integer");
  EXPECT_EQ(errorOf({{"hosts", -1}}), "hosts: must be in 0..1000000");
  EXPECT_EQ(errorOf({{"hosts", 2.5}}), "hosts: must be an integer");
  EXPECT_EQ(errorOf(json::object()), "hosts or gpus: one must be > 0");
  EXPECT_EQ(errorOf({{"gpus", 8}}), "gpus_per_host: required with gpus");
  EXPECT_EQ(errorOf({{"hosts", 2}, {"pattern", "mesh"}}),
            "pattern: must be one of none, ring_allreduce, alltoall");
  EXPECT_EQ(errorOf({{"hosts", 2}, {"candidates", {1, 2}}}),
            "candidates: every entry must be a non-empty string");
  EXPECT_NE(errorOf({{"hosts", 2}, {"exclude", "dgx[3-1]"}}).find("exclude: "), std::string::npos);
  EXPECT_EQ(errorOf({{"hosts", 2}, {"allow_degraded", "yes"}}),
            "allow_degraded: must be true or false");
  EXPECT_EQ(errorOf({{"hosts", 2}, {"alternatives", 17}}), "alternatives: must be in 1..16");
}

TEST(ApiPlacement, AnswerJsonRoundTrip) {
  routing::PlacementAnswer a;
  routing::PlacementOption o;
  o.hosts = {"dgx0002", "dgx0001", "dgx0003"};
  o.score.leafSwitches = 2;
  o.score.maxHops = 3;
  o.score.bottleneckBytesPerSecond = 12.5e9;
  o.score.objective = 0.49;
  o.score.explanation = "3 hosts on 2 leaf switches";
  routing::LinkLoad l;
  l.fromNode = "leaf-01";
  l.fromGuid = 0x200000;
  l.fromPort = 33;
  l.toNode = "spine-01";
  l.toGuid = 0x200010;
  l.toPort = 1;
  l.utilization = 0.5;
  l.residualBytesPerSecond = 12.5e9;
  l.jobFlows = 1;
  o.score.hottestLinks.push_back(l);
  a.options.push_back(o);
  a.warnings = {"dgx0009: HCA dgx0009 mlx5_0 link down (left out)"};
  json j = placementAnswerToJson(a);
  EXPECT_EQ(j["options"][0]["hostlist"], "dgx[0001-0003]");
  EXPECT_EQ(j["options"][0]["hosts"][0], "dgx0002");  // rank order kept
  EXPECT_EQ(j["options"][0]["score"]["hottest_links"][0]["from"]["guid"], "0x0000000000200000");
  auto back = placementAnswerFromJson(j);
  ASSERT_EQ(back.options.size(), 1u);
  EXPECT_EQ(back.options[0].hosts, o.hosts);
  EXPECT_EQ(back.options[0].score.hottestLinks[0].toGuid, 0x200010u);
  EXPECT_EQ(back.options[0].score.explanation, o.score.explanation);
  EXPECT_EQ(back.warnings, a.warnings);
  EXPECT_THROW(placementAnswerFromJson(json::parse(R"({"options": 3})")), std::invalid_argument);
}

TEST(ApiPlacement, MetricsCountResultsAndDurations) {
  auto source = std::make_unique<ScriptedTopologySource>();
  source->pushFailure("no fabric");
  FabricService service(std::move(source), [] { return CounterSourcePtr(); });
  PlacementService placement(service);
  placement.record("ok", 0.0002);
  std::string before = renderPlacementMetrics(placement.stats());
  placement.record("unsatisfiable", 0.003);
  std::string after = renderPlacementMetrics(placement.stats());
  EXPECT_NE(after.find("# TYPE ibfabric_placement_requests_total counter"), std::string::npos);
  EXPECT_NE(after.find("# TYPE ibfabric_placement_duration_seconds histogram"), std::string::npos);
  auto value = [](const std::string& text, const std::string& series) {
    auto pos = text.find(series + " ");
    return pos == std::string::npos ? -1.0 : std::stod(text.substr(pos + series.size() + 1));
  };
  const std::string unsat = R"(ibfabric_placement_requests_total{result="unsatisfiable"})";
  EXPECT_EQ(value(after, unsat), value(before, unsat) + 1);
  const std::string le5 = R"(ibfabric_placement_duration_seconds_bucket{le="0.005"})";
  const std::string le1 = R"(ibfabric_placement_duration_seconds_bucket{le="0.001"})";
  EXPECT_EQ(value(after, le5), value(before, le5) + 1);
  EXPECT_EQ(value(after, le1), value(before, le1));
  EXPECT_EQ(value(after, "ibfabric_placement_duration_seconds_count"),
            value(before, "ibfabric_placement_duration_seconds_count") + 1);
}

class ApiPlacementHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_.topology().push(testing::routableTopology(testing::twoLevel(2, 2, 2)));
    ASSERT_GT(daemon_.serve(), 0);
  }
  static testing::InProcessDaemon::Options daemonOptions() {
    testing::InProcessDaemon::Options o;
    o.counters->serveTables = true;
    return o;
  }
  json post(const std::string& body, int status) {
    auto res = daemon_.client().Post("/api/v1/placement", body, "application/json");
    EXPECT_TRUE(res);
    if (!res) return {};
    EXPECT_EQ(res->status, status) << res->body;
    json j = json::parse(res->body, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << res->body;
    return j;
  }

  testing::InProcessDaemon daemon_{daemonOptions()};
};

TEST_F(ApiPlacementHttp, StatusCodes) {
  // Before the first crawl: 503 with the reason.
  json j = post(R"({"hosts": 2})", 503);
  EXPECT_EQ(j["error"]["code"], 503);
  EXPECT_EQ(j["error"]["reason"], "not_ready");
  EXPECT_NE(j["error"]["message"].get<std::string>().find("not ready"), std::string::npos);
  j = post("{not json", 400);
  EXPECT_NE(j["error"]["message"].get<std::string>().find("bad JSON"), std::string::npos);
  j = post(R"({"hosts": 2, "pattern": "mesh"})", 400);
  EXPECT_EQ(j["error"]["reason"], "invalid");

  ASSERT_TRUE(
      daemon_.startAndWaitReady(1, [](const ServiceState& s) { return s.forwarding != nullptr; }));
  j = post(R"({"hosts": 3, "alternatives": 2})", 200);
  ASSERT_EQ(j["options"].size(), 2u) << j.dump();
  EXPECT_EQ(j["options"][0]["hosts"].size(), 3u);
  EXPECT_EQ(j["options"][0]["score"]["leaf_switches"], 2);
  EXPECT_EQ(j["options"][0]["score"]["max_hops"], 3);
  EXPECT_GT(j["options"][0]["score"]["bottleneck_bytes_per_second"].get<double>(), 0.0);
  EXPECT_TRUE(j["options"][0]["hostlist"].is_string());
  EXPECT_EQ(j["request"]["hosts"], 3);
  j = post(R"({"hosts": 5})", 422);
  EXPECT_EQ(j["error"]["reason"], "unsatisfiable");
  EXPECT_EQ(j["error"]["message"], "need 5 hosts, only 4 eligible among 4 hosts");
  j = post(R"({"hosts": 2, "candidates": ["dgx0003", "dgx0004"]})", 200);
  EXPECT_EQ(j["options"][0]["hostlist"], "dgx[0003-0004]") << j.dump();

  auto metrics = daemon_.client().Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("ibfabric_placement_requests_total{result=\"invalid\"}"),
            std::string::npos);
  EXPECT_NE(metrics->body.find("ibfabric_placement_requests_total{result=\"ok\"}"),
            std::string::npos);
}

}  // namespace
}  // namespace ibfabric::api
