// The placement engine's fast paths against straightforward computations: the merged alltoall
// evaluation against tracing every (source, destination) flow hop by hop on the raw tables, and
// the bound-pruned search against evaluating every candidate exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "discovery/topogen.h"
#include "routing/link_load.h"
#include "routing/placement_engine.h"
#include "routing/synthetic_tables.h"
#include "tests/support/fabrics.h"

namespace ibfabric::routing {
namespace {

struct Fabric {
  TopologyPtr topo;
  ForwardingTablesPtr tables;
};

Fabric makeFabric(const std::string& preset, const TopoOptions& o) {
  Fabric f;
  f.topo = testing::routableTopology({preset, o});
  f.tables = computeShortestPathTables(f.topo);
  return f;
}

Fabric twoLevel() {
  TopoOptions o;
  o.leaves = 4;
  o.spines = 2;
  o.hostsPerLeaf = 4;
  return makeFabric("two-level", o);
}

Fabric superpod2() {
  TopoOptions o;
  o.sus = 2;
  return makeFabric("superpod", o);
}

Fabric threeLevel() {
  TopoOptions o;
  o.pods = 3;
  o.leavesPerPod = 2;
  o.spinesPerPod = 2;
  o.cores = 4;
  o.hostsPerLeaf = 3;
  o.hcasPerHost = 2;
  return makeFabric("three-level", o);
}

/// The alltoall of `hosts` computed the obvious way: every ordered pair of HCAs of one rail,
/// walked cable by cable from the source CA's port on the switches' LFTs.
struct Reference {
  std::map<std::pair<std::uint64_t, int>, int> flows;  // (sender GUID, sender port) -> flows
  double bottleneck = 0;
  int maxHops = 0;
  int unrouted = 0;
};

Reference referenceAllToAll(const Fabric& f, const LinkLoadModel& load,
                            const std::vector<std::string>& hosts) {
  const Topology& t = *f.topo;
  struct End {
    PortRef port;
    Lid lid;
  };
  std::map<int, std::vector<End>> rails;
  for (const auto& name : hosts) {
    const Host* h = t.findHost(name);
    for (std::size_t i = 0; i < h->hcas.size(); ++i) {
      const Node& ca = t.node(h->hcas[i]);
      int rail = ca.hcaIndex < 0 ? static_cast<int>(i) : ca.hcaIndex;
      for (std::size_t p = 1; p < ca.ports.size(); ++p) {
        if (ca.ports[p] && ca.ports[p]->remote) {
          rails[rail].push_back(
              End{PortRef{ca.index, PortNum(static_cast<std::uint8_t>(p))}, ca.ports[p]->lid});
          break;
        }
      }
    }
  }
  Reference r;
  std::map<DirectedLinkId, int> byLink;
  for (const auto& [rail, ends] : rails) {
    for (const End& src : ends) {
      for (const End& dst : ends) {
        if (src.port.node == dst.port.node) continue;
        PortRef cur = src.port;
        int switches = 0;
        bool routed = false;
        while (switches <= 64) {
          ++byLink[*load.transmitting(cur)];
          PortRef next = *t.port(cur.node, cur.port)->remote;
          if (next.node == dst.port.node) {
            routed = true;
            break;
          }
          ++switches;
          const SwitchTable* table = f.tables->table(next.node);
          if (!table || !table->egress(dst.lid)) break;
          cur = PortRef{next.node, *table->egress(dst.lid)};
        }
        if (routed) {
          r.maxHops = std::max(r.maxHops, switches);
        } else {
          ++r.unrouted;
        }
      }
    }
  }
  r.bottleneck = std::numeric_limits<double>::infinity();
  for (const auto& [d, n] : byLink) {
    r.bottleneck = std::min(r.bottleneck, load.at(d).residualBytesPerSecond() / n);
    PortRef s = load.sender(d);
    r.flows[{t.node(s.node).guid.value(), s.port.value()}] = n;
  }
  if (r.unrouted > 0) r.bottleneck = 0;
  return r;
}

std::shared_ptr<LinkLoadModel> randomLoad(const Fabric& f, std::mt19937& rng) {
  auto load = std::make_shared<LinkLoadModel>(f.topo);
  std::uniform_real_distribution<double> util(0.0, 0.9);
  for (DirectedLinkId d = 0; d < load->size(); ++d) load->setUtilization(d, util(rng));
  return load;
}

std::vector<std::string> randomHosts(const Fabric& f, std::mt19937& rng, std::size_t maxHosts) {
  std::vector<std::string> all;
  for (const auto& h : f.topo->hosts()) all.push_back(h.name);
  std::shuffle(all.begin(), all.end(), rng);
  std::uniform_int_distribution<std::size_t> size(2, std::min(maxHosts, all.size()));
  all.resize(size(rng));
  return all;
}

void expectSameAsReference(const Fabric& f, const LinkLoadModel& load,
                           const std::shared_ptr<const PlacementIndex>& index,
                           const std::vector<std::string>& hosts) {
  PlacementLimits limits;
  limits.hottestLinks = 1u << 20;  // every link the job crosses, with its flows
  PlacementEngine engine(index, std::make_shared<const LinkLoadModel>(load), limits);
  PlacementScore s = engine.score(hosts, CommPattern::kAllToAll);
  Reference r = referenceAllToAll(f, load, hosts);
  EXPECT_DOUBLE_EQ(s.bottleneckBytesPerSecond, r.bottleneck);
  EXPECT_EQ(s.maxHops, r.maxHops);
  std::map<std::pair<std::uint64_t, int>, int> flows;
  for (const LinkLoad& l : s.hottestLinks) flows[{l.fromGuid, l.fromPort}] = l.jobFlows;
  EXPECT_EQ(flows, r.flows);
  EXPECT_EQ(s.explanation.find("no route") != std::string::npos, r.unrouted > 0);
}

/// Half (2..12) of a random free list; odd trials pass the free list as candidates. The pattern
/// is all-to-all, except ring allreduce every third trial unless `pattern` is given.
PlacementRequest randomRequest(const Fabric& f, std::mt19937& rng, int trial, int alternatives,
                               std::optional<CommPattern> pattern = std::nullopt) {
  PlacementRequest r;
  r.pattern =
      pattern.value_or(trial % 3 == 2 ? CommPattern::kRingAllreduce : CommPattern::kAllToAll);
  r.alternatives = alternatives;
  std::vector<std::string> free = randomHosts(f, rng, f.topo->hosts().size());
  r.hosts = static_cast<int>(std::clamp<std::size_t>(free.size() / 2, 2, 12));
  if (trial % 2) r.candidates = std::move(free);
  return r;
}

TEST(PlacementAllToAll, MergedEvaluationEqualsTracingEveryFlow) {
  std::mt19937 rng(7);
  for (const Fabric& f : {twoLevel(), superpod2(), threeLevel()}) {
    auto index = std::make_shared<const PlacementIndex>(f.topo, f.tables);
    for (int trial = 0; trial < 25; ++trial) {
      SCOPED_TRACE("fabric of " + std::to_string(f.topo->hosts().size()) + " hosts, trial " +
                   std::to_string(trial));
      auto load = randomLoad(f, rng);
      expectSameAsReference(f, *load, index, randomHosts(f, rng, 24));
    }
  }
}

TEST(PlacementAllToAll, TwoLeavesByHand) {
  // 2 leaves x 2 hosts, one spine, idle: each leaf up-link carries 2 sources x 2 destinations.
  TopoOptions o;
  o.leaves = 2;
  o.spines = 1;
  o.hostsPerLeaf = 2;
  Fabric f = makeFabric("two-level", o);
  auto index = std::make_shared<const PlacementIndex>(f.topo, f.tables);
  PlacementLimits limits;
  limits.hottestLinks = 100;
  PlacementEngine engine(index, nullptr, limits);
  std::vector<std::string> hosts;
  for (const auto& h : f.topo->hosts()) hosts.push_back(h.name);
  PlacementScore s = engine.score(hosts, CommPattern::kAllToAll);
  // 4 HCA links x 2 directions with 3 flows each, 2 up-links x 2 directions with 4 flows each.
  std::multiset<int> flows;
  for (const LinkLoad& l : s.hottestLinks) flows.insert(l.jobFlows);
  EXPECT_EQ(flows, (std::multiset<int>{3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4}));
  EXPECT_DOUBLE_EQ(s.bottleneckBytesPerSecond, 200e9 / 8 / 4);
  EXPECT_EQ(s.maxHops, 3);
}

TEST(PlacementAllToAll, MissingRouteIsReportedLikeTheReference) {
  Fabric f = superpod2();
  // Drop one destination LID from the table of the switch in front of it: no flow reaches it.
  const Host& victim = f.topo->hosts().back();
  const Port* hcaPort = f.topo->port(victim.hcas.front(), PortNum(1));
  Lid lid = hcaPort->lid;
  std::vector<std::optional<SwitchTable>> byNode(f.topo->nodes().size());
  for (const auto& n : f.topo->nodes()) {
    if (const SwitchTable* t = f.tables->table(n.index)) byNode[n.index] = *t;
  }
  ASSERT_TRUE(byNode[hcaPort->remote->node]);
  byNode[hcaPort->remote->node]->ports[lid.value()] = SwitchTable::kNoPort;
  Fabric broken{f.topo,
                std::make_shared<const ForwardingTables>(f.topo, std::move(byNode), "test")};
  auto index = std::make_shared<const PlacementIndex>(broken.topo, broken.tables);
  std::vector<std::string> hosts;
  for (const auto& h : f.topo->hosts()) hosts.push_back(h.name);
  LinkLoadModel idle(f.topo);
  expectSameAsReference(broken, idle, index, hosts);
  PlacementEngine engine(index, nullptr);
  EXPECT_EQ(engine.score(hosts, CommPattern::kAllToAll).bottleneckBytesPerSecond, 0.0);
}

TEST(PlacementAllToAll, BoundPruningGivesTheSameAnswer) {
  std::mt19937 rng(11);
  for (const Fabric& f : {superpod2(), threeLevel(), twoLevel()}) {
    auto index = std::make_shared<const PlacementIndex>(f.topo, f.tables);
    for (int trial = 0; trial < 6; ++trial) {
      auto load = randomLoad(f, rng);
      PlacementRequest r = randomRequest(f, rng, trial, 1 + trial % 4);
      PlacementLimits exhaustive, pruned;
      exhaustive.improvementWork = pruned.improvementWork = 1ull << 40;  // never the limit
      exhaustive.pruneByBound = false;
      pruned.nearTie = 0;
      PlacementAnswer a = PlacementEngine(index, load, pruned).place(r);
      PlacementAnswer b = PlacementEngine(index, load, exhaustive).place(r);
      SCOPED_TRACE("trial " + std::to_string(trial));
      ASSERT_EQ(a.options.size(), b.options.size());
      for (std::size_t i = 0; i < a.options.size(); ++i) {
        EXPECT_EQ(a.options[i].hosts, b.options[i].hosts);
        EXPECT_EQ(a.options[i].score.objective, b.options[i].score.objective);
      }
    }
  }
}

TEST(PlacementAllToAll, NearTiePruningStaysWithinItsTolerance) {
  // The default limits skip candidates and moves that could at best tie (within nearTie of the
  // best): the best answer may differ from the exhaustive one, but only by a near tie.
  std::mt19937 rng(17);
  int differing = 0;
  for (const Fabric& f : {superpod2(), threeLevel(), twoLevel()}) {
    auto index = std::make_shared<const PlacementIndex>(f.topo, f.tables);
    for (int trial = 0; trial < 6; ++trial) {
      auto load = randomLoad(f, rng);
      PlacementRequest r = randomRequest(f, rng, trial, 1);
      PlacementLimits exhaustive, nearTie;
      exhaustive.improvementWork = nearTie.improvementWork = 1ull << 40;
      exhaustive.pruneByBound = false;
      ASSERT_GT(nearTie.nearTie, 0.0);
      const double a = PlacementEngine(index, load, nearTie).place(r).options[0].score.objective;
      const double b = PlacementEngine(index, load, exhaustive).place(r).options[0].score.objective;
      SCOPED_TRACE("trial " + std::to_string(trial));
      EXPECT_GE(a, b - 10 * nearTie.nearTie * std::abs(b));
      differing += a != b ? 1 : 0;
    }
  }
  RecordProperty("differing", differing);
}

void expectSameOptions(const PlacementAnswer& a, const PlacementAnswer& b) {
  ASSERT_EQ(a.options.size(), b.options.size());
  for (std::size_t i = 0; i < a.options.size(); ++i) {
    const PlacementScore& x = a.options[i].score;
    const PlacementScore& y = b.options[i].score;
    EXPECT_EQ(a.options[i].hosts, b.options[i].hosts);
    EXPECT_EQ(x.objective, y.objective);
    EXPECT_EQ(x.bottleneckBytesPerSecond, y.bottleneckBytesPerSecond);
    EXPECT_EQ(x.maxHops, y.maxHops);
    EXPECT_EQ(x.leafSwitches, y.leafSwitches);
    EXPECT_EQ(x.explanation, y.explanation);
    ASSERT_EQ(x.hottestLinks.size(), y.hottestLinks.size());
    for (std::size_t k = 0; k < x.hottestLinks.size(); ++k) {
      EXPECT_EQ(x.hottestLinks[k].fromGuid, y.hottestLinks[k].fromGuid);
      EXPECT_EQ(x.hottestLinks[k].fromPort, y.hottestLinks[k].fromPort);
      EXPECT_EQ(x.hottestLinks[k].jobFlows, y.hottestLinks[k].jobFlows);
    }
  }
}

TEST(PlacementAllToAll, IncrementalScoringGivesTheSameAnswer) {
  // Host sets scored from the difference to the last one scored in full (local-search swaps,
  // greedy growth of small pools, nearby candidates) against scoring every set in full: the same
  // options, scores, explanations and hottest links (the top-list path with 3 links and the
  // full-scan path with every link).
  std::mt19937 rng(23);
  for (const Fabric& f : {superpod2(), threeLevel(), twoLevel()}) {
    auto index = std::make_shared<const PlacementIndex>(f.topo, f.tables);
    for (int trial = 0; trial < 6; ++trial) {
      auto load = randomLoad(f, rng);
      PlacementRequest r = randomRequest(f, rng, trial, 1 + trial % 3, CommPattern::kAllToAll);
      for (std::size_t hottest : {std::size_t{3}, std::size_t{1} << 20}) {
        if (hottest > 3 && trial % 3 != 0) continue;  // listing every link is slow under ASan
        PlacementLimits full, incremental;
        full.improvementWork = incremental.improvementWork = 1ull << 40;  // never the limit
        full.hottestLinks = incremental.hottestLinks = hottest;
        full.incrementalAllToAll = false;
        SCOPED_TRACE("trial " + std::to_string(trial) + ", hottest " + std::to_string(hottest));
        expectSameOptions(PlacementEngine(index, load, incremental).place(r),
                          PlacementEngine(index, load, full).place(r));
      }
    }
  }
}

/// `f` whose leaf of host `host`'s first HCA has no LFT entry for that HCA's LID.
Fabric withoutRouteToHost(Fabric f, std::size_t host) {
  const Host& victim = f.topo->hosts()[host];
  const Port* hcaPort = f.topo->port(victim.hcas.front(), PortNum(1));
  std::vector<std::optional<SwitchTable>> byNode(f.topo->nodes().size());
  for (const auto& n : f.topo->nodes()) {
    if (const SwitchTable* t = f.tables->table(n.index)) byNode[n.index] = *t;
  }
  byNode[hcaPort->remote->node]->ports[hcaPort->lid.value()] = SwitchTable::kNoPort;
  f.tables = std::make_shared<const ForwardingTables>(f.topo, std::move(byNode), "test");
  return f;
}

TEST(PlacementAllToAll, IncrementalScoringWithAMissingRoute) {
  // A destination without an LFT entry: sets that contain it have flows without a route, which
  // the difference cannot express; they are scored in full, with the same answer.
  Fabric f = withoutRouteToHost(superpod2(), 5);
  auto index = std::make_shared<const PlacementIndex>(f.topo, f.tables);
  std::mt19937 rng(5);
  for (int trial = 0; trial < 6; ++trial) {
    auto load = randomLoad(f, rng);
    PlacementRequest r;
    r.pattern = CommPattern::kAllToAll;
    r.hosts = 3 + trial;
    r.alternatives = 2;
    for (int h = 0; h < 12; ++h) r.candidates.push_back(f.topo->hosts()[h].name);
    PlacementLimits full, incremental;
    full.improvementWork = incremental.improvementWork = 1ull << 40;
    full.incrementalAllToAll = false;
    SCOPED_TRACE("trial " + std::to_string(trial));
    expectSameOptions(PlacementEngine(index, load, incremental).place(r),
                      PlacementEngine(index, load, full).place(r));
  }
}

TEST(PlacementAllToAll, IncrementalRingScoringGivesTheSameAnswer) {
  // Ring orders scored from the edges next to the positions that changed (local-search swaps
  // and replacements, entry hosts) against scoring every order in full: the same options,
  // scores and explanations, with the default budget and without a limit, and with a
  // destination that has no LFT entry (flows without a route come off and go on too).
  std::mt19937 rng(29);
  int fabric = 0;
  for (const Fabric& f :
       {superpod2(), threeLevel(), twoLevel(), withoutRouteToHost(superpod2(), 5)}) {
    auto index = std::make_shared<const PlacementIndex>(f.topo, f.tables);
    for (int trial = 0; trial < 6; ++trial) {
      auto load = randomLoad(f, rng);
      PlacementRequest r = randomRequest(f, rng, trial, 1 + trial % 3, CommPattern::kRingAllreduce);
      for (std::uint64_t work : {PlacementLimits{}.improvementWork, std::uint64_t{1} << 40}) {
        PlacementLimits full, incremental;
        full.improvementWork = incremental.improvementWork = work;
        full.incrementalRing = false;
        SCOPED_TRACE("fabric " + std::to_string(fabric) + ", trial " + std::to_string(trial) +
                     ", work " + std::to_string(work));
        expectSameOptions(PlacementEngine(index, load, incremental).place(r),
                          PlacementEngine(index, load, full).place(r));
      }
    }
    ++fabric;
  }
}

TEST(PlacementAllToAll, IndexRowsMatchTheTables) {
  Fabric f = threeLevel();
  PlacementIndex index(f.topo, f.tables);
  for (const auto& h : index.hosts()) {
    for (const auto& hca : h.hcas) {
      const std::uint8_t* row = index.destinationRow(hca.lid);
      ASSERT_NE(row, nullptr);
      for (const auto& n : f.topo->nodes()) {
        const SwitchTable* t = f.tables->table(n.index);
        if (!t) continue;
        auto egress = t->egress(hca.lid);
        EXPECT_EQ(index.egressPort(n.index, hca.lid, row),
                  egress ? static_cast<int>(egress->value()) : -1);
        EXPECT_EQ(index.egressPort(n.index, hca.lid, nullptr),
                  egress ? static_cast<int>(egress->value()) : -1);
      }
    }
  }
  EXPECT_EQ(index.destinationRow(Lid(60000)), nullptr);
}

}  // namespace
}  // namespace ibfabric::routing
