// Kubernetes exports on the superpod preset: node labels (kubectl lines as a golden file, JSON
// structure), label levels that nest as Kueue TAS requires, the Kueue Topology object, and the
// Volcano HyperNode tiers (rail leaves of one SU grouped into one tier-2 HyperNode); a
// three-level fabric and a 9-SU superpod for the other tier shapes.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "scheduler_hooks/export_k8s.h"
#include "scheduler_hooks/export_volcano.h"
#include "tests/support/fabrics.h"
#include "tests/support/golden.h"

namespace ibfabric::scheduler_hooks {
namespace {

TopologyPtr superpod(int sus) { return testing::crawledTopology(testing::superpod(sus)); }

const HyperNode* findHn(const std::vector<HyperNode>& hns, const std::string& name) {
  for (const auto& h : hns)
    if (h.name == name) return &h;
  return nullptr;
}

TEST(K8sLabels, SuperpodHostsGetLeafSuSpineGroupAndRailLabels) {
  ExportLayout layout = buildExportLayout(superpod(2));
  NodeLabels nl = nodeLabels(layout);
  ASSERT_EQ(nl.labels.size(), 64u);
  EXPECT_TRUE(nl.skipped.empty());
  const auto& a = nl.labels.at("dgx0001");
  EXPECT_EQ(a.at(kLabelLeaf), "leaf-su1-r1");
  EXPECT_EQ(a.at(kLabelSu), "su01");
  EXPECT_EQ(a.at(kLabelSpineGroup), "sg01");
  for (int r = 0; r < 8; ++r)
    EXPECT_EQ(a.at("ibfabric.io/rail-" + std::to_string(r)), "leaf-su1-r" + std::to_string(r + 1));
  EXPECT_EQ(a.size(), 11u);
  EXPECT_EQ(nl.labels.at("dgx0033").at(kLabelSu), "su02");
  EXPECT_EQ(nl.labels.at("dgx0033").at("ibfabric.io/rail-7"), "leaf-su2-r8");

  // Kueue levels must nest: hosts sharing a finer level share every coarser one.
  const std::vector<std::string> levels = {kLabelSpineGroup, kLabelSu, kLabelLeaf};
  for (std::size_t fine = 1; fine < levels.size(); ++fine) {
    std::map<std::string, std::string> parent;  // fine value -> coarse value
    for (const auto& [host, labels] : nl.labels) {
      auto [it, inserted] =
          parent.try_emplace(labels.at(levels[fine]), labels.at(levels[fine - 1]));
      EXPECT_EQ(it->second, labels.at(levels[fine - 1])) << host << " " << levels[fine];
    }
  }
  // Values are valid label values.
  for (const auto& [host, labels] : nl.labels)
    for (const auto& [k, v] : labels) {
      EXPECT_LE(v.size(), 63u);
      EXPECT_EQ(exportName(v), v) << k << "=" << v;
    }

  testing::expectGolden("golden/k8s-labels-superpod.txt", formatKubectlLabels(layout));

  auto j = labelsJson(layout);
  EXPECT_EQ(j["schema"], "ibfabric.k8s-labels/1");
  EXPECT_EQ(j["rail_optimized"], true);
  EXPECT_EQ(j["nodes"].size(), 64u);
  EXPECT_EQ(j["nodes"]["dgx0064"]["ibfabric.io/leaf"], "leaf-su2-r1");
  EXPECT_EQ(j["levels"].back(), "kubernetes.io/hostname");
  std::string yaml = formatLabelsYaml(layout);
  EXPECT_NE(yaml.find("dgx0002:\n  ibfabric.io/leaf: \"leaf-su1-r1\"\n"), std::string::npos);
}

TEST(K8sLabels, KubectlLinesAreReadyToRun) {
  std::string text = formatKubectlLabels(buildExportLayout(superpod(1)));
  EXPECT_NE(text.find("kubectl label node dgx0001 ibfabric.io/leaf=leaf-su1-r1 "
                      "ibfabric.io/rail-0=leaf-su1-r1"),
            std::string::npos)
      << text;
  std::istringstream in(text);
  std::string line;
  int commands = 0;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) continue;
    ++commands;
    EXPECT_EQ(line.rfind("kubectl label node dgx", 0), 0u) << line;
    EXPECT_EQ(line.substr(line.size() - 12), " --overwrite") << line;
  }
  EXPECT_EQ(commands, 32);
}

TEST(K8sLabels, KueueTopologyListsTheLevelsCoarsestFirst) {
  EXPECT_EQ(kueueTopologyYaml("fabric", "kueue.x-k8s.io/v1beta2"),
            "apiVersion: kueue.x-k8s.io/v1beta2\n"
            "kind: Topology\n"
            "metadata:\n"
            "  name: \"fabric\"\n"
            "spec:\n"
            "  levels:\n"
            "  - nodeLabel: \"ibfabric.io/spine-group\"\n"
            "  - nodeLabel: \"ibfabric.io/su\"\n"
            "  - nodeLabel: \"ibfabric.io/leaf\"\n"
            "  - nodeLabel: \"kubernetes.io/hostname\"\n");
}

TEST(K8sLabels, KueueTopologyNamesAndApiVersionsAreChecked) {
  EXPECT_EQ(std::string(kKueueDefaultApiVersion), "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(kueueTopologyYaml().rfind("apiVersion: kueue.x-k8s.io/v1beta2\n", 0), 0u);
  for (const auto& v : kueueTopologyApiVersions())
    EXPECT_FALSE(kueueTopologyProblem("ibfabric", v)) << v;
  for (const char* ok : {"ibfabric", "ib-fabric.prod", "a", "x1.y2-z3"})
    EXPECT_FALSE(kueueTopologyProblem(ok, kKueueDefaultApiVersion)) << ok;
  for (const std::string& bad :
       std::vector<std::string>{"", "bad_name", "Fabric", "-x", "x-", "a..b", ".a", "a b",
                                std::string(254, 'a'), std::string(64, 'a') + ".b"}) {
    auto p = kueueTopologyProblem(bad, kKueueDefaultApiVersion);
    ASSERT_TRUE(p) << bad;
    EXPECT_EQ(p->rfind("name: '", 0), 0u) << *p;
  }
  for (const char* bad : {"foo/bar", "kueue.x-k8s.io/v2", "kueue.x-k8s.io/v1beta1 ", ""}) {
    auto p = kueueTopologyProblem("ibfabric", bad);
    ASSERT_TRUE(p) << bad;
    EXPECT_EQ(p->rfind("api_version: '", 0), 0u) << *p;
  }
  EXPECT_TRUE(isDnsSubdomain(std::string(63, 'a') + "." + std::string(63, 'b')));
}

TEST(Volcano, SuperpodRailLeavesOfOneSuAreGroupedIntoOneTier2HyperNode) {
  ExportLayout layout = buildExportLayout(superpod(2));
  auto hns = volcanoHyperNodes(layout).items;
  int tier1 = 0, tier2 = 0, tier3 = 0;
  for (const auto& h : hns) {
    tier1 += h.tier == 1;
    tier2 += h.tier == 2;
    tier3 += h.tier == 3;
  }
  EXPECT_EQ(tier1, 16);  // one per rail leaf
  EXPECT_EQ(tier2, 2);   // one per SU
  EXPECT_EQ(tier3, 1);   // the spine group over both SUs
  EXPECT_EQ(hns.size(), 19u);

  const HyperNode* leaf = findHn(hns, "leaf-su1-r3");
  ASSERT_NE(leaf, nullptr);
  EXPECT_TRUE(leaf->nodeMembers);
  ASSERT_EQ(leaf->members.size(), 32u);
  EXPECT_EQ(leaf->members.front(), "dgx0001");
  EXPECT_EQ(leaf->members.back(), "dgx0032");

  const HyperNode* su = findHn(hns, "su01");
  ASSERT_NE(su, nullptr);
  EXPECT_EQ(su->tier, 2);
  EXPECT_FALSE(su->nodeMembers);
  std::vector<std::string> leaves;
  for (int r = 1; r <= 8; ++r) leaves.push_back("leaf-su1-r" + std::to_string(r));
  EXPECT_EQ(su->members, leaves);

  const HyperNode* sg = findHn(hns, "sg01");
  ASSERT_NE(sg, nullptr);
  EXPECT_EQ(sg->members, (std::vector<std::string>{"su01", "su02"}));

  std::string yaml = volcanoHyperNodesYaml(layout);
  EXPECT_NE(yaml.find("---\napiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\n"
                      "metadata:\n  name: su01\n"),
            std::string::npos);
  EXPECT_NE(
      yaml.find("spec:\n  tier: 2\n  tierName: su\n  members:\n  - type: HyperNode\n    selector:\n"
                "      exactMatch:\n        name: \"leaf-su1-r1\"\n"),
      std::string::npos);
  EXPECT_NE(yaml.find("  - type: Node\n    selector:\n      exactMatch:\n        name: "
                      "\"dgx0001\"\n"),
            std::string::npos);
}

TEST(Volcano, NineSusHaveOneSpineGroupEachAndARootOverTheUnits) {
  auto hns = volcanoHyperNodes(buildExportLayout(superpod(9))).items;
  // 72 leaves, 9 SUs; every spine group holds one SU, so no group tier; a root over the SUs.
  EXPECT_EQ(hns.size(), 72u + 9u + 1u);
  const HyperNode& root = hns.back();
  EXPECT_EQ(root.name, "ibfabric-root");
  EXPECT_EQ(root.tier, 3);
  EXPECT_EQ(root.members.size(), 9u);
  EXPECT_EQ(root.members.front(), "su01");
}

TEST(Volcano, ThreeLevelLeavesGroupedByPod) {
  ExportLayout layout =
      buildExportLayout(testing::crawledTopology(testing::threeLevel(2, 2, 2, 2, 2)));
  EXPECT_FALSE(layout.railOptimized);
  auto hns = volcanoHyperNodes(layout).items;
  ASSERT_EQ(hns.size(), 4u + 2u + 1u);
  EXPECT_EQ(hns[0].name, "leaf-p1-01");
  EXPECT_EQ(hns[0].members, (std::vector<std::string>{"dgx0001", "dgx0002"}));
  EXPECT_EQ(findHn(hns, "sg02")->members, (std::vector<std::string>{"leaf-p2-01", "leaf-p2-02"}));
  EXPECT_EQ(hns.back().members, (std::vector<std::string>{"sg01", "sg02"}));
  NodeLabels nl = nodeLabels(layout);
  EXPECT_EQ(nl.labels.at("dgx0005").at(kLabelSu), "su02");
  EXPECT_EQ(nl.labels.at("dgx0005").at(kLabelSpineGroup), "sg02");
  EXPECT_EQ(nl.labels.at("dgx0005").count("ibfabric.io/rail-0"), 0u);
}

}  // namespace
}  // namespace ibfabric::scheduler_hooks
