// The remembered fabric: what a crawl lacks stays in the model as missing (Down ports, no LIDs)
// with since-when and last-seen; it keeps its first absence across crawls, comes back present,
// is not kept when its cable moved, expires after forgetAfter and is forgotten on request;
// topology edits, the crawl check and host health read it as missing, not as lost.
#include "discovery/fabric_memory.h"

#include <gtest/gtest.h>

#include <set>

#include "api/service/crawl_check.h"
#include "api/service/sweep_suspects.h"
#include "discovery/topology_delta.h"
#include "discovery/topology_edit.h"
#include "scheduler_hooks/export_layout.h"
#include "tests/support/fabrics.h"

namespace ibfabric::testing {
namespace {

using namespace std::chrono_literals;
using telemetry::PortKey;
using SysTime = std::chrono::system_clock::time_point;

const SysTime t0 = SysTime(std::chrono::seconds(1'764'000'000));
const SysTime t1 = t0 + 60s;
const SysTime t2 = t1 + 60s;

/// `t` as a crawl sees it without the nodes `gone` (they do not answer) and without the cables
/// at `unplugged` (node, port) ends: their ports Down, not cabled.
TopologyPtr crawlWithout(const Topology& t, const std::set<Guid>& gone,
                         const std::set<std::pair<Guid, PortNum>>& unplugged) {
  TopologyBuilder b;
  auto cut = [&](const Node& n, PortNum p) {
    const Port* port = n.port(p);
    if (unplugged.count({n.guid, p})) return true;
    if (!port || !port->remote) return false;
    const Node& r = t.node(port->remote->node);
    return gone.count(r.guid) || unplugged.count({r.guid, port->remote->port});
  };
  for (const Node& n : t.nodes()) {
    if (gone.count(n.guid)) continue;
    b.addNode(nodeInfoOf(n));
    for (const auto& p : n.ports) {
      if (!p) continue;
      Port q = *p;
      if (cut(n, p->num)) {
        q.state = PortState::kDown;
        q.physState = PhysPortState::kPolling;
        q.activeRate.reset();
      }
      b.addPort(n.guid, q);
    }
  }
  for (const Link& l : t.links()) {
    const Node& a = t.node(l.a.node);
    const Node& z = t.node(l.b.node);
    if (gone.count(a.guid) || gone.count(z.guid) || cut(a, l.a.port)) continue;
    b.connect(a.guid, l.a.port, z.guid, l.b.port);
  }
  return b.build();
}

struct Pulled {
  TopologyPtr full;
  const Node* hca = nullptr;   // one HCA of an 8-HCA host, its only cable pulled
  const Node* leaf = nullptr;  // a leaf with one up-link pulled
  PortNum uplink;
  TopologyPtr crawl;  // what a crawl then sees
};

Pulled pullHcaAndUplink() {
  Pulled p;
  p.full = netfileTopology(superpod(1));
  const Host& host = p.full->hosts().front();
  p.hca = &p.full->node(host.hcas.at(3));
  for (NodeIndex i : p.full->nodesAtLevel(kLeafLevel)) {
    for (const auto& port : p.full->node(i).ports) {
      if (port && port->direction == PortDirection::kUp) {
        p.leaf = &p.full->node(i);
        p.uplink = port->num;
        break;
      }
    }
    if (p.leaf) break;
  }
  EXPECT_NE(p.leaf, nullptr);
  p.crawl = crawlWithout(*p.full, {p.hca->guid}, {{p.leaf->guid, p.uplink}});
  return p;
}

const Link& linkAt(const Topology& t, Guid node, PortNum port) {
  const Port* p = t.findNode(node)->port(port);
  EXPECT_TRUE(p && p->link);
  return t.links()[*p->link];
}

TEST(FabricMemory, WhatACrawlLacksIsKeptMissingWithSinceAndLastSeen) {
  const Pulled p = pullHcaAndUplink();
  ASSERT_EQ(p.crawl->nodes().size(), p.full->nodes().size() - 1);
  ASSERT_EQ(p.crawl->links().size(), p.full->links().size() - 2);

  const TopologyPtr model = rememberMissing(*p.full, t0, p.crawl, t1);
  EXPECT_EQ(model->nodes().size(), p.full->nodes().size());
  EXPECT_EQ(model->links().size(), p.full->links().size());
  const MissingCounts c = countMissing(*model);
  EXPECT_EQ(c.cas, 1u);
  EXPECT_EQ(c.switches, 0u);
  EXPECT_EQ(c.links, 2u);

  const Node& hca = *model->findNode(p.hca->guid);
  ASSERT_TRUE(hca.missing);
  EXPECT_EQ(hca.missing->since, t1);
  EXPECT_EQ(hca.missing->lastSeen, t0);
  EXPECT_EQ(hca.description, p.hca->description);
  EXPECT_EQ(hca.lid(), Lid{});  // no LID: nothing polls it, no LID lookup finds it
  const Port& hp = *hca.port(PortNum{1});
  EXPECT_EQ(hp.state, PortState::kDown);
  EXPECT_FALSE(hp.activeRate);
  // The host keeps its 8 HCAs, the HCA its rail and leaf: exports keep their places.
  const Host& host = *model->findHost(model->hosts().front().name);
  EXPECT_EQ(host.hcas.size(), 8u);
  EXPECT_EQ(hca.rail, p.hca->rail);
  EXPECT_EQ(model->node(hp.remote->node).guid,
            p.full->node(p.hca->port(PortNum{1})->remote->node).guid);

  const Link& up = linkAt(*model, p.leaf->guid, p.uplink);
  ASSERT_TRUE(up.missing);
  EXPECT_EQ(*up.missing, (Absence{t1, t0}));
  EXPECT_EQ(model->port(up.a)->state, PortState::kDown);

  // The link events a delta gives: both cables went down, nothing was removed.
  TopologyDelta delta(p.full, model);
  std::size_t removed = 0, down = 0;
  delta.forEachLinkChange([](const LinkAdded&) {}, [&](const LinkRemoved&) { ++removed; },
                          [&](const LinkChanged& ch) { down += ch.stateChanged ? 1 : 0; });
  EXPECT_EQ(removed, 0u);
  EXPECT_EQ(down, 2u);
}

TEST(FabricMemory, MissingHardwareKeepsItsFirstAbsenceAcrossCrawls) {
  const Pulled p = pullHcaAndUplink();
  const TopologyPtr first = rememberMissing(*p.full, t0, p.crawl, t1);
  const TopologyPtr again = crawlWithout(*p.full, {p.hca->guid}, {{p.leaf->guid, p.uplink}});
  const TopologyPtr second = rememberMissing(*first, t1, again, t2);
  EXPECT_EQ(*second->findNode(p.hca->guid)->missing, (Absence{t1, t0}));
  EXPECT_EQ(*linkAt(*second, p.leaf->guid, p.uplink).missing, (Absence{t1, t0}));
  EXPECT_EQ(countMissing(*second).links, 2u);
}

TEST(FabricMemory, HardwareSeenAgainIsPresentAndNothingIsKept) {
  const Pulled p = pullHcaAndUplink();
  const TopologyPtr model = rememberMissing(*p.full, t0, p.crawl, t1);
  const TopologyPtr back = netfileTopology(superpod(1));
  const TopologyPtr next = rememberMissing(*model, t1, back, t2);
  EXPECT_EQ(next, back);  // nothing missing: the crawl itself
  EXPECT_EQ(countMissing(*next).nodes() + countMissing(*next).links, 0u);
}

TEST(FabricMemory, ACableMovedToAnotherPortIsTheNewCableNotAMissingOne) {
  HostLeafSpineOptions spare;
  spare.spareLeafPort = true;
  const TopologyPtr before = hostLeafSpine(spare);
  // The host's cable now plugs into the leaf's spare port 3.
  TopologyBuilder b;
  for (const Node& n : before->nodes()) {
    b.addNode(nodeInfoOf(n));
    for (const auto& port : n.ports)
      if (port) b.addPort(n.guid, *port);
  }
  b.connect(kHlsCa, PortNum{1}, kHlsLeaf, PortNum{3});
  b.connect(kHlsLeaf, PortNum{2}, kHlsSpine, PortNum{1});
  const TopologyPtr moved = b.build();
  const TopologyPtr model = rememberMissing(*before, t0, moved, t1);
  EXPECT_EQ(model, moved);
  EXPECT_EQ(countMissing(*model).links, 0u);
}

TEST(FabricMemory, MissingHardwareExpiresAfterForgetAfter) {
  const Pulled p = pullHcaAndUplink();
  const RememberOptions options{std::chrono::hours(1)};
  const TopologyPtr model = rememberMissing(*p.full, t0, p.crawl, t1, options);
  const TopologyPtr crawl = crawlWithout(*p.full, {p.hca->guid}, {{p.leaf->guid, p.uplink}});
  EXPECT_EQ(countMissing(*rememberMissing(*model, t1, crawl, t1 + 59min, options)).links, 2u);
  const TopologyPtr later = rememberMissing(*model, t1, crawl, t1 + 61min, options);
  EXPECT_EQ(later, crawl);
  EXPECT_EQ(later->findNode(p.hca->guid), nullptr);
}

TEST(FabricMemory, OnlyMissingHardwareIsForgottenOnRequest) {
  const Pulled p = pullHcaAndUplink();
  const TopologyPtr model = rememberMissing(*p.full, t0, p.crawl, t1);
  EXPECT_THROW(forgetMissing(*model, p.leaf->guid), std::invalid_argument);  // present
  EXPECT_THROW(forgetMissing(*model, Guid{0xdead}), std::invalid_argument);  // unknown
  const PortNum downlink = [&] {
    for (const auto& port : model->findNode(p.leaf->guid)->ports)
      if (port && port->direction == PortDirection::kDown && !model->links()[*port->link].missing)
        return port->num;
    return PortNum{0};
  }();
  EXPECT_THROW(forgetMissing(*model, p.leaf->guid, downlink), std::invalid_argument);

  const TopologyPtr noHca = forgetMissing(*model, p.hca->guid);
  EXPECT_EQ(noHca->findNode(p.hca->guid), nullptr);
  EXPECT_EQ(noHca->links().size(), model->links().size() - 1);
  EXPECT_EQ(countMissing(*noHca).links, 1u);
  const TopologyPtr none = forgetMissing(*noHca, p.leaf->guid, p.uplink);
  EXPECT_EQ(countMissing(*none).links, 0u);
  EXPECT_FALSE(none->findNode(p.leaf->guid)->port(p.uplink)->remote);
  // A forgotten thing is not remembered back by the next crawl.
  const TopologyPtr crawl = crawlWithout(*p.full, {p.hca->guid}, {{p.leaf->guid, p.uplink}});
  EXPECT_EQ(rememberMissing(*none, t1, crawl, t2), crawl);
}

TEST(FabricMemory, EditsKeepMissingHardwareAndACableWhoseEndsComeUpIsBack) {
  const Pulled p = pullHcaAndUplink();
  const TopologyPtr model = rememberMissing(*p.full, t0, p.crawl, t1);
  const Link& up = linkAt(*model, p.leaf->guid, p.uplink);
  const Node& spine = model->node(up.b.node);
  TopologyEdit none;
  none.ports.push_back({p.leaf->guid, p.uplink, PortState::kDown, PhysPortState::kPolling, {}});
  const TopologyPtr same = applyTopologyEdit(*model, none);
  EXPECT_EQ(countMissing(*same).links, 2u);
  EXPECT_TRUE(same->findNode(p.hca->guid)->missing);

  TopologyEdit upAgain;
  const LinkRate hdr{LinkWidth::k4x, LinkSpeed::kHdr};
  upAgain.ports.push_back(
      {p.leaf->guid, p.uplink, PortState::kActive, PhysPortState::kLinkUp, hdr});
  upAgain.ports.push_back({spine.guid, up.b.port, PortState::kActive, PhysPortState::kLinkUp, hdr});
  const TopologyPtr back = applyTopologyEdit(*model, upAgain);
  EXPECT_FALSE(linkAt(*back, p.leaf->guid, p.uplink).missing);
  EXPECT_EQ(countMissing(*back).links, 1u);
}

TEST(FabricMemory, TheCrawlCheckDoesNotCountKnownMissingHardwareAsLost) {
  const Pulled p = pullHcaAndUplink();
  const TopologyPtr model = rememberMissing(*p.full, t0, p.crawl, t1);
  const TopologyPtr crawl = crawlWithout(*p.full, {p.hca->guid}, {{p.leaf->guid, p.uplink}});
  const api::CrawlLoss loss = api::crawlLoss(*model, *crawl);
  EXPECT_EQ(loss.nodesLost, 0u);
  EXPECT_EQ(loss.linksLost, 0u);
  EXPECT_EQ(loss.nodesBefore, p.full->nodes().size() - 1);
}

TEST(FabricMemory, AHostWithOneOfEightHcasMissingIsDegradedNamingTheHcaAndItsRail) {
  const Pulled p = pullHcaAndUplink();
  const TopologyPtr model = rememberMissing(*p.full, t0, p.crawl, t1);
  const std::string host = model->hosts().front().name;
  auto health = scheduler_hooks::hostHealthFromTopology(*model);
  ASSERT_TRUE(health.count(host));
  EXPECT_EQ(health.at(host).health, scheduler_hooks::HostHealth::kDegraded);
  EXPECT_NE(health.at(host).reason.find(p.hca->description), std::string::npos)
      << health.at(host).reason;
  EXPECT_NE(health.at(host).reason.find("(rail " + std::to_string(p.hca->rail) + ")"),
            std::string::npos)
      << health.at(host).reason;
  EXPECT_NE(health.at(host).reason.find("missing"), std::string::npos);

  // All eight gone: down.
  std::set<Guid> all;
  for (NodeIndex i : p.full->hosts().front().hcas) all.insert(p.full->node(i).guid);
  const TopologyPtr dark = rememberMissing(*p.full, t0, crawlWithout(*p.full, all, {}), t1);
  health = scheduler_hooks::hostHealthFromTopology(*dark);
  EXPECT_EQ(health.at(host).health, scheduler_hooks::HostHealth::kDown);
  EXPECT_EQ(dark->findHost(host)->hcas.size(), 8u);
}

// --- Sweep suspects: what a sweep points the PortInfo probes at -----------------------------

telemetry::PortSample sample(PortKey key, telemetry::PortStatus status) {
  telemetry::PortSample s;
  s.key = key;
  s.status = status;
  return s;
}

TEST(SweepSuspects, APortGoneSilentLinkDownedAndMissingCablesPointAtTheirSwitches) {
  const TopologyPtr t = hostLeafSpine();
  using telemetry::PortStatus;
  const PortKey caPort{kHlsCa, PortNum{1}}, leafUp{kHlsLeaf, PortNum{2}};
  telemetry::CounterSnapshot before, now;
  before.ports = {sample(caPort, PortStatus::kOk), sample(leafUp, PortStatus::kOk)};
  now.ports = {sample(caPort, PortStatus::kUnreachable), sample(leafUp, PortStatus::kOk)};
  const telemetry::RatesTable none;
  // The HCA port went silent: its leaf (LID 1), not the HCA itself.
  EXPECT_EQ(api::sweepSuspects(*t, &before, now, none, 8, 16, 0), (std::set<Lid>{kHlsLeafLid}));
  // Still silent a sweep later: not again (the first probe said what there was to say).
  EXPECT_TRUE(api::sweepSuspects(*t, &now, now, none, 8, 16, 0).empty());
  EXPECT_TRUE(api::sweepSuspects(*t, nullptr, now, none, 8, 16, 0).empty());

  // LinkDowned went up on the spine side: the spine (LID 2).
  telemetry::PortRates r;
  r.key = {kHlsSpine, PortNum{1}};
  auto& downed = r.counters[telemetry::index(telemetry::Counter::kLinkDowned)];
  downed.state = telemetry::DeltaState::kOk;
  downed.delta = 1;
  EXPECT_EQ(api::sweepSuspects(*t, &now, now, telemetry::RatesTable({r}), 8, 16, 0),
            (std::set<Lid>{kHlsSpineLid}));
  EXPECT_EQ(api::sweepSuspects(*t, &before, now, telemetry::RatesTable({r}), 8, 1, 0).size(), 1u);

  // A missing leaf-spine cable: both switches are re-checked, at most maxRechecks a sweep.
  TopologyBuilder b;
  for (const Node& n : t->nodes()) {
    b.addNode(nodeInfoOf(n));
    for (const auto& p : n.ports)
      if (p) b.addPort(n.guid, *p);
  }
  b.connect(kHlsCa, PortNum{1}, kHlsLeaf, PortNum{1});
  const TopologyPtr cut = rememberMissing(*t, t0, b.build(), t1);
  ASSERT_EQ(countMissing(*cut).links, 1u);
  telemetry::CounterSnapshot quiet;
  EXPECT_EQ(api::sweepSuspects(*cut, &quiet, quiet, none, 8, 16, 0),
            (std::set<Lid>{kHlsLeafLid, kHlsSpineLid}));
  std::set<Lid> seen;
  for (std::uint64_t seq = 1; seq <= 2; ++seq) {
    quiet.sequence = seq;
    const auto one = api::sweepSuspects(*cut, &quiet, quiet, none, 1, 16, 0);
    ASSERT_EQ(one.size(), 1u);
    seen.insert(*one.begin());
  }
  EXPECT_EQ(seen.size(), 2u);  // taken in turn

  // A burst of newly silent ports (an SM rerouting around the dead cable) does not crowd out
  // the re-check of what is known broken: with room for one probe, the re-check's switch (the
  // leaf, in turn at sequence 0) is probed, not the spine a silent port points at.
  telemetry::CounterSnapshot was, burst;
  const PortKey spinePort{kHlsSpine, PortNum{1}};
  was.ports = {sample(spinePort, telemetry::PortStatus::kOk)};
  burst.ports = {sample(spinePort, telemetry::PortStatus::kUnreachable)};
  burst.sequence = 0;
  EXPECT_EQ(api::sweepSuspects(*cut, &was, burst, none, 1, 1, 0), (std::set<Lid>{kHlsLeafLid}));
  EXPECT_EQ(api::sweepSuspects(*cut, &was, burst, none, 1, 2, 0),
            (std::set<Lid>{kHlsLeafLid, kHlsSpineLid}));
}

TEST(SweepSuspects, ACableNotYetActiveIsReCheckedUntilTheSmActivatesIt) {
  const TopologyPtr t = hostLeafSpine();
  TopologyBuilder b;
  for (const Node& n : t->nodes()) {
    b.addNode(nodeInfoOf(n));
    for (const auto& p : n.ports) {
      if (!p) continue;
      Port q = *p;
      const bool leafSpine = (n.guid == kHlsLeaf && q.num == PortNum{2}) ||
                             (n.guid == kHlsSpine && q.num == PortNum{1});
      if (leafSpine) q.state = PortState::kInit;
      b.addPort(n.guid, q);
    }
  }
  b.connect(kHlsCa, PortNum{1}, kHlsLeaf, PortNum{1});
  b.connect(kHlsLeaf, PortNum{2}, kHlsSpine, PortNum{1});
  const TopologyPtr init = b.build();
  ASSERT_EQ(init->activity(linkAt(*init, kHlsLeaf, PortNum{2})), LinkActivity::kInit);
  const telemetry::RatesTable none;
  telemetry::CounterSnapshot quiet;
  EXPECT_EQ(api::sweepSuspects(*init, &quiet, quiet, none, 8, 16, 0),
            (std::set<Lid>{kHlsLeafLid, kHlsSpineLid}));
  EXPECT_TRUE(api::sweepSuspects(*t, &quiet, quiet, none, 8, 16, 0).empty());  // all Active
}

TEST(SweepSuspects, EverySwitchInTurnIsThePeriodicCheck) {
  const TopologyPtr t = hostLeafSpine();
  const std::size_t widest = static_cast<std::size_t>(t->findNode(kHlsLeaf)->numPorts);
  ASSERT_GT(widest, 1u);
  const telemetry::RatesTable none;
  telemetry::CounterSnapshot quiet;
  std::set<Lid> seen;
  for (std::uint64_t seq = 1; seq <= 2; ++seq) {
    quiet.sequence = seq;
    // Reads for the widest switch only: one switch a sweep.
    const auto one = api::sweepSuspects(*t, &quiet, quiet, none, 8, 16, widest);
    ASSERT_EQ(one.size(), 1u);
    seen.insert(*one.begin());
  }
  EXPECT_EQ(seen, (std::set<Lid>{kHlsLeafLid, kHlsSpineLid}));  // both switches, one a sweep
  // A budget below one switch still checks one; two switches' worth checks both at once.
  EXPECT_EQ(api::sweepSuspects(*t, &quiet, quiet, none, 8, 16, 1).size(), 1u);
  EXPECT_EQ(api::sweepSuspects(*t, &quiet, quiet, none, 8, 16, 2 * widest).size(), 2u);
  EXPECT_EQ(api::sweepSuspects(*t, &quiet, quiet, none, 8, 16, 100 * widest).size(),
            2u);  // no more than there are
  EXPECT_EQ(api::sweepSuspects(*t, &quiet, quiet, none, 8, 16).size(),
            2u);  // the default: a small fabric is checked whole every sweep
  EXPECT_TRUE(api::sweepSuspects(*t, &quiet, quiet, none, 8, 16, 0).empty());
  EXPECT_TRUE(api::sweepSuspects(*t, &quiet, quiet, none, 8, 0, 4).empty());  // the cap holds
}

}  // namespace
}  // namespace ibfabric::testing
