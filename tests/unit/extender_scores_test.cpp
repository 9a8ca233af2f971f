// The extender's prioritize scores against the real placement engine (routing/placement_engine.h)
// on a superpod with in-memory shortest-path tables and hand-set link load: the scores order the
// candidates as the engine's prediction for the job with each of them added does, within the
// two bands (the peers' own scalable unit above the rest), and the peers' own nodes are on top.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "routing/link_load.h"
#include "routing/placement_engine.h"
#include "routing/synthetic_tables.h"
#include "scheduler_hooks/extender_scores.h"
#include "tests/support/fabrics.h"

namespace ibfabric::scheduler_hooks {
namespace {

struct EngineFabric {
  explicit EngineFabric(int sus = 2) : topo(testing::routableTopology(testing::superpod(sus))) {}
  TopologyPtr topo;
  std::shared_ptr<routing::LinkLoadModel> load = std::make_shared<routing::LinkLoadModel>(topo);
  routing::PlacementIndexPtr index = std::make_shared<const routing::PlacementIndex>(
      topo, routing::computeShortestPathTables(topo));

  /// Sets the utilization of both directions of `port`'s cable.
  void heat(NodeIndex node, int port, double utilization) {
    const Port* p = topo->port(node, PortNum(static_cast<std::uint8_t>(port)));
    load->setUtilization(routing::directedLink(*p->link, false), utilization);
    load->setUtilization(routing::directedLink(*p->link, true), utilization);
  }
  void heatHca(const std::string& host, double u) {
    heat(topo->findHost(host)->hcas.front(), 1, u);
  }
  void heatUplinks(const std::string& leafId, double u) {
    for (const Node& n : topo->nodes()) {
      if (n.description.find(";" + leafId + ":") == std::string::npos) continue;
      for (const auto& p : n.ports)
        if (p && p->link && p->direction == PortDirection::kUp) heat(n.index, p->num.value(), u);
    }
  }
};

TEST(ExtenderScores, OrderHostsAsTheEnginePredictsWithThePeersUnitOnTop) {
  EngineFabric f;
  f.heatHca("dgx0005", 0.7);  // a busy host in the peers' SU
  f.heatHca("dgx0006", 0.3);  // a less busy one
  f.heatHca("dgx0034", 0.6);  // and one in the other SU
  routing::PlacementEngine engine(f.index, f.load);
  const ExportLayout layout = buildExportLayout(f.topo);
  const HostHealthMap health;

  ScoreInput in;
  in.layout = &layout;
  in.health = &health;
  in.peers = {"dgx0001", "dgx0002"};
  in.placer = [&engine](const routing::PlacementRequest& r) { return engine.place(r); };
  const std::vector<std::string> hosts = {"dgx0001", "dgx0003", "dgx0004", "dgx0005",
                                          "dgx0006", "dgx0033", "dgx0034", "dgx0035"};
  const auto scores = extenderScores(in, hosts);

  // What the engine predicts for the peers plus each candidate, asked directly.
  std::map<std::string, double> predicted;
  for (const auto& h : hosts) {
    if (in.peers.count(h)) continue;
    routing::PlacementRequest r;
    r.hosts = 3;
    r.candidates = {"dgx0001", "dgx0002", h};
    predicted[h] = engine.place(r).options.front().score.objective;
  }
  EXPECT_EQ(scores.at("dgx0001"), 10);  // a peer's own node
  for (const auto& [h, o] : predicted) {
    const bool sameUnit = layout.leafSetOf(h) == layout.leafSetOf("dgx0001");
    EXPECT_EQ(scores.at(h) >= 6, sameUnit) << h << " scored " << scores.at(h);
    EXPECT_LE(scores.at(h), 9) << h;
    for (const auto& [g, og] : predicted) {
      if ((layout.leafSetOf(g) == layout.leafSetOf("dgx0001")) != sameUnit) continue;
      if (o <= og * 1.05) continue;
      EXPECT_GE(scores.at(h), scores.at(g)) << h << " vs " << g;
    }
  }
  // The prediction makes a difference the topology alone does not see.
  EXPECT_GT(predicted.at("dgx0003"), predicted.at("dgx0005") * 1.5);
  EXPECT_GT(scores.at("dgx0003"), scores.at("dgx0005"));
  EXPECT_GT(predicted.at("dgx0035"), predicted.at("dgx0034") * 1.5);
  EXPECT_GT(scores.at("dgx0035"), scores.at("dgx0034"));
  // A host of the peers' unit, however busy, stays above every host of another unit.
  EXPECT_GT(scores.at("dgx0005"), scores.at("dgx0035"));
}

TEST(ExtenderScores, ManyCandidatesAskTheEngineOncePerLeafSet) {
  EngineFabric f(16);
  f.heatUplinks("leaf-su3-r1", 0.9);
  routing::PlacementEngine engine(f.index, f.load);
  const ExportLayout layout = buildExportLayout(f.topo);
  const HostHealthMap health;
  int calls = 0;
  ScoreInput in;
  in.layout = &layout;
  in.health = &health;
  in.peers = {"dgx0001"};
  in.placer = [&](const routing::PlacementRequest& r) {
    ++calls;
    return engine.place(r);
  };
  std::vector<std::string> hosts;
  for (const auto& [h, place] : layout.hosts) hosts.push_back(h);
  ASSERT_GT(hosts.size(), kMaxEngineCalls);
  const auto scores = extenderScores(in, hosts);
  EXPECT_EQ(calls, 16);  // one per SU
  EXPECT_EQ(scores.size(), 512u);
  EXPECT_EQ(scores.at("dgx0001"), 10);
  EXPECT_EQ(scores.at("dgx0002"), 9);
  for (const auto& [h, s] : scores) {
    if (h == "dgx0001") continue;
    const LeafSet* ls = layout.leafSetOf(h);
    EXPECT_EQ(s, scores.at(ls->hosts.front() == "dgx0001" ? "dgx0002" : ls->hosts.front())) << h;
  }
  EXPECT_LT(scores.at("dgx0065"), scores.at("dgx0033"));  // SU 3 is hot above rail 0
}

}  // namespace
}  // namespace ibfabric::scheduler_hooks
