// applyTopologyEdit: port state updates, cable removals and additions on a hand-built fabric;
// everything else (names, LIDs, rates, other cables) is kept, and bad edits are refused.
#include "discovery/topology_edit.h"

#include <gtest/gtest.h>

#include "tests/support/fabrics.h"

namespace ibfabric {
namespace {

const LinkRate k4xHdr{LinkWidth::k4x, LinkSpeed::kHdr};
constexpr Guid kCa = testing::kHlsCa, kLeaf = testing::kHlsLeaf, kSpine = testing::kHlsSpine;

/// host -- leaf[1]; leaf[2] -- spine[1]; leaf[3] unused; LIDs: leaf 1, spine 2, host 3.
TopologyPtr smallFabric(bool withNameMap = false) {
  testing::HostLeafSpineOptions o;
  o.spareLeafPort = true;
  if (withNameMap) o.nodeNameMap = "0x0000000000200001 \"MF0;leaf-01\"\n";
  return testing::hostLeafSpine(o);
}

TEST(TopologyEdit, RemovingACableGivesOneLinkRemovedAndKeepsTheRest) {
  auto before = smallFabric(true);
  TopologyEdit edit;
  edit.removeLinks.push_back(LinkKey::of(kLeaf, PortNum{2}, kSpine, PortNum{1}));
  edit.ports.push_back({kLeaf, PortNum{2}, PortState::kDown, PhysPortState::kPolling, {}});
  edit.ports.push_back({kSpine, PortNum{1}, PortState::kDown, PhysPortState::kPolling, {}});
  auto after = applyTopologyEdit(*before, edit);

  EXPECT_EQ(after->links().size(), 1u);
  TopologyDelta d(before, after);
  ASSERT_EQ(d.linksRemoved().size(), 1u) << ::testing::PrintToString(d.describeAll());
  EXPECT_EQ(d.size(), 1u) << ::testing::PrintToString(d.describeAll());
  const Node* leaf = after->findNode(kLeaf);
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->description, "MF0;leaf-01");  // the node-name map's name survives
  EXPECT_EQ(leaf->nodeDescription, "leaf");
  ASSERT_NE(leaf->port(PortNum{2}), nullptr);
  EXPECT_EQ(leaf->port(PortNum{2})->state, PortState::kDown);
  EXPECT_FALSE(leaf->port(PortNum{2})->connected());
  EXPECT_FALSE(leaf->port(PortNum{2})->activeRate);
  EXPECT_EQ(after->findLid(Lid{3})->node, after->findNode(kCa)->index);
}

TEST(TopologyEdit, RestoringTheCableGivesBackAnEqualTopology) {
  auto before = smallFabric();
  TopologyEdit down;
  down.removeLinks.push_back(LinkKey::of(kSpine, PortNum{1}, kLeaf, PortNum{2}));
  down.ports.push_back({kLeaf, PortNum{2}, PortState::kDown, PhysPortState::kPolling, {}});
  down.ports.push_back({kSpine, PortNum{1}, PortState::kDown, PhysPortState::kPolling, {}});
  auto mid = applyTopologyEdit(*before, down);
  TopologyEdit up;
  up.addLinks.push_back(LinkKey::of(kLeaf, PortNum{2}, kSpine, PortNum{1}));
  up.ports.push_back({kLeaf, PortNum{2}, PortState::kActive, PhysPortState::kLinkUp, k4xHdr});
  up.ports.push_back({kSpine, PortNum{1}, PortState::kActive, PhysPortState::kLinkUp, k4xHdr});
  auto after = applyTopologyEdit(*mid, up);
  EXPECT_TRUE(TopologyDelta(before, after).empty())
      << ::testing::PrintToString(TopologyDelta(before, after).describeAll());
  TopologyDelta d(mid, after);
  EXPECT_EQ(d.linksAdded().size(), 1u);
  EXPECT_EQ(after->findNode(kLeaf)->level, 1);
  EXPECT_EQ(after->findNode(kSpine)->level, 2);
}

TEST(TopologyEdit, StateChangeWithoutCableChangeIsALinkChange) {
  auto before = smallFabric();
  TopologyEdit edit;
  edit.ports.push_back({kCa, PortNum{1}, PortState::kInit, PhysPortState::kLinkUp, k4xHdr});
  auto after = applyTopologyEdit(*before, edit);
  TopologyDelta d(before, after);
  ASSERT_EQ(d.linksChanged().size(), 1u);
  EXPECT_TRUE(d.linksChanged()[0].stateChanged);
}

TEST(TopologyEdit, RefusesUnknownNodesPortsAndDoubleCabling) {
  auto t = smallFabric();
  TopologyEdit unknownNode;
  unknownNode.ports.push_back({Guid{0xdead}, PortNum{1}, PortState::kDown, {}, {}});
  EXPECT_THROW(applyTopologyEdit(*t, unknownNode), std::invalid_argument);
  TopologyEdit unknownPort;
  unknownPort.removeLinks.push_back(LinkKey::of(kLeaf, PortNum{9}, kSpine, PortNum{1}));
  EXPECT_THROW(applyTopologyEdit(*t, unknownPort), std::invalid_argument);
  TopologyEdit busy;  // leaf[3] is free but spine[1] is cabled to leaf[2]
  busy.addLinks.push_back(LinkKey::of(kLeaf, PortNum{3}, kSpine, PortNum{1}));
  try {
    applyTopologyEdit(*t, busy);
    FAIL() << "a cabled port was cabled again";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("already cabled"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(TopologyDelta(t, applyTopologyEdit(*t, {})).empty());
}

}  // namespace
}  // namespace ibfabric
