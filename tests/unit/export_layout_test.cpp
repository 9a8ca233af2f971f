// Switch names of the scheduler exports (scheduler_hooks/export_layout.h): switches that share a
// description — "Quantum Mellanox Technologies", what unconfigured switches report — each get
// their own GUID's digits, so replacing one switch renames no other; a node-name map gives them
// real names.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>

#include "discovery/node_name_map.h"
#include "discovery/topology_compare.h"
#include "scheduler_hooks/export_layout.h"
#include "scheduler_hooks/export_slurm.h"
#include "tests/support/fabrics.h"

namespace ibfabric::scheduler_hooks {
namespace {

constexpr const char* kDefaultDescription = "Quantum Mellanox Technologies";

/// A two-level fabric (4 leaves, 2 spines) whose switches all report the default description.
NetFabric defaultNamedFabric() {
  NetFabric f = testing::generate(testing::twoLevel(4, 2, 2)).fabric;
  for (auto& n : f.nodes)
    if (n.type == NodeType::kSwitch) n.desc = kDefaultDescription;
  return f;
}

/// Export name by switch GUID.
std::map<std::uint64_t, std::string> namesByGuid(const TopologyPtr& t) {
  ExportLayout layout = buildExportLayout(t);
  std::map<std::uint64_t, std::string> out;
  for (const Node& n : t->nodes())
    if (n.isSwitch()) out[n.guid.value()] = layout.switchName(n.index);
  return out;
}

TEST(SwitchNames, EverySwitchSharingADescriptionGetsItsOwnGuidDigits) {
  auto names = namesByGuid(topologyAsCrawled(defaultNamedFabric()));
  ASSERT_EQ(names.size(), 6u);
  std::set<std::string> distinct;
  for (const auto& [guid, name] : names) {
    char tail[8];
    std::snprintf(tail, sizeof tail, "%06llx", static_cast<unsigned long long>(guid & 0xFFFFFF));
    EXPECT_EQ(name, "quantum-mellanox-technologies-" + std::string(tail));
    distinct.insert(name);
  }
  EXPECT_EQ(distinct.size(), 6u);
  // The Slurm export of such a fabric passes the checker.
  ExportLayout layout = buildExportLayout(topologyAsCrawled(defaultNamedFabric()));
  EXPECT_TRUE(
      checkSlurmTopologyConf(slurmTopologyConf(layout, SlurmPlugin::kTree), SlurmPlugin::kTree)
          .empty());
}

TEST(SwitchNames, ReplacingOneSwitchRenamesNoOther) {
  NetFabric before = defaultNamedFabric();
  NetFabric after = before;
  std::uint64_t replaced = 0;
  for (auto& n : after.nodes)
    if (n.type == NodeType::kSwitch && replaced == 0) {  // a new switch in the same place
      replaced = n.guid->value();
      n.guid = Guid{0x0002c90300abcdefull};
    }
  ASSERT_NE(replaced, 0u);
  auto a = namesByGuid(topologyAsCrawled(before));
  auto b = namesByGuid(topologyAsCrawled(after));
  for (const auto& [guid, name] : a) {
    if (guid == replaced) continue;
    EXPECT_EQ(b.at(guid), name) << std::hex << guid;
  }
  EXPECT_EQ(b.at(0x0002c90300abcdefull), "quantum-mellanox-technologies-abcdef");
  // Also when the replaced switch was the one whose description is unique.
  NetFabric mixed = before;
  std::uint64_t unique = 0;
  for (auto& n : mixed.nodes)
    if (n.type == NodeType::kSwitch && unique == 0) {
      n.desc = "MF0;leaf-a:MQM8790/U1";
      unique = n.guid->value();
    }
  auto m = namesByGuid(topologyAsCrawled(mixed));
  EXPECT_EQ(m.at(unique), "leaf-a");
  for (const auto& [guid, name] : m) {
    if (guid == unique) continue;
    EXPECT_EQ(name, a.at(guid));
  }
}

TEST(SwitchNames, ANodeNameMapGivesRealNames) {
  NetFabric f = defaultNamedFabric();
  std::string text;
  int i = 0;
  for (const auto& n : f.nodes)
    if (n.type == NodeType::kSwitch)
      text += toString(*n.guid) + " \"MF0;ib-sw" + std::to_string(++i) + ":MQM8790/U1\"\n";
  auto map = std::make_shared<const NodeNameMap>(NodeNameMap::parse(text, "map"));
  auto names = namesByGuid(topologyAsCrawled(std::move(f), map));
  std::set<std::string> got;
  for (const auto& [guid, name] : names) got.insert(name);
  EXPECT_EQ(got,
            (std::set<std::string>{"ib-sw1", "ib-sw2", "ib-sw3", "ib-sw4", "ib-sw5", "ib-sw6"}));
}

}  // namespace
}  // namespace ibfabric::scheduler_hooks
