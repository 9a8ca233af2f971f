// REST and the kube-scheduler extender rank with the same placement engine: on an in-process
// daemon whose host links of one host are hot (so the engine's ranking differs from the
// topology-only one), the request the extender builds for a pod, sent as POST /api/v1/placement,
// ranks the hosts in the order the extender's POST /scheduler/prioritize scores them.
// (The extender asks the engine once per node, for the peers plus that node.)
#include <gtest/gtest.h>
#include <httplib.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/fakes/fake_sources.h"
#include "tests/support/fabrics.h"
#include "tests/support/in_process_daemon.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

/// FakeCounterSource, but the links of the `hot` nodes carry a steady 10 GB/s each way.
class HotLinkCounters final : public CounterSource {
 public:
  HotLinkCounters(std::shared_ptr<FakeCounterControl> control, std::set<Guid> hot)
      : inner_(std::move(control)), hot_(std::move(hot)) {}
  void setTopology(TopologyPtr topology) override { inner_.setTopology(std::move(topology)); }
  telemetry::CounterSnapshotPtr sweep() override {
    auto snap = std::make_shared<telemetry::CounterSnapshot>(*inner_.sweep());
    if (!start_) start_ = snap->started;
    const double seconds = std::chrono::duration<double>(snap->started - *start_).count();
    const auto units = static_cast<std::uint64_t>(seconds * 2.5e9);  // 4-octet units: 10 GB/s
    for (auto& s : snap->ports) {
      if (!hot_.count(s.key.node) && !(s.remote && hot_.count(s.remote->node))) continue;
      s.counters.set(telemetry::Counter::kXmitData, units, 64);
      s.counters.set(telemetry::Counter::kRcvData, units, 64);
    }
    return snap;
  }
  routing::ForwardingTablesPtr readForwardingTables(const TopologyPtr& topology,
                                                    const routing::ForwardingTablesPtr& previous,
                                                    std::string* reason) override {
    return inner_.readForwardingTables(topology, previous, reason);
  }
  std::string describe() const override { return "hot-links"; }

 private:
  FakeCounterSource inner_;
  std::set<Guid> hot_;
  std::optional<mad::Clock::time_point> start_;
};

json pod(const json& annotations) {
  return {{"metadata", {{"name", "train-2"}, {"namespace", "ml"}, {"annotations", annotations}}},
          {"spec", {{"schedulerName", "default-scheduler"}}}};
}

class ApiPlacementAgreement : public ::testing::Test {
 protected:
  static testing::InProcessDaemon::Options daemonOptions(const TopologyPtr& topology) {
    std::set<Guid> hot;
    for (NodeIndex i : topology->findHost(kHot)->hcas) hot.insert(topology->node(i).guid);
    testing::InProcessDaemon::Options o;
    o.service.sweepInterval = 50ms;
    o.counters->serveTables = true;
    o.counterSources = [control = o.counters, hot] {
      return std::make_unique<HotLinkCounters>(control, hot);
    };
    return o;
  }
  void SetUp() override {
    daemon_.topology().push(topology_);
    ASSERT_GT(daemon_.serve(), 0);
  }
  json post(const std::string& path, const json& body) {
    auto res = daemon_.client().Post(path.c_str(), body.dump(), "application/json");
    EXPECT_TRUE(res) << path;
    if (!res) return {};
    EXPECT_EQ(res->status, 200) << path << ": " << res->body;
    return json::parse(res->body, nullptr, false);
  }
  NodeIndex leafOf(const std::string& host) const {
    const Node& hca = topology_->node(topology_->findHost(host)->hcas.front());
    for (const auto& p : hca.ports)
      if (p && p->remote) return p->remote->node;
    return NodeIndex(-1);
  }

  static constexpr const char* kHot = "dgx0002";
  TopologyPtr topology_ = testing::routableTopology(testing::twoLevel(2, 2, 2));
  testing::InProcessDaemon daemon_{daemonOptions(topology_)};
};

TEST_F(ApiPlacementAgreement, ExtenderScoresFollowTheRestRanking) {
  // Peers on both leaves, one candidate node on each: the two candidates are alike for the
  // topology part of the score (same affinity to the peers, same cool up-links), so only the
  // placement engine tells them apart — and it sees dgx0002's hot host link.
  ASSERT_EQ(leafOf("dgx0001"), leafOf("dgx0002"));
  ASSERT_EQ(leafOf("dgx0003"), leafOf("dgx0004"));
  ASSERT_NE(leafOf("dgx0001"), leafOf("dgx0003"));
  const std::vector<std::string> nodes = {"dgx0002", "dgx0004"};
  const json annotations = {{"ibfabric.io/peer-hosts", "dgx[0001,0003]"},
                            {"ibfabric.io/pattern", "alltoall"}};
  // The same choice as one REST request: peers + 1 hosts among peers and nodes. (The extender
  // asks the engine for the peers plus each node in turn, extender_scores.h.)
  const json request = {{"hosts", 3},
                        {"pattern", "alltoall"},
                        {"candidates", {"dgx0001", "dgx0002", "dgx0003", "dgx0004"}},
                        {"alternatives", 4},
                        {"allow_degraded", false}};

  ASSERT_TRUE(daemon_.startAndWaitReady(
      4, [](const ServiceState& s) { return s.forwarding != nullptr && s.linkLoad != nullptr; }));

  const json before = post("/api/v1/placement", request);
  const json scores = post("/scheduler/prioritize",
                           {{"Pod", pod(annotations)}, {"Nodes", nullptr}, {"NodeNames", nodes}});
  const json after = post("/api/v1/placement", request);
  ASSERT_TRUE(before.contains("options")) << before.dump();
  ASSERT_TRUE(scores.is_array()) << scores.dump();

  // Both REST answers come from the same engine state: same options, same objectives.
  ASSERT_EQ(before["options"].size(), after["options"].size());
  for (std::size_t r = 0; r < before["options"].size(); ++r) {
    EXPECT_EQ(before["options"][r]["hosts"], after["options"][r]["hosts"]) << r;
    EXPECT_NEAR(before["options"][r]["score"]["objective"].get<double>(),
                after["options"][r]["score"]["objective"].get<double>(), 0.05)
        << r;
  }
  // The engine sees the hot link: its best option leaves dgx0002 out.
  std::map<std::string, std::size_t> firstOption;  // node -> index of the first option with it
  for (std::size_t r = before["options"].size(); r-- > 0;)
    for (const auto& h : before["options"][r]["hosts"]) firstOption[h.get<std::string>()] = r;
  ASSERT_TRUE(firstOption.count("dgx0004")) << before.dump();
  EXPECT_EQ(firstOption["dgx0004"], 0u) << before.dump();
  ASSERT_TRUE(firstOption.count("dgx0002")) << before.dump();
  EXPECT_GT(firstOption["dgx0002"], 0u) << before.dump();

  // The extender's scores follow that ranking: the node in the better REST option scores higher.
  std::map<std::string, int> score;
  for (const auto& s : scores) score[s["Host"].get<std::string>()] = s["Score"].get<int>();
  ASSERT_EQ(score.size(), 2u) << scores.dump();
  EXPECT_GT(score["dgx0004"], score["dgx0002"]) << scores.dump() << "\n" << before.dump();
}

}  // namespace
}  // namespace ibfabric::api
