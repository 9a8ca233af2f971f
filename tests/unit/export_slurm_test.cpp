// Slurm topology.conf exports: golden files (tree and block) for each generator preset, checked
// by the strict topology.conf checker; hosts that lost an HCA link; --exclude-unhealthy; the
// checker's own rejections.
//
// Golden files live in tests/data/golden/; IBFABRIC_UPDATE_GOLDEN=1 rewrites them.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "discovery/hostlist.h"
#include "discovery/topogen.h"
#include "discovery/topology_compare.h"
#include "scheduler_hooks/export_slurm.h"
#include "tests/support/fabrics.h"
#include "tests/support/golden.h"
#include "tests/support/net_edits.h"
#include "tests/support/subprocess.h"

namespace ibfabric::scheduler_hooks {
namespace {

testing::FabricShape presetShape(const std::string& preset) {
  if (preset == "two-level") return testing::twoLevel(4, 2, 4);
  if (preset == "three-level") return testing::threeLevel(2, 2, 2, 2, 2);
  return testing::superpod(2);
}

NetFabric presetFabric(const std::string& preset) {
  return testing::generate(presetShape(preset)).fabric;
}

using testing::unlink;

/// Every value of `key=` on the lines, expanded.
std::set<std::string> names(const std::string& conf, const std::string& key) {
  std::set<std::string> out;
  std::istringstream in(conf);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string w;
    while (words >> w)
      if (w.rfind(key + "=", 0) == 0)
        for (auto& n : expandHostlist(w.substr(key.size() + 1))) out.insert(n);
  }
  return out;
}

class SlurmGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(SlurmGolden, TreeAndBlockMatchTheGoldenFilesAndPassTheChecker) {
  const std::string preset = GetParam();
  auto topo = topologyAsCrawled(presetFabric(preset));
  ExportLayout layout = buildExportLayout(topo);
  ASSERT_FALSE(layout.leafSets.empty());
  EXPECT_EQ(layout.hosts.size(), topo->hosts().size());
  EXPECT_TRUE(layout.excluded.empty());

  std::string tree = slurmTopologyConf(layout, SlurmPlugin::kTree);
  std::string block = slurmTopologyConf(layout, SlurmPlugin::kBlock);
  auto treeProblems = checkSlurmTopologyConf(tree, SlurmPlugin::kTree);
  auto blockProblems = checkSlurmTopologyConf(block, SlurmPlugin::kBlock);
  EXPECT_TRUE(treeProblems.empty()) << ::testing::PrintToString(treeProblems) << "\n" << tree;
  EXPECT_TRUE(blockProblems.empty()) << ::testing::PrintToString(blockProblems) << "\n" << block;

  // Every host is listed exactly once in either form.
  std::set<std::string> all;
  for (const Host& h : topo->hosts()) all.insert(h.name);
  EXPECT_EQ(names(tree, "Nodes"), all);
  EXPECT_EQ(names(block, "Nodes"), all);

  testing::expectGolden("golden/slurm-tree-" + preset + ".conf", tree);
  testing::expectGolden("golden/slurm-block-" + preset + ".conf", block);
}

std::string presetTestName(const ::testing::TestParamInfo<std::string>& p) {
  std::string n = p.param;
  std::erase(n, '-');
  return n;
}

INSTANTIATE_TEST_SUITE_P(Presets, SlurmGolden,
                         ::testing::Values("two-level", "three-level", "superpod"), presetTestName);

TEST(SlurmExport, SuperpodLeafSwitchesAreScalableUnitsWithOneRootOverTheSpines) {
  auto topo = topologyAsCrawled(presetFabric("superpod"));
  ExportLayout layout = buildExportLayout(topo);
  EXPECT_TRUE(layout.railOptimized);
  ASSERT_EQ(layout.leafSets.size(), 2u);
  EXPECT_EQ(layout.leafSets[0].name, "su01");
  EXPECT_EQ(layout.leafSets[0].leaves.size(), 8u);
  EXPECT_EQ(layout.leafSets[0].hosts.size(), 32u);
  std::string tree = slurmTopologyConf(layout, SlurmPlugin::kTree);
  EXPECT_NE(tree.find("SwitchName=su01 Nodes=dgx[0001-0032]\n"), std::string::npos) << tree;
  EXPECT_NE(tree.find("SwitchName=su02 Nodes=dgx[0033-0064]\n"), std::string::npos) << tree;
  EXPECT_NE(tree.find("# su01: leaves leaf-su1-r[1-8]\n"), std::string::npos) << tree;
  EXPECT_NE(tree.find("SwitchName=spine-01 Switches=su[01-02]\n"), std::string::npos) << tree;
  EXPECT_NE(tree.find("SwitchName=ibfabric-root Switches=spine-[01-08]\n"), std::string::npos)
      << tree;
  std::string block = slurmTopologyConf(layout, SlurmPlugin::kBlock);
  EXPECT_NE(block.find("BlockName=su01 Nodes=dgx[0001-0032]\n"), std::string::npos) << block;
  EXPECT_NE(block.find("BlockSizes=32,64\n"), std::string::npos) << block;
}

TEST(SlurmExport, AHostThatLostAnHcaLinkStaysInItsUnitOrIsLeftOutOnRequest) {
  NetFabric f = presetFabric("superpod");
  unlink(f, "dgx0003-mlx5_2", 1);
  auto topo = topologyAsCrawled(f);
  HostHealthMap health = hostHealthFromTopology(*topo);
  ASSERT_EQ(health.count("dgx0003"), 1u);
  // 7 of 8 HCAs up: degraded, the HCA down named; left out on request all the same.
  EXPECT_EQ(health.at("dgx0003").health, HostHealth::kDegraded);
  EXPECT_TRUE(health.at("dgx0003").hcaDown);
  EXPECT_NE(health.at("dgx0003").reason.find("mlx5_2"), std::string::npos)
      << health.at("dgx0003").reason;

  // Kept: it still belongs to su01 (its 7 leaves are su01's).
  ExportLayout kept = buildExportLayout(topo, {false, health, nullptr});
  ASSERT_NE(kept.leafSetOf("dgx0003"), nullptr);
  EXPECT_EQ(kept.leafSetOf("dgx0003")->name, "su01");
  EXPECT_EQ(kept.leafSets.size(), 2u);

  // Left out on request, with the reason in a comment; the file is still valid.
  ExportLayout out = buildExportLayout(topo, {true, health, nullptr});
  EXPECT_EQ(out.leafSetOf("dgx0003"), nullptr);
  ASSERT_EQ(out.excluded.size(), 1u);
  for (SlurmPlugin p : {SlurmPlugin::kTree, SlurmPlugin::kBlock}) {
    std::string conf = slurmTopologyConf(out, p);
    EXPECT_TRUE(checkSlurmTopologyConf(conf, p).empty()) << conf;
    EXPECT_EQ(names(conf, "Nodes").count("dgx0003"), 0u) << conf;
    EXPECT_NE(conf.find("# left out: dgx0003: degraded ("), std::string::npos) << conf;
    EXPECT_NE(conf.find("Nodes=dgx[0001-0002,0004-0032]"), std::string::npos) << conf;
  }
  // Block sizes follow the smallest block.
  EXPECT_NE(slurmTopologyConf(out, SlurmPlugin::kBlock).find("BlockSizes=31,62\n"),
            std::string::npos);
}

TEST(SlurmExport, NoHostsIsAnError) {
  NetFabric f;
  NetNode sw;
  sw.type = NodeType::kSwitch;
  sw.numPorts = 4;
  sw.id = "lonely";
  f.nodes.push_back(sw);
  f.reindex();
  ExportLayout layout = buildExportLayout(topologyAsCrawled(f));
  EXPECT_THROW(slurmTopologyConf(layout, SlurmPlugin::kTree), std::invalid_argument);
}

TEST(SlurmExport, NamesAreShortSafeAndUnique) {
  EXPECT_EQ(exportName("MF0;leaf-01:MQM8790-HS2F/U1"), "leaf-01");
  EXPECT_EQ(exportName("Quantum Mellanox Technologies"), "quantum-mellanox-technologies");
  EXPECT_EQ(exportName("  ;;;  "), "");
  EXPECT_EQ(exportName(std::string(100, 'a')).size(), 63u);
  EXPECT_TRUE(isPlainHostName("dgx0001.cluster"));
  EXPECT_FALSE(isPlainHostName("dgx 0001"));
  EXPECT_FALSE(isPlainHostName(""));
}

TEST(SlurmChecker, RejectsWhatSlurmRejectsOrWarnsAbout) {
  auto problems = [](const std::string& text, SlurmPlugin p = SlurmPlugin::kTree) {
    return checkSlurmTopologyConf(text, p);
  };
  EXPECT_TRUE(problems("SwitchName=s0 Nodes=n[1-2]\nSwitchName=s1 Nodes=n[3-4]\n"
                       "SwitchName=top Switches=s[0-1]\n")
                  .empty());
  // Two top switches.
  EXPECT_FALSE(problems("SwitchName=s0 Nodes=n[1-2]\nSwitchName=s1 Nodes=n[3-4]\n").empty());
  // A node on two leaves.
  EXPECT_FALSE(problems("SwitchName=s0 Nodes=n[1-2]\nSwitchName=s1 Nodes=n[2-3]\n"
                        "SwitchName=top Switches=s[0-1]\n")
                   .empty());
  // Undefined child, unknown key, name too long, bad hostlist, a loop.
  EXPECT_FALSE(problems("SwitchName=s0 Nodes=n1\nSwitchName=top Switches=s[0-1]\n").empty());
  EXPECT_FALSE(problems("SwitchName=s0 Nodes=n1 Colour=red\n").empty());
  EXPECT_FALSE(problems("SwitchName=" + std::string(65, 'x') + " Nodes=n1\n").empty());
  EXPECT_FALSE(problems("SwitchName=s0 Nodes=n[3-1]\n").empty());
  EXPECT_FALSE(problems("SwitchName=a Switches=b\nSwitchName=b Switches=a\n").empty());
  EXPECT_FALSE(problems("SwitchName=s0\n").empty());
  // Block form.
  EXPECT_TRUE(problems("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\nBlockSizes=4,8\n",
                       SlurmPlugin::kBlock)
                  .empty());
  EXPECT_FALSE(
      problems("BlockName=b1 Nodes=n[1-4]\nBlockSizes=4,12\n", SlurmPlugin::kBlock).empty());
  EXPECT_FALSE(problems("BlockName=b1 Nodes=n[1-3]\nBlockSizes=4\n", SlurmPlugin::kBlock).empty());
  EXPECT_FALSE(problems("BlockName=b1 Nodes=n[1-4]\n", SlurmPlugin::kBlock).empty());
  EXPECT_FALSE(problems("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n4\nBlockSizes=1\n",
                        SlurmPlugin::kBlock)
                   .empty());
}

TEST(SlurmExportCli, ReadsANetFileAndReportsBadInput) {
  auto file = testing::scratchDir() / "cli-superpod.net";
  auto gen =
      testing::runCli({"topo", "gen", "--preset", "superpod", "--sus", "2", "-o", file.string()});
  ASSERT_EQ(gen.exitCode, 0) << gen.describe();
  auto block =
      testing::runCli({"export", "slurm-topology", "--plugin", "block", "--from", file.string()});
  ASSERT_EQ(block.exitCode, 0) << block.describe();
  EXPECT_EQ(block.out,
            slurmTopologyConf(buildExportLayout(topologyAsCrawled(presetFabric("superpod"))),
                              SlurmPlugin::kBlock));
  auto volcano = testing::runCli({"export", "volcano", "--from", file.string()});
  ASSERT_EQ(volcano.exitCode, 0) << volcano.describe();
  EXPECT_NE(volcano.out.find("kind: HyperNode"), std::string::npos);
  auto kueue = testing::runCli({"export", "kueue-topology", "--name", "fabric"});
  ASSERT_EQ(kueue.exitCode, 0) << kueue.describe();
  EXPECT_NE(kueue.out.find("name: \"fabric\""), std::string::npos) << kueue.out;
  EXPECT_EQ(kueue.out.rfind("apiVersion: kueue.x-k8s.io/v1beta2\n", 0), 0u) << kueue.out;
  auto alpha =
      testing::runCli({"export", "kueue-topology", "--api-version", "kueue.x-k8s.io/v1alpha1"});
  ASSERT_EQ(alpha.exitCode, 0) << alpha.describe();
  EXPECT_EQ(alpha.out.rfind("apiVersion: kueue.x-k8s.io/v1alpha1\n", 0), 0u) << alpha.out;

  auto missing = testing::runCli({"export", "slurm-topology", "--from", "/nonexistent.net"});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.err.find("ibfabric: error:"), std::string::npos) << missing.describe();
  auto both = testing::runCli(
      {"export", "k8s-labels", "--from", file.string(), "--server", "http://127.0.0.1:1"});
  EXPECT_EQ(both.exitCode, 1);
  auto plugin = testing::runCli({"export", "slurm-topology", "--plugin", "torus"});
  EXPECT_NE(plugin.exitCode, 0);
  // Invalid object names and API versions: exit 2 with the reason, nothing written.
  for (const char* name : {"Not A Name", "bad_name", "-lead", "UPPER"}) {
    auto bad = testing::runCli({"export", "kueue-topology", "--name", name});
    EXPECT_EQ(bad.exitCode, 2) << bad.describe();
    EXPECT_NE(bad.err.find("--name: '"), std::string::npos) << bad.describe();
    EXPECT_TRUE(bad.out.empty()) << bad.describe();
  }
  auto badApi = testing::runCli({"export", "kueue-topology", "--api-version", "foo/bar"});
  EXPECT_EQ(badApi.exitCode, 2) << badApi.describe();
  EXPECT_NE(badApi.err.find("--api-version: 'foo/bar'"), std::string::npos) << badApi.describe();
}

}  // namespace
}  // namespace ibfabric::scheduler_hooks
