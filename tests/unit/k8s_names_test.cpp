// The Kubernetes name policy (scheduler_hooks/k8s_names.h) on its own and through every
// Kubernetes-facing export and the extender, on fabrics whose host names are upper-case
// ("DGX0001") or carry '_' ("gpu_node0001"), and whose switch names carry '_'.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>

#include "discovery/topology_compare.h"
#include "scheduler_hooks/export_k8s.h"
#include "scheduler_hooks/export_volcano.h"
#include "scheduler_hooks/extender.h"
#include "scheduler_hooks/k8s_names.h"
#include "tests/support/fabrics.h"

namespace ibfabric::scheduler_hooks {
namespace {

using nlohmann::json;

/// A superpod of `sus` SUs whose hosts are named `<prefix>0001`.. and, with `underscoreSwitches`,
/// whose switch descriptions have '_' for '-' ("leaf_su1_r1").
TopologyPtr namedSuperpod(int sus, const std::string& prefix, bool underscoreSwitches) {
  auto shape = testing::superpod(sus);
  shape.options.hostPrefix = prefix;
  NetFabric fabric = testing::generate(shape).fabric;
  if (underscoreSwitches)
    for (auto& n : fabric.nodes)
      if (n.type == NodeType::kSwitch)
        for (char& c : n.desc)
          if (c == '-') c = '_';
  return topologyAsCrawled(std::move(fabric));
}

ExportLayout layoutWith(TopologyPtr t, const std::string& map = "") {
  ExportOptions o;
  if (!map.empty())
    o.k8sNodeNames = std::make_shared<const K8sNodeNameMap>(K8sNodeNameMap::parse(map, "map"));
  return buildExportLayout(std::move(t), o);
}

TEST(K8sNames, NamesAndLabelValuesAreCheckedAsTheApiServerDoes) {
  for (const char* ok : {"dgx0001", "a", "gpu-node01.cluster.local", "0x1"})
    EXPECT_TRUE(isDnsSubdomain(ok)) << ok;
  for (const char* bad : {"", "DGX0001", "gpu_node01", "-a", "a-", "a..b", ".a", "a b"})
    EXPECT_FALSE(isDnsSubdomain(bad)) << bad;
  for (const char* ok : {"", "leaf_su1_r1", "Leaf-01", "a.b", "x"})
    EXPECT_TRUE(isLabelValue(ok)) << ok;
  for (const std::string& bad :
       {std::string("-a"), std::string("a_"), std::string("a/b"), std::string(64, 'a')})
    EXPECT_FALSE(isLabelValue(bad)) << bad;
  EXPECT_EQ(kubeletNodeName("DGX0001"), "dgx0001");
  EXPECT_EQ(kubeletNodeName("gpu_Node01"), "gpu_node01");
}

TEST(K8sNames, NodeNameMapParsesLinesAndReportsBadOnes) {
  auto m = K8sNodeNameMap::parse(
      "# host node\n"
      "gpu_node0001 gpu-node0001   # comment\n"
      "\n"
      "gpu_node0002\tgpu-node0002\r\n"
      "lonely\n"
      "gpu_node0003 Bad_Name\n"
      "gpu_node0004 a b\n"
      "gpu_node0001 gpu-node-1\n",
      "k8s.map");
  EXPECT_EQ(m.size(), 2u);
  ASSERT_NE(m.find("gpu_node0001"), nullptr);
  EXPECT_EQ(*m.find("gpu_node0001"), "gpu-node-1");  // listed again: the later entry wins
  EXPECT_EQ(*m.find("gpu_node0002"), "gpu-node0002");
  EXPECT_EQ(m.find("gpu_node0003"), nullptr);
  ASSERT_EQ(m.problems().size(), 4u);
  EXPECT_EQ(m.problems()[0].line, 5);
  EXPECT_NE(m.problems()[1].message.find("k8s.map:6: 'Bad_Name' is not a Kubernetes node name"),
            std::string::npos)
      << m.problems()[1].message;
  EXPECT_EQ(m.problems()[2].line, 7);
  EXPECT_EQ(m.problems()[3].line, 8);
}

TEST(K8sNames, NodeNamesAreLowerCasedMappedOrSkippedWithTheReason) {
  auto map = K8sNodeNameMap::parse("gpu_b gpu-b\n", "m");
  auto names = resolveK8sNodeNames({"DGX01", "dgx02", "gpu_a", "gpu_b", "Twin", "twin"}, &map);
  EXPECT_EQ(*names.nodeOf("DGX01"), "dgx01");
  EXPECT_EQ(*names.nodeOf("dgx02"), "dgx02");
  EXPECT_EQ(*names.nodeOf("gpu_b"), "gpu-b");
  EXPECT_EQ(names.hostOfNode.at("gpu-b"), "gpu_b");
  EXPECT_EQ(names.nodeOf("gpu_a"), nullptr);
  EXPECT_EQ(names.nodeOf("Twin"), nullptr);  // kubelet would register both as "twin"
  EXPECT_EQ(names.nodeOf("twin"), nullptr);
  ASSERT_EQ(names.skipped.size(), 3u);
  EXPECT_EQ(names.skipped[0].rfind("Twin: node name 'twin' is shared by hosts Twin, twin", 0), 0u);
  EXPECT_EQ(names.skipped[1].rfind("gpu_a: node name 'gpu_a' is not valid", 0), 0u);
  EXPECT_NE(names.skipped[1].find("k8s_node_name_map"), std::string::npos);
}

TEST(K8sNames, ObjectNamesAreSanitizedWithAStableSuffixOnlyWhenTheyCollide) {
  EXPECT_EQ(sanitizedObjectName("leaf_su1_r1"), "leaf-su1-r1");
  EXPECT_EQ(sanitizedObjectName("Spine__01"), "spine-01");
  EXPECT_EQ(sanitizedObjectName("a._b"), "a.b");
  EXPECT_EQ(sanitizedObjectName("___"), "");
  auto alone = k8sObjectNames({"leaf_01", "su01"});
  EXPECT_EQ(alone.at("leaf_01"), "leaf-01");
  EXPECT_EQ(alone.at("su01"), "su01");
  auto clash = k8sObjectNames({"leaf-01", "leaf_01", "LEAF_01", "___"});
  EXPECT_EQ(clash.at("leaf-01"), "leaf-01");  // valid names keep theirs
  EXPECT_EQ(clash.at("leaf_01").rfind("leaf-01-", 0), 0u);
  EXPECT_EQ(clash.at("leaf_01").size(), 16u);
  EXPECT_NE(clash.at("leaf_01"), clash.at("LEAF_01"));
  EXPECT_EQ(clash.count("___"), 0u);
  // The suffix depends on the name alone, not on what else collides.
  EXPECT_EQ(k8sObjectNames({"leaf_01", "leaf-01"}).at("leaf_01"), clash.at("leaf_01"));
  for (const auto& [raw, name] : clash) EXPECT_TRUE(isDnsSubdomain(name)) << raw;
}

TEST(K8sNames, UpperCaseHostsAreLabelledAndMatchedAsTheirLowerCaseNodes) {
  ExportLayout layout = layoutWith(namedSuperpod(1, "DGX", false));
  ASSERT_EQ(layout.hosts.count("DGX0001"), 1u);
  NodeLabels nl = nodeLabels(layout);
  EXPECT_TRUE(nl.skipped.empty());
  ASSERT_EQ(nl.labels.size(), 32u);
  EXPECT_EQ(nl.labels.at("dgx0001").at(kLabelSu), "su01");
  EXPECT_EQ(nl.hostOf.at("dgx0001"), "DGX0001");
  const std::string kubectl = formatKubectlLabels(layout);
  EXPECT_NE(kubectl.find("kubectl label node dgx0001 "), std::string::npos);
  EXPECT_EQ(kubectl.find("DGX"), std::string::npos);
  EXPECT_EQ(labelsJson(layout)["fabric_hosts"]["dgx0032"], "DGX0032");
  for (const HyperNode& hn : volcanoHyperNodes(layout).items)
    for (const auto& m : hn.members) EXPECT_TRUE(isDnsSubdomain(m)) << hn.name << " " << m;

  // The extender takes the real node names kube-scheduler sends (and FQDNs of them).
  ExtenderContext ctx;
  ctx.topology = layout.topology;
  ctx.layout = std::make_shared<const ExportLayout>(layout);
  json args = {{"Pod", {{"metadata", {{"name", "p"}}}}},
               {"NodeNames", {"dgx0001", "dgx0002.cluster.local", "cpu01"}}};
  auto r = extenderFilter(args.dump(), ctx);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body["NodeNames"], json({"dgx0001", "dgx0002.cluster.local"}));
  EXPECT_EQ(r.body["FailedNodes"].size(), 1u);
  ctx.health["DGX0002"] = {HostHealth::kDown, "DGX0002 mlx5_0: missing"};
  r = extenderFilter(args.dump(), ctx);
  EXPECT_EQ(r.body["NodeNames"], json({"dgx0001"}));
  EXPECT_NE(r.body["FailedNodes"]["dgx0002.cluster.local"].get<std::string>().find("down"),
            std::string::npos);
}

TEST(K8sNames, UnderscoreHostsAreSkippedWithACountUnlessMapped) {
  TopologyPtr t = namedSuperpod(1, "gpu_node", false);
  ExportLayout plain = layoutWith(t);
  NodeLabels nl = nodeLabels(plain);
  EXPECT_TRUE(nl.labels.empty());
  EXPECT_EQ(nl.skipped.size(), 32u);
  auto j = labelsJson(plain);
  EXPECT_EQ(j["skipped_count"], 32);
  EXPECT_NE(formatKubectlLabels(plain).find("# skipped 32 name(s)"), std::string::npos);
  HyperNodes hns = volcanoHyperNodes(plain);
  EXPECT_TRUE(hns.items.empty());           // no HyperNode is left with a member
  EXPECT_EQ(hns.skipped.size(), 32u + 1u);  // the hosts and su01
  EXPECT_EQ(volcanoHyperNodesYaml(plain).find("kind: HyperNode"), std::string::npos);

  std::string map;
  for (int i = 1; i <= 32; i += 2) {
    char line[64];
    std::snprintf(line, sizeof line, "gpu_node%04d gpu-node%04d\n", i, i);
    map += line;
  }
  ExportLayout mapped = layoutWith(t, map);
  nl = nodeLabels(mapped);
  EXPECT_EQ(nl.labels.size(), 16u);  // the odd hosts, by their mapped names
  EXPECT_EQ(nl.skipped.size(), 16u);
  EXPECT_EQ(nl.hostOf.at("gpu-node0003"), "gpu_node0003");
  ExtenderContext ctx;
  ctx.topology = t;
  ctx.layout = std::make_shared<const ExportLayout>(mapped);
  EXPECT_EQ(fabricHostOf(mapped, "gpu-node0001"), "gpu_node0001");
  EXPECT_EQ(fabricHostOf(mapped, "gpu_node0002"), "gpu_node0002");  // a host named as such
  EXPECT_EQ(fabricHostOf(mapped, "gpu-node0002"), std::nullopt);
}

TEST(K8sNames, UnderscoreSwitchesGiveValidHyperNodesAndLabels) {
  ExportLayout layout = layoutWith(namedSuperpod(2, "dgx", true));
  NodeLabels nl = nodeLabels(layout);
  EXPECT_TRUE(nl.skipped.empty());
  EXPECT_EQ(nl.labels.at("dgx0001").at("ibfabric.io/rail-0"), "leaf_su1_r1");  // a valid value
  HyperNodes hns = volcanoHyperNodes(layout);
  EXPECT_TRUE(hns.skipped.empty());
  std::set<std::string> names;
  for (const HyperNode& hn : hns.items) {
    EXPECT_TRUE(isDnsSubdomain(hn.name)) << hn.name;
    names.insert(hn.name);
    for (const auto& m : hn.members) EXPECT_TRUE(isDnsSubdomain(m)) << hn.name << " " << m;
  }
  EXPECT_EQ(names.size(), hns.items.size());
  for (const HyperNode& hn : hns.items) {
    if (hn.nodeMembers) continue;
    for (const auto& m : hn.members) EXPECT_EQ(names.count(m), 1u) << hn.name << " -> " << m;
  }
}

}  // namespace
}  // namespace ibfabric::scheduler_hooks
