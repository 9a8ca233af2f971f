// Kubernetes exports on the superpod preset: node labels (kubectl lines as a golden file, JSON
// structure), label levels that nest as Kueue TAS requires, the Kueue Topology object; a
// three-level fabric's labels. Volcano: export_volcano_test.cpp.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "scheduler_hooks/export_k8s.h"
#include "tests/support/fabrics.h"
#include "tests/support/golden.h"

namespace ibfabric::scheduler_hooks {
namespace {

TopologyPtr superpod(int sus) { return testing::crawledTopology(testing::superpod(sus)); }

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

TEST(K8sLabels, ThreeLevelSuIsThePodAndNoRailLabels) {
  ExportLayout layout =
      buildExportLayout(testing::crawledTopology(testing::threeLevel(2, 2, 2, 2, 2)));
  EXPECT_FALSE(layout.railOptimized);
  NodeLabels nl = nodeLabels(layout);
  EXPECT_EQ(nl.labels.at("dgx0005").at(kLabelSu), "su02");
  EXPECT_EQ(nl.labels.at("dgx0005").at(kLabelSpineGroup), "sg02");
  EXPECT_EQ(nl.labels.at("dgx0005").count("ibfabric.io/rail-0"), 0u);
}

}  // namespace
}  // namespace ibfabric::scheduler_hooks
