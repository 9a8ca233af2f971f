// Volcano HyperNode tiers (scheduler_hooks/export_volcano.h): tier 1 one HyperNode per leaf set —
// a scalable unit of a rail-optimized superpod, a leaf elsewhere — so that every node is in
// exactly one tier-1 HyperNode; spine groups and a root above; tierName on every tier; on a
// two-level tree, a three-level tree and superpods of 2, 9 and 16 scalable units.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "scheduler_hooks/export_volcano.h"
#include "tests/support/fabrics.h"

namespace ibfabric::scheduler_hooks {
namespace {

ExportLayout layoutOf(const testing::FabricShape& shape) {
  return buildExportLayout(testing::crawledTopology(shape));
}

const HyperNode* findHn(const std::vector<HyperNode>& hns, const std::string& name) {
  for (const auto& h : hns)
    if (h.name == name) return &h;
  return nullptr;
}

/// HyperNodes per tier, tierName per tier.
std::map<int, std::pair<int, std::set<std::string>>> tiers(const std::vector<HyperNode>& hns) {
  std::map<int, std::pair<int, std::set<std::string>>> out;
  for (const auto& h : hns) {
    ++out[h.tier].first;
    out[h.tier].second.insert(h.tierName);
  }
  return out;
}

/// Every node of the layout is a member of exactly one tier-1 HyperNode; HyperNode members are
/// HyperNodes of the tier below that exist; one HyperNode on top reaches every node.
void expectWellFormed(const ExportLayout& layout, const std::vector<HyperNode>& hns,
                      const std::string& what) {
  std::map<std::string, int> tier1;
  std::map<std::string, const HyperNode*> byName;
  std::set<std::string> referenced;
  for (const auto& h : hns) {
    byName[h.name] = &h;
    EXPECT_FALSE(h.tierName.empty()) << what << " " << h.name;
    EXPECT_EQ(h.nodeMembers, h.tier == 1) << what << " " << h.name;
    if (h.tier == 1)
      for (const auto& m : h.members) ++tier1[m];
    if (h.nodeMembers) continue;
    for (const auto& m : h.members) {
      ASSERT_TRUE(byName.count(m)) << what << ": " << h.name << " -> " << m << " (not before it)";
      EXPECT_LT(byName[m]->tier, h.tier) << what << " " << m;
      referenced.insert(m);
    }
  }
  EXPECT_EQ(tier1.size(), layout.hosts.size()) << what;
  for (const auto& [node, count] : tier1) EXPECT_EQ(count, 1) << what << " " << node;
  int tops = 0;
  for (const auto& h : hns) tops += referenced.count(h.name) ? 0 : 1;
  EXPECT_EQ(tops, 1) << what;
}

TEST(Volcano, SuperpodTier1IsTheScalableUnitWithAllItsHosts) {
  ExportLayout layout = layoutOf(testing::superpod(2));
  auto hns = volcanoHyperNodes(layout).items;
  expectWellFormed(layout, hns, "superpod-2");
  auto t = tiers(hns);
  EXPECT_EQ(t[1].first, 2);  // su01, su02 — not 16 rail leaves
  EXPECT_EQ(t[1].second, std::set<std::string>{"su"});
  EXPECT_EQ(t[2].first, 1);  // sg01 over both
  EXPECT_EQ(t[2].second, std::set<std::string>{"spine-group"});
  EXPECT_EQ(hns.size(), 3u);
  const HyperNode* su = findHn(hns, "su01");
  ASSERT_NE(su, nullptr);
  ASSERT_EQ(su->members.size(), 32u);
  EXPECT_EQ(su->members.front(), "dgx0001");
  EXPECT_EQ(su->members.back(), "dgx0032");
  EXPECT_EQ(findHn(hns, "sg01")->members, (std::vector<std::string>{"su01", "su02"}));

  std::string yaml = volcanoHyperNodesYaml(layout);
  EXPECT_NE(yaml.find("---\napiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\n"
                      "metadata:\n  name: su01\n  labels:\n    ibfabric.io/generated: \"true\"\n"
                      "spec:\n  tier: 1\n  tierName: su\n  members:\n  - type: Node\n"
                      "    selector:\n      exactMatch:\n        name: \"dgx0001\"\n"),
            std::string::npos)
      << yaml.substr(0, 600);
  EXPECT_NE(yaml.find("spec:\n  tier: 2\n  tierName: spine-group\n  members:\n"
                      "  - type: HyperNode\n    selector:\n      exactMatch:\n"
                      "        name: \"su01\"\n"),
            std::string::npos);
}

TEST(Volcano, LargeSuperpodsHaveOneUnitPerGroupAndARootOverTheUnits) {
  for (int sus : {9, 16}) {
    ExportLayout layout = layoutOf(testing::superpod(sus));
    auto hns = volcanoHyperNodes(layout).items;
    expectWellFormed(layout, hns, "superpod-" + std::to_string(sus));
    // Every spine group holds one SU, so no group tier; the root over the SUs at tier 2.
    ASSERT_EQ(hns.size(), static_cast<std::size_t>(sus) + 1u);
    const HyperNode& root = hns.back();
    EXPECT_EQ(root.name, "ibfabric-root");
    EXPECT_EQ(root.tier, 2);
    EXPECT_EQ(root.tierName, "fabric");
    EXPECT_EQ(root.members.size(), static_cast<std::size_t>(sus));
    EXPECT_EQ(root.members.front(), "su01");
  }
}

TEST(Volcano, TreesHaveLeavesThenPodsThenARoot) {
  ExportLayout three = layoutOf(testing::threeLevel(2, 2, 2, 2, 2));
  auto hns = volcanoHyperNodes(three).items;
  expectWellFormed(three, hns, "three-level");
  ASSERT_EQ(hns.size(), 4u + 2u + 1u);
  EXPECT_EQ(hns[0].name, "leaf-p1-01");
  EXPECT_EQ(hns[0].tierName, "leaf");
  EXPECT_EQ(hns[0].members, (std::vector<std::string>{"dgx0001", "dgx0002"}));
  EXPECT_EQ(findHn(hns, "sg02")->members, (std::vector<std::string>{"leaf-p2-01", "leaf-p2-02"}));
  EXPECT_EQ(hns.back().members, (std::vector<std::string>{"sg01", "sg02"}));
  EXPECT_EQ(hns.back().tier, 3);

  ExportLayout two = layoutOf(testing::twoLevel(4, 2, 4));
  auto flat = volcanoHyperNodes(two).items;
  expectWellFormed(two, flat, "two-level");
  auto t = tiers(flat);
  EXPECT_EQ(t[1].first, 4);
  EXPECT_EQ(t[2].first, 1);
  EXPECT_EQ(flat.size(), 5u);
}

}  // namespace
}  // namespace ibfabric::scheduler_hooks
