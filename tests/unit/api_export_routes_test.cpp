// The scheduler export routes and the extender over real HTTP on an in-process daemon whose hosts
// are named gpu_node0001.. (not valid Kubernetes node names) with a k8s_node_name_map for some:
// node names by the map, the others skipped and counted; topology.yaml with its parameters and
// their 400s; the extender matching the mapped node names.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "scheduler_hooks/export_slurm_yaml.h"
#include "tests/support/fabrics.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/rest_get.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;

class ApiExportRoutes : public ::testing::Test {
 protected:
  void SetUp() override {
    auto shape = testing::twoLevel(2, 2, 2);
    shape.options.hostPrefix = "gpu_node";
    daemon_.topology().push(testing::crawledTopology(shape));
    RestOptions ro;
    ro.k8sNodeNames = std::make_shared<const scheduler_hooks::K8sNodeNameMap>(
        scheduler_hooks::K8sNodeNameMap::parse("gpu_node0001 gpu-node0001\n"
                                               "gpu_node0003 gpu-node0003\n",
                                               "test map"));
    ASSERT_GT(daemon_.serve(ro), 0);
    ASSERT_TRUE(daemon_.startAndWaitReady());
  }
  /// GET a text answer; its status and body.
  std::pair<int, std::string> text(const std::string& path) {
    auto res = daemon_.client().Get(path.c_str());
    if (!res) return {-1, ""};
    return {res->status, res->body};
  }

  testing::InProcessDaemon daemon_;
};

TEST_F(ApiExportRoutes, NodeNamesComeFromTheMapAndTheRestAreSkippedWithACount) {
  json labels = testing::getJson(daemon_.client(), "/api/v1/export/k8s-labels?format=json", 200);
  EXPECT_EQ(labels["nodes"].size(), 2u);
  EXPECT_TRUE(labels["nodes"].contains("gpu-node0001"));
  EXPECT_EQ(labels["fabric_hosts"]["gpu-node0003"], "gpu_node0003");
  EXPECT_EQ(labels["skipped_count"], 2);
  auto [status, kubectl] = text("/api/v1/export/k8s-labels");
  EXPECT_EQ(status, 200);
  EXPECT_NE(kubectl.find("# skipped 2 name(s)"), std::string::npos) << kubectl;
  EXPECT_NE(kubectl.find("kubectl label node gpu-node0003 "), std::string::npos) << kubectl;
  auto [vs, volcano] = text("/api/v1/export/volcano-hypernodes");
  EXPECT_EQ(vs, 200);
  EXPECT_NE(volcano.find("tierName: leaf"), std::string::npos) << volcano;
  EXPECT_EQ(volcano.find("name: \"gpu_node"), std::string::npos) << volcano;  // never emitted
  EXPECT_NE(volcano.find("name: \"gpu-node0001\""), std::string::npos) << volcano;

  // The extender takes the mapped names.
  json args = {{"Pod", {{"metadata", {{"name", "p"}}}}},
               {"NodeNames", {"gpu-node0001", "gpu-node0002"}}};
  auto res = daemon_.client().Post("/scheduler/filter", args.dump(), "application/json");
  ASSERT_TRUE(res);
  json filtered = json::parse(res->body);
  EXPECT_EQ(filtered["NodeNames"], json({"gpu-node0001"})) << res->body;
}

TEST_F(ApiExportRoutes, TopologyYamlAndItsBadParameters) {
  auto [status, yaml] =
      text("/api/v1/export/slurm-topology?format=yaml&topologies=block,tree&name=ib");
  ASSERT_EQ(status, 200) << yaml;
  EXPECT_TRUE(scheduler_hooks::checkSlurmTopologyYaml(yaml).empty()) << yaml;
  EXPECT_NE(yaml.find("- topology: \"ib-block\"\n  cluster_default: true\n"), std::string::npos)
      << yaml;
  auto [cs, conf] = text("/api/v1/export/slurm-topology");
  EXPECT_EQ(cs, 200);
  EXPECT_EQ(conf.rfind("# Slurm topology.conf", 0), 0u) << conf;
  for (const char* bad : {"?format=xml", "?format=yaml&topologies=tree,ring",
                          "?format=yaml&name=bad%20name", "?format=yaml&topologies=tree,tree"}) {
    json e =
        testing::getJson(daemon_.client(), std::string("/api/v1/export/slurm-topology") + bad, 400);
    EXPECT_FALSE(e["error"]["message"].get<std::string>().empty()) << bad;
  }
}

}  // namespace
}  // namespace ibfabric::api
