// Slurm topology.yaml exports (scheduler_hooks/export_slurm_yaml.h): the entries and their order,
// one tree per spine group on fabrics with several (a three-level tree's pods, a 16-SU superpod's
// units), every export accepted by the topology.yaml(5) checker, and what the checker rejects.
// Golden file in tests/data/golden/ (IBFABRIC_UPDATE_GOLDEN=1 rewrites it).
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <set>

#include "discovery/hostlist.h"
#include "scheduler_hooks/export_slurm.h"
#include "scheduler_hooks/export_slurm_yaml.h"
#include "tests/support/fabrics.h"
#include "tests/support/golden.h"
#include "tests/support/subprocess.h"

namespace ibfabric::scheduler_hooks {
namespace {

ExportLayout layoutOf(const testing::FabricShape& shape) {
  return buildExportLayout(testing::crawledTopology(shape));
}

/// Topology names in file order, with their type and cluster_default.
std::vector<std::string> entries(const std::string& yaml) {
  std::vector<std::string> out;
  for (const auto& e : YAML::Load(yaml)) {
    std::string type = e["tree"] ? "tree" : e["block"] ? "block" : "flat";
    out.push_back(e["topology"].as<std::string>() + ":" + type +
                  (e["cluster_default"].as<bool>() ? ":default" : ""));
  }
  return out;
}

/// Every node of a tree topology's leaves.
std::set<std::string> treeNodes(const YAML::Node& entry) {
  std::set<std::string> out;
  for (const auto& sw : entry["tree"]["switches"])
    if (sw["nodes"])
      for (const auto& n : expandHostlist(sw["nodes"].as<std::string>())) out.insert(n);
  return out;
}

TEST(SlurmYaml, SuperpodHasTreeBlockAndFlatTheTreeFirstAndDefault) {
  ExportLayout layout = layoutOf(testing::superpod(2));
  const std::string yaml = slurmTopologyYaml(layout);
  EXPECT_EQ(entries(yaml),
            (std::vector<std::string>{"ibfabric-tree:tree:default", "ibfabric-block:block",
                                      "ibfabric-flat:flat"}));
  EXPECT_TRUE(checkSlurmTopologyYaml(yaml).empty()) << checkSlurmTopologyYaml(yaml).front();
  testing::expectGolden("golden/slurm-topology-superpod.yaml", yaml);
  YAML::Node doc = YAML::Load(yaml);
  EXPECT_EQ(treeNodes(doc[0]).size(), 64u);
  EXPECT_EQ(doc[1]["block"]["block_sizes"].size(), 2u);
  EXPECT_EQ(doc[1]["block"]["block_sizes"][1].as<int>(), 64);
  EXPECT_EQ(doc[2]["flat"].as<bool>(), true);
}

TEST(SlurmYaml, OneTreePerSpineGroupOnFabricsWithSeveral) {
  for (const auto& shape : {testing::threeLevel(2, 2, 2, 2, 2), testing::superpod(16)}) {
    ExportLayout layout = layoutOf(shape);
    ASSERT_GT(layout.groups.size(), 1u) << shape.preset;
    const std::string yaml = slurmTopologyYaml(layout);
    auto problems = checkSlurmTopologyYaml(yaml);
    EXPECT_TRUE(problems.empty()) << shape.preset << ": " << problems.front();
    YAML::Node doc = YAML::Load(yaml);
    ASSERT_EQ(doc.size(), 3u + layout.groups.size()) << shape.preset;
    std::set<std::string> union_;
    for (std::size_t g = 0; g < layout.groups.size(); ++g) {
      const YAML::Node e = doc[3 + g];
      EXPECT_EQ(e["topology"].as<std::string>(), "ibfabric-" + layout.groups[g].name);
      std::set<std::string> expect;
      for (std::size_t ls : layout.groups[g].leafSets)
        expect.insert(layout.leafSets[ls].hosts.begin(), layout.leafSets[ls].hosts.end());
      const std::set<std::string> got = treeNodes(e);
      EXPECT_EQ(got, expect) << shape.preset << " " << layout.groups[g].name;
      union_.insert(got.begin(), got.end());
    }
    EXPECT_EQ(union_.size(), layout.hosts.size()) << shape.preset;
  }
}

TEST(SlurmYaml, EntriesAndPrefixAreTheOperatorsChoice) {
  std::vector<SlurmYamlEntry> e;
  EXPECT_FALSE(parseSlurmYamlEntries("block,groups", e));
  SlurmYamlOptions o;
  o.entries = e;
  o.prefix = "pod_a";
  const std::string yaml = slurmTopologyYaml(layoutOf(testing::threeLevel(2, 2, 2, 2, 2)), o);
  EXPECT_EQ(entries(yaml), (std::vector<std::string>{"pod_a-block:block:default", "pod_a-sg01:tree",
                                                     "pod_a-sg02:tree"}));
  EXPECT_TRUE(checkSlurmTopologyYaml(yaml).empty());
  EXPECT_EQ(*parseSlurmYamlEntries("tree,ring", e),
            "topologies: 'ring' is not one of tree, block, flat, groups");
  EXPECT_EQ(*parseSlurmYamlEntries("tree,tree", e), "topologies: 'tree' given twice");
  EXPECT_TRUE(parseSlurmYamlEntries("", e));
  EXPECT_FALSE(slurmYamlPrefixProblem("ibfabric.prod-1"));
  EXPECT_TRUE(slurmYamlPrefixProblem("bad name"));
  EXPECT_TRUE(slurmYamlPrefixProblem(""));
}

TEST(SlurmYaml, TheCheckerRejectsWhatTopologyYamlForbids) {
  auto first = [](const std::string& yaml) {
    auto p = checkSlurmTopologyYaml(yaml);
    return p.empty() ? std::string() : p.front();
  };
  const std::string tree = "  tree:\n    switches:\n      - switch: s1\n        nodes: n[1-2]\n";
  EXPECT_EQ(first("- topology: t\n" + tree), "");
  EXPECT_EQ(first("topology: t\n"), "the file must be a list of topologies");
  EXPECT_EQ(first("- cluster_default: true\n  topology: t\n" + tree),
            "topology 1: 'topology' must be the first attribute");
  EXPECT_EQ(first("- topology: t\n  flat: true\n" + tree),
            "topology 't': needs exactly one of block, flat, ring, torus3d, tree");
  EXPECT_EQ(first("- topology: t\n  flat: true\n- topology: t\n  flat: true\n"),
            "topology 't': defined twice");
  EXPECT_EQ(first("- topology: t\n  cluster_default: yes please\n  flat: true\n"),
            "topology 't': cluster_default must be true or false");
  EXPECT_EQ(first("- topology: t\n  colour: blue\n  flat: true\n"),
            "topology 't': unknown key 'colour'");
  EXPECT_EQ(first("- topology: t\n  flat: false\n"),
            "topology 't': flat must be true or a mapping");
  EXPECT_NE(first("- topology: t\n  tree:\n    switches:\n      - switch: a\n        nodes: n1\n"
                  "      - switch: b\n        nodes: n[1-2]\n      - switch: r\n"
                  "        children: a,b\n")
                .find("node n1 is on several leaf switches"),
            std::string::npos);
  EXPECT_NE(first("- topology: t\n  tree:\n    switches:\n      - switch: a\n"
                  "        children: zz\n")
                .find("invalid child zz"),
            std::string::npos);
  EXPECT_NE(first("- topology: b\n  block:\n    block_sizes: [2, 6]\n    blocks:\n"
                  "      - block: b1\n        nodes: n[1-2]\n")
                .find("not a power-of-two multiple"),
            std::string::npos);
  EXPECT_NE(first("- topology: b\n  block:\n    blocks:\n      - block: b1\n        nodes: n1\n")
                .find("block_sizes must be a non-empty list"),
            std::string::npos);
  EXPECT_NE(first("- topology: t\n  tree:\n    switches:\n      - switch: " + std::string(65, 'x') +
                  "\n        nodes: n1\n")
                .find("longer than 64"),
            std::string::npos);
}

TEST(SlurmYamlCli, WritesTopologyYamlAndRefusesBadOptions) {
  auto file = testing::scratchDir() / "cli-yaml-three-level.net";
  auto gen = testing::runCli({"topo", "gen", "--preset", "three-level", "--pods", "2",
                              "--leaves-per-pod", "2", "--spines-per-pod", "2", "--cores", "2",
                              "--hosts-per-leaf", "2", "-o", file.string()});
  ASSERT_EQ(gen.exitCode, 0) << gen.describe();
  auto yaml = testing::runCli({"export", "slurm-topology", "--format", "yaml", "--topologies",
                               "groups,tree", "--name", "ib", "--from", file.string()});
  ASSERT_EQ(yaml.exitCode, 0) << yaml.describe();
  EXPECT_TRUE(checkSlurmTopologyYaml(yaml.out).empty()) << yaml.out;
  EXPECT_EQ(entries(yaml.out),
            (std::vector<std::string>{"ib-sg01:tree:default", "ib-sg02:tree", "ib-tree:tree"}));
  auto conf = testing::runCli({"export", "slurm-topology", "--from", file.string()});
  ASSERT_EQ(conf.exitCode, 0) << conf.describe();
  EXPECT_NE(conf.out.find("SwitchName="), std::string::npos);  // topology.conf stays the default
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--topologies", "tree,ring"},
                                              std::vector<std::string>{"--name", "bad name"}}) {
    std::vector<std::string> cmd = {"export", "slurm-topology", "--format",
                                    "yaml",   "--from",         file.string()};
    cmd.insert(cmd.end(), bad.begin(), bad.end());
    auto r = testing::runCli(cmd);
    EXPECT_EQ(r.exitCode, 2) << r.describe();
    EXPECT_NE(r.err.find(bad[0] + ": '"), std::string::npos) << r.describe();
    EXPECT_TRUE(r.out.empty()) << r.describe();
  }
}

}  // namespace
}  // namespace ibfabric::scheduler_hooks
