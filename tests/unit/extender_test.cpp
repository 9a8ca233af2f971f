// kube-scheduler extender contract: filter and prioritize with request bodies exactly as
// kube-scheduler's HTTPExtender marshals extenderv1.ExtenderArgs (Go field names, no json tags:
// "Pod", "Nodes", "NodeNames"; the unused one is null), for both nodeCacheCapable forms;
// answers with the ExtenderFilterResult / HostPriorityList field names.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>

#include "scheduler_hooks/extender.h"
#include "tests/support/fabrics.h"

namespace ibfabric::scheduler_hooks {
namespace {

using nlohmann::json;

/// Three-level: pod 1 = leaf-p1-01 (dgx0001-0002), leaf-p1-02 (dgx0003-0004); pod 2 = dgx0005-8.
TopologyPtr threeLevel() { return testing::crawledTopology(testing::threeLevel(2, 2, 2, 2, 2)); }

json pod(const json& annotations = json::object()) {
  // A v1.Pod as kube-scheduler marshals it (trimmed of fields the extender ignores).
  return {{"metadata",
           {{"name", "train-0"},
            {"namespace", "ml"},
            {"uid", "5b2f7d7e-0f7e-4a43-9c1e-3f8f3f0b1c11"},
            {"creationTimestamp", "2026-11-29T17:00:00Z"},
            {"annotations", annotations}}},
          {"spec",
           {{"containers", json::array({{{"name", "worker"},
                                         {"image", "nvcr.io/nvidia/pytorch:24.01-py3"},
                                         {"resources", {{"limits", {{"nvidia.com/gpu", "8"}}}}}}})},
            {"schedulerName", "default-scheduler"}}},
          {"status", {{"phase", "Pending"}}}};
}

std::string namesArgs(const json& p, const std::vector<std::string>& names) {
  return json{{"Pod", p}, {"Nodes", nullptr}, {"NodeNames", names}}.dump();
}

json node(const std::string& name) {
  return {{"metadata",
           {{"name", name},
            {"uid", "uid-" + name},
            {"labels", {{"kubernetes.io/hostname", name}, {"nvidia.com/gpu.count", "8"}}}}},
          {"spec", {{"podCIDR", "10.0.0.0/24"}}},
          {"status", {{"capacity", {{"nvidia.com/gpu", "8"}}}}}};
}

std::string nodesArgs(const json& p, const std::vector<std::string>& names) {
  json items = json::array();
  for (const auto& n : names) items.push_back(node(n));
  return json{{"Pod", p},
              {"Nodes", {{"metadata", {{"resourceVersion", "12345"}}}, {"items", items}}},
              {"NodeNames", nullptr}}
      .dump();
}

ExtenderContext context() {
  ExtenderContext ctx;
  ctx.topology = threeLevel();
  ctx.health["dgx0003"] = {HostHealth::kDown, "dgx0003 mlx5_0 port 1: link Down"};
  ctx.health["dgx0004"] = {HostHealth::kDegraded, "below-peers: 1x"};
  ctx.health["dgx0006"] = {HostHealth::kFaulty, "flapping"};
  return ctx;
}

TEST(ExtenderFilter, NodeNamesFormDropsUnknownDownFaultyAndDegradedNodes) {
  auto r = extenderFilter(
      namesArgs(pod(), {"dgx0001", "dgx0003", "dgx0004", "dgx0006", "cpu-node-7", "dgx0008"}),
      context());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["Error"], "");
  EXPECT_TRUE(r.body["Nodes"].is_null());
  EXPECT_EQ(r.body["NodeNames"], json({"dgx0001", "dgx0008"}));
  const json& failed = r.body["FailedNodes"];
  ASSERT_EQ(failed.size(), 4u) << failed.dump();
  EXPECT_NE(failed["dgx0003"].get<std::string>().find("HCA link down"), std::string::npos);
  EXPECT_NE(failed["dgx0004"].get<std::string>().find("degraded"), std::string::npos);
  EXPECT_NE(failed["dgx0006"].get<std::string>().find("faulty"), std::string::npos);
  EXPECT_NE(failed["cpu-node-7"].get<std::string>().find("not a host of the InfiniBand fabric"),
            std::string::npos);
  // Preemption cannot fix a cable: the same nodes are unresolvable.
  EXPECT_EQ(r.body["FailedAndUnresolvableNodes"], failed);
}

TEST(ExtenderFilter, NodesFormReturnsTheSameNodeObjects) {
  auto r = extenderFilter(nodesArgs(pod(), {"dgx0001", "dgx0003", "dgx0005"}), context());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_TRUE(r.body["NodeNames"].is_null());
  const json& items = r.body["Nodes"]["items"];
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0], node("dgx0001"));
  EXPECT_EQ(items[1], node("dgx0005"));
  EXPECT_EQ(r.body["FailedNodes"].size(), 1u);
}

TEST(ExtenderFilter, AllowDegradedKeepsDegradedButNeverDownNodes) {
  auto r = extenderFilter(
      namesArgs(pod({{"ibfabric.io/allow-degraded", "true"}}), {"dgx0003", "dgx0004"}), context());
  EXPECT_EQ(r.body["NodeNames"], json({"dgx0004"}));
  EXPECT_EQ(r.body["FailedNodes"].size(), 1u);
  auto bad = extenderFilter(
      namesArgs(pod({{"ibfabric.io/allow-degraded", "perhaps"}}), {"dgx0001"}), context());
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body["Error"].get<std::string>().find("allow-degraded"), std::string::npos);
}

TEST(ExtenderFilter, FqdnNodeNamesAndAnyFieldCaseAreAccepted) {
  std::string body =
      json{{"pod", pod()}, {"nodenames", {"dgx0001.cluster.local", "dgx0002"}}}.dump();
  auto r = extenderFilter(body, context());
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["NodeNames"], json({"dgx0001.cluster.local", "dgx0002"}));
  const ExportLayout layout = buildExportLayout(context().topology);
  EXPECT_EQ(fabricHostOf(layout, "dgx0001.cluster.local"), "dgx0001");
  EXPECT_EQ(fabricHostOf(layout, "dgx9999.cluster.local"), std::nullopt);
  // A host the daemon knows is down but the topology no longer has, by its FQDN.
  ExtenderContext ctx = context();
  ctx.health["dgx9999"] = {HostHealth::kDown, "no longer seen by the crawls"};
  auto gone = extenderFilter(namesArgs(pod(), {"dgx9999.cluster.local"}), ctx);
  EXPECT_NE(
      gone.body["FailedNodes"]["dgx9999.cluster.local"].get<std::string>().find("HCA link down"),
      std::string::npos)
      << gone.body.dump();
}

TEST(ExtenderFilter, BadRequestsGetAnErrorNotACrash) {
  for (const std::string body :
       {"", "{", "[]", "{\"Pod\": {}}", "{\"NodeNames\": [1, 2]}",
        "{\"Nodes\": {\"items\": [{\"metadata\": {}}]}}", "{\"Nodes\": {\"items\": 7}}"}) {
    auto r = extenderFilter(body, context());
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_FALSE(r.body["Error"].get<std::string>().empty()) << body;
    auto p = extenderPrioritize(body, context());
    EXPECT_EQ(p.status, 400) << body;
  }
  ExtenderContext notReady;
  auto r = extenderFilter(namesArgs(pod(), {"dgx0001"}), notReady);
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body["Error"].get<std::string>().find("not been discovered"), std::string::npos);
  // An empty candidate list is fine.
  auto empty = extenderFilter(namesArgs(pod(), {}), context());
  EXPECT_EQ(empty.status, 200);
  EXPECT_EQ(empty.body["NodeNames"], json::array());
}

std::map<std::string, std::int64_t> scores(const ExtenderReply& r) {
  std::map<std::string, std::int64_t> out;
  for (const auto& hp : r.body)
    out[hp["Host"].get<std::string>()] = hp["Score"].get<std::int64_t>();
  return out;
}

TEST(ExtenderPrioritize, FavoursTheLeafAndPodOfTheJobsPeers) {
  ExtenderContext ctx;
  ctx.topology = threeLevel();
  auto r = extenderPrioritize(namesArgs(pod({{"ibfabric.io/peer-hosts", "dgx0001"}}),
                                        {"dgx0002", "dgx0003", "dgx0005", "dgx0001"}),
                              ctx);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  ASSERT_TRUE(r.body.is_array());
  ASSERT_EQ(r.body.size(), 4u);
  EXPECT_EQ(r.body[0]["Host"], "dgx0002");
  auto s = scores(r);
  EXPECT_EQ(s["dgx0001"], 10);  // the peer's own node
  EXPECT_EQ(s["dgx0002"], 9);   // same leaf: 6 + 3 * (0.7 + 0.3)
  EXPECT_EQ(s["dgx0003"], 3);   // same pod (spine group): 5 * (0.7 * 0.5 + 0.3) = 3.25
  EXPECT_EQ(s["dgx0005"], 2);   // other pod: 5 * 0.3 = 1.5
  for (const auto& [h, v] : s) {
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 10);
  }
}

TEST(ExtenderPrioritize, JobGroupHostsAndHotUplinksCount) {
  ExtenderContext ctx;
  ctx.topology = threeLevel();
  ctx.jobGroupHosts = [](const std::string& group) {
    return group == "llm-70b" ? std::vector<std::string>{"dgx0005"} : std::vector<std::string>{};
  };
  const Host* h7 = ctx.topology->findHost("dgx0007");
  ASSERT_NE(h7, nullptr);
  const NodeIndex hotLeaf = ctx.topology->node(h7->hcas[0]).port(PortNum(1))->remote->node;
  ctx.uplinkUtilization = [hotLeaf](NodeIndex leaf) -> std::optional<double> {
    if (leaf == hotLeaf) return 1.0;
    return 0.0;
  };
  auto r = extenderPrioritize(
      namesArgs(pod({{"ibfabric.io/job-group", "llm-70b"}}), {"dgx0006", "dgx0007", "dgx0001"}),
      ctx);
  auto s = scores(r);
  EXPECT_EQ(s["dgx0006"], 9);  // the peer's leaf, cool up-links
  EXPECT_EQ(s["dgx0007"], 2);  // same pod, hot up-links: 5 * (0.35 + 0)
  EXPECT_EQ(s["dgx0001"], 2);  // other pod, cool: 5 * 0.3

  // No peers: cool up-links decide; a down node scores 0.
  ctx.health["dgx0001"] = {HostHealth::kDown, "link down"};
  auto alone = scores(extenderPrioritize(namesArgs(pod(), {"dgx0006", "dgx0007", "dgx0001"}), ctx));
  EXPECT_EQ(alone["dgx0006"], 10);
  EXPECT_EQ(alone["dgx0007"], 0);
  EXPECT_EQ(alone["dgx0001"], 0);
}

TEST(ExtenderPrioritize, ThePlacerPredictionOrdersEachBand) {
  ExtenderContext ctx;
  ctx.topology = threeLevel();
  // A placer whose objective for the peer + one candidate depends on the candidate.
  const std::map<std::string, double> objective = {
      {"dgx0002", 0.4}, {"dgx0004", 0.8}, {"dgx0007", 0.9}, {"dgx0008", 0.45}};
  std::vector<routing::PlacementRequest> seen;
  ctx.placer = [&](const routing::PlacementRequest& req) {
    seen.push_back(req);
    const std::string& h = req.candidates.back();
    if (h == "dgx0008")
      throw routing::PlacementError(routing::PlacementError::Kind::kUnsatisfiable, "no");
    routing::PlacementAnswer a;
    a.options.push_back({req.candidates, {}});
    a.options.back().score.objective = objective.at(h);
    return a;
  };
  auto s = scores(extenderPrioritize(
      namesArgs(pod({{"ibfabric.io/pattern", "alltoall"}, {"ibfabric.io/peer-hosts", "dgx0001"}}),
                {"dgx0002", "dgx0007", "dgx0004", "dgx0001", "dgx0008"}),
      ctx));
  ASSERT_EQ(seen.size(), 4u);  // one question per candidate that is not a peer
  for (const auto& req : seen) {
    EXPECT_EQ(req.hosts, 2);
    EXPECT_EQ(req.pattern, routing::CommPattern::kAllToAll);
    ASSERT_EQ(req.candidates.size(), 2u);
    EXPECT_EQ(req.candidates.front(), "dgx0001");
  }
  EXPECT_EQ(s["dgx0001"], 10);  // the peer's own node
  EXPECT_EQ(s["dgx0002"], 7);   // its leaf set: 6 + 3 * 0.4 / 0.9
  EXPECT_EQ(s["dgx0007"], 5);   // elsewhere, the best prediction: 5 * 1
  EXPECT_EQ(s["dgx0004"], 4);   // elsewhere: 5 * 0.8 / 0.9
  EXPECT_EQ(s["dgx0008"], 0);   // no answer with it

  // A placer that is not ready leaves topology and health to decide.
  ctx.placer = [](const routing::PlacementRequest&) -> routing::PlacementAnswer {
    throw routing::PlacementError(routing::PlacementError::Kind::kNotReady, "no routes yet");
  };
  auto fallback = scores(extenderPrioritize(
      namesArgs(pod({{"ibfabric.io/peer-hosts", "dgx0001"}}), {"dgx0002", "dgx0007"}), ctx));
  EXPECT_EQ(fallback["dgx0002"], 9);
  EXPECT_EQ(fallback["dgx0007"], 2);

  auto bad =
      extenderPrioritize(namesArgs(pod({{"ibfabric.io/pattern", "butterfly"}}), {"dgx0002"}), ctx);
  EXPECT_EQ(bad.status, 400);
  auto badList = extenderPrioritize(
      namesArgs(pod({{"ibfabric.io/peer-hosts", "dgx[9-1]"}}), {"dgx0002"}), ctx);
  EXPECT_EQ(badList.status, 400);
}

TEST(ExtenderPrioritize, NodesFormAndUnknownNodes) {
  ExtenderContext ctx;
  ctx.topology = threeLevel();
  auto r = extenderPrioritize(nodesArgs(pod(), {"dgx0001", "login-1"}), ctx);
  ASSERT_EQ(r.status, 200);
  auto s = scores(r);
  EXPECT_EQ(s["dgx0001"], 10);
  EXPECT_EQ(s["login-1"], 0);
}

}  // namespace
}  // namespace ibfabric::scheduler_hooks
