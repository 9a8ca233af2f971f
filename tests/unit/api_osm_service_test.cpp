// FabricService's reactions to OpenSM events, with scripted seams: a trap re-probes the switch
// through the counter source (no crawl) and publishes link_down at once; a port that comes back
// is restored at once, init (link_up), and link_active once the SM has made it Active; unknown
// switches fall back to a crawl; routing passes that changed LFTs reach the refresh hook once; the
// link status is published.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <mutex>

#include "api/daemon/osm_wiring.h"
#include "api/daemon/trap_wiring.h"
#include "api/service/fabric_service.h"
#include "discovery/fabric_memory.h"
#include "tests/fakes/fake_sources.h"
#include "tests/support/fabrics.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;
using telemetry::EventType;
using testing::waitFor;

const LinkRate k4xHdr{LinkWidth::k4x, LinkSpeed::kHdr};
// host[1] -- leaf[1]; leaf[2] -- spine[1]. LIDs: leaf 1, spine 2, host 3.
constexpr Guid kCa = testing::kHlsCa, kLeaf = testing::kHlsLeaf, kSpine = testing::kHlsSpine;
constexpr Lid kLeafLid = testing::kHlsLeafLid, kSpineLid = testing::kHlsSpineLid;

/// No coalescing: every request runs (the tests of what one trap does).
RequestCoalescer::Options everyRequestRuns() {
  RequestCoalescer::Options o;
  o.quiet = 0s;
  o.maxWait = 0s;
  return o;
}

/// PortInfo answers by (LID, port), scripted by the test.
struct ProbeScript {
  std::mutex mu;
  std::map<std::pair<std::uint16_t, int>, mad::PortInfo> answers;
  int probes = 0;
  /// Run once by the next forwarding-table read, before it calls its `between` hook.
  std::function<void()> duringRead;
  int probesWhenReadEnded = -1;
  /// probeFarEnd answers by (switch GUID, port), scripted by the test.
  std::map<std::pair<std::uint64_t, int>, CounterSource::FarEnd> farEnds;
  int farEndProbes = 0;
  /// probeSwitchPortsDirected answers by (switch GUID, port), scripted by the test.
  std::map<std::pair<std::uint64_t, int>, mad::PortInfo> byRoute;
  int routeProbes = 0;
  void set(Lid lid, int p, PortState s, PhysPortState ph) {
    std::lock_guard lock(mu);
    mad::PortInfo info;
    info.portState = static_cast<std::uint8_t>(s);
    info.portPhysState = static_cast<std::uint8_t>(ph);
    answers[{lid.value(), p}] = info;
  }
};

class ProbingSource final : public CounterSource {
 public:
  ProbingSource(std::shared_ptr<FakeCounterControl> c, std::shared_ptr<ProbeScript> script)
      : fake_(std::move(c)), script_(std::move(script)) {}
  void setTopology(TopologyPtr t) override { fake_.setTopology(std::move(t)); }
  telemetry::CounterSnapshotPtr sweep() override { return fake_.sweep(); }
  std::string describe() const override { return "probing fake"; }
  std::vector<std::optional<mad::PortInfo>> probePortInfo(
      Lid lid, const std::vector<PortNum>& ports) override {
    std::lock_guard lock(script_->mu);
    ++script_->probes;
    std::vector<std::optional<mad::PortInfo>> out;
    for (PortNum p : ports) {
      auto it = script_->answers.find({lid.value(), p.value()});
      out.push_back(it == script_->answers.end() ? std::nullopt
                                                 : std::optional<mad::PortInfo>(it->second));
    }
    return out;
  }
  std::vector<std::optional<mad::PortInfo>> probeSwitchPortsDirected(
      const TopologyPtr&, Guid sw, const std::vector<PortNum>& ports) override {
    std::lock_guard lock(script_->mu);
    ++script_->routeProbes;
    std::vector<std::optional<mad::PortInfo>> out;
    for (PortNum p : ports) {
      auto it = script_->byRoute.find({sw.value(), p.value()});
      out.push_back(it == script_->byRoute.end() ? std::nullopt
                                                 : std::optional<mad::PortInfo>(it->second));
    }
    return out;
  }
  std::optional<FarEnd> probeFarEnd(const TopologyPtr&, Guid sw, PortNum port) override {
    std::lock_guard lock(script_->mu);
    ++script_->farEndProbes;
    auto it = script_->farEnds.find({sw.value(), port.value()});
    return it == script_->farEnds.end() ? std::nullopt : std::optional<FarEnd>(it->second);
  }
  void setBetweenSlices(std::function<void()> hook) override { between_ = std::move(hook); }
  /// A read in two slices: what the test asked for, then the hook between the slices.
  routing::ForwardingTablesPtr readForwardingTables(const TopologyPtr& t,
                                                    const routing::ForwardingTablesPtr& previous,
                                                    std::string* reason) override {
    std::function<void()> during;
    {
      std::lock_guard lock(script_->mu);
      during = std::exchange(script_->duringRead, {});
    }
    if (during) {
      during();
      if (between_) between_();
      std::lock_guard lock(script_->mu);
      script_->probesWhenReadEnded = script_->probes;
    }
    return fake_.readForwardingTables(t, previous, reason);
  }

 private:
  std::function<void()> between_;
  FakeCounterSource fake_;
  std::shared_ptr<ProbeScript> script_;
};

struct Harness {
  std::shared_ptr<ProbeScript> script = std::make_shared<ProbeScript>();
  testing::InProcessDaemon daemon;
  ScriptedTopologySource* topo = &daemon.topology();
  FabricService* service = &daemon.service();
  Harness() : daemon(daemonOptions(script)) {
    topo->push(testing::hostLeafSpine());
    // Everything answers Active until told otherwise.
    for (int p = 1; p <= 2; ++p)
      script->set(kLeafLid, p, PortState::kActive, PhysPortState::kLinkUp);
    script->set(kSpineLid, 1, PortState::kActive, PhysPortState::kLinkUp);
    service->start();
  }
  static testing::InProcessDaemon::Options daemonOptions(std::shared_ptr<ProbeScript> script) {
    testing::InProcessDaemon::Options o;
    o.service.sweepInterval = 1h;   // crawls and sweeps: only the first ones and those asked for
    o.service.sweepProbes = false;  // probes only when a test asks (the plugin's path)
    o.counterSources = [control = o.counters, script]() -> CounterSourcePtr {
      return std::make_unique<ProbingSource>(control, script);
    };
    return o;
  }
  std::vector<telemetry::Event> events(EventType type) {
    telemetry::EventQuery q;
    q.types = {type};
    return service->events().query(q);
  }
};

TEST(ApiOsmService, TrapReprobesTheSwitchAndPublishesLinkDownWithoutACrawl) {
  Harness h;
  ASSERT_TRUE(waitFor([&] { return h.service->state()->ready(); }, 10s));
  ASSERT_EQ(h.service->state()->topology->links().size(), 2u);

  h.script->set(kLeafLid, 2, PortState::kDown, PhysPortState::kPolling);
  h.script->set(kSpineLid, 1, PortState::kDown, PhysPortState::kPolling);
  h.service->requestPortProbe(kLeafLid);
  ASSERT_TRUE(waitFor([&] { return h.events(EventType::kLinkDown).size() == 1; }, 10s));
  auto down = h.events(EventType::kLinkDown)[0];
  EXPECT_TRUE((down.end.node == kLeaf && down.remote && down.remote->node == kSpine) ||
              (down.end.node == kSpine && down.remote && down.remote->node == kLeaf));
  auto s = h.service->state();
  EXPECT_EQ(s->topology->links().size(), 2u);  // the cable stays, missing (fabric_memory.h)
  EXPECT_EQ(countMissing(*s->topology).links, 1u);
  EXPECT_EQ(s->osm.portProbes, 1u);
  EXPECT_EQ(h.topo->calls(), 1);  // no crawl was needed
  EXPECT_EQ(s->topology->findNode(kSpine)->port(PortNum{1})->state, PortState::kDown);
  // A probe's edit is swept at the next interval, not at once (a sweep of the whole fabric per
  // changed cable would multiply the MADs of a fault storm): another probe runs, no sweep.
  const auto sweptBefore = s->counters->sequence;
  h.service->requestPortProbe(kLeafLid);
  ASSERT_TRUE(waitFor([&] { return h.service->state()->osm.portProbes == 2; }, 10s));
  EXPECT_EQ(h.service->state()->counters->sequence, sweptBefore);
  // The next sweep (here: the one a routing pass brings at once) follows the new topology: the
  // leaf-spine ports are swept no more.
  h.service->requestRouteRefresh("the test's next sweep");
  ASSERT_TRUE(waitFor([&] { return h.service->state()->counters->topology == s->topology; }, 10s));

  // The link trains (Init at both ends): back in the model at once, as init, with its link_up;
  // its switch is probed again until the SM has made it Active: then link_active.
  h.script->set(kLeafLid, 2, PortState::kInit, PhysPortState::kLinkUp);
  h.script->set(kSpineLid, 1, PortState::kInit, PhysPortState::kLinkUp);
  h.service->requestPortProbe(kLeafLid);
  ASSERT_TRUE(waitFor([&] { return h.events(EventType::kLinkUp).size() == 1; }, 10s));
  s = h.service->state();
  auto leafSpine = [&](const Topology& t) -> const Link& {
    return t.links()[*t.findNode(kLeaf)->port(PortNum{2})->link];
  };
  EXPECT_EQ(s->topology->activity(leafSpine(*s->topology)), LinkActivity::kInit);
  EXPECT_EQ(countMissing(*s->topology).links, 0u);
  EXPECT_NE(h.events(EventType::kLinkUp)[0].message.find("not yet Active"), std::string::npos)
      << h.events(EventType::kLinkUp)[0].message;
  EXPECT_TRUE(h.events(EventType::kLinkActive).empty());
  h.script->set(kLeafLid, 2, PortState::kActive, PhysPortState::kLinkUp);
  h.script->set(kSpineLid, 1, PortState::kActive, PhysPortState::kLinkUp);
  h.service->requestPendingProbes();
  ASSERT_TRUE(waitFor([&] { return h.events(EventType::kLinkActive).size() == 1; }, 10s));
  EXPECT_EQ(h.events(EventType::kLinkUp).size(), 1u);
  s = h.service->state();
  EXPECT_EQ(s->topology->activity(leafSpine(*s->topology)), LinkActivity::kActive);
  EXPECT_EQ(s->topology->links().size(), 2u);
  EXPECT_EQ(h.topo->calls(), 1);
  const Port* leaf2 = s->topology->findNode(kLeaf)->port(PortNum{2});
  ASSERT_TRUE(leaf2->activeRate);
  EXPECT_EQ(*leaf2->activeRate, k4xHdr);  // the rate it had before the cable went down
}

/// The host crawled away (its only cable out when a crawl ran): kCa is remembered missing.
void crawlWithoutTheHost(Harness& h) {
  ASSERT_TRUE(waitFor([&] { return h.service->state()->ready(); }, 10s));
  h.script->set(kLeafLid, 1, PortState::kDown, PhysPortState::kPolling);
  testing::HostLeafSpineOptions unplugged;
  unplugged.hostUnplugged = true;
  h.topo->push(testing::hostLeafSpine(unplugged));
  h.service->requestCrawl();
  ASSERT_TRUE(waitFor(
      [&] {
        const auto t = h.service->state()->topology;
        const Node* ca = t ? t->findNode(kCa) : nullptr;
        return ca && ca->missing;
      },
      10s));
}

CounterSource::FarEnd farEnd(Guid node, int port, Lid lid, PortState state) {
  CounterSource::FarEnd f;
  f.node.nodeType = 1;
  f.node.numPorts = 1;
  f.node.nodeGuid = node.value();
  f.node.portGuid = node.value() + 1;
  f.node.localPortNum = static_cast<std::uint8_t>(port);
  mad::PortInfo info;
  info.lid = lid.value();
  info.portState = static_cast<std::uint8_t>(state);
  info.portPhysState = static_cast<std::uint8_t>(PhysPortState::kLinkUp);
  info.localPortNum = static_cast<std::uint8_t>(port);
  f.port = info;
  return f;
}

TEST(ApiOsmService, AHostCrawledAwayIsBackWithItsCableWhenItsNodeInfoAnswers) {
  Harness h;
  crawlWithoutTheHost(h);
  const int crawls = h.topo->calls();
  EXPECT_EQ(h.service->state()->topology->findNode(kCa)->port(PortNum{1})->lid, Lid{});

  // The cable is back; the SM has not activated it, nor (yet) given the port its LID again.
  h.script->set(kLeafLid, 1, PortState::kInit, PhysPortState::kLinkUp);
  {
    std::lock_guard lock(h.script->mu);
    h.script->farEnds[{kLeaf.value(), 1}] = farEnd(kCa, 1, Lid{}, PortState::kInit);
  }
  h.service->requestPortProbe(kLeafLid);
  ASSERT_TRUE(waitFor([&] { return h.events(EventType::kLinkUp).size() == 1; }, 10s));
  auto t = h.service->state()->topology;
  const Node* ca = t->findNode(kCa);
  ASSERT_NE(ca, nullptr);
  EXPECT_FALSE(ca->missing);
  EXPECT_EQ(countMissing(*t).nodes(), 0u);
  EXPECT_EQ(countMissing(*t).links, 0u);
  EXPECT_EQ(t->activity(t->links()[*ca->port(PortNum{1})->link]), LinkActivity::kInit);
  EXPECT_EQ(h.topo->calls(), crawls);  // no crawl

  // The SM activates it and assigns the LID: read by directed route (the model has none).
  h.script->set(kLeafLid, 1, PortState::kActive, PhysPortState::kLinkUp);
  {
    std::lock_guard lock(h.script->mu);
    h.script->farEnds[{kLeaf.value(), 1}] = farEnd(kCa, 1, Lid{7}, PortState::kActive);
  }
  h.service->requestPendingProbes();
  ASSERT_TRUE(waitFor([&] { return h.events(EventType::kLinkActive).size() == 1; }, 10s));
  t = h.service->state()->topology;
  EXPECT_EQ(t->findNode(kCa)->port(PortNum{1})->lid, Lid{7});
  EXPECT_EQ(t->findNode(kCa)->port(PortNum{1})->state, PortState::kActive);
  EXPECT_EQ(t->findLid(Lid{7})->node, t->findNode(kCa)->index);
  EXPECT_EQ(h.topo->calls(), crawls);
}

TEST(ApiOsmService, ANodeOtherThanTheMissingOneAtTheFarEndIsLeftToACrawl) {
  Harness h;
  crawlWithoutTheHost(h);
  const int crawls = h.topo->calls();
  h.script->set(kLeafLid, 1, PortState::kActive, PhysPortState::kLinkUp);
  {
    std::lock_guard lock(h.script->mu);
    // Another HCA was cabled to the port (or the old one to another port of it).
    h.script->farEnds[{kLeaf.value(), 1}] = farEnd(Guid{0x777000}, 1, Lid{9}, PortState::kActive);
  }
  h.service->requestPortProbe(kLeafLid);
  ASSERT_TRUE(waitFor([&] { return h.topo->calls() == crawls + 1; }, 10s));  // a trap's: crawls
  EXPECT_TRUE(h.events(EventType::kLinkUp).empty());
  {
    std::lock_guard lock(h.script->mu);
    EXPECT_EQ(h.script->farEndProbes, 1);
  }
}

TEST(ApiOsmService, AProbeAskedForDuringATableReadRunsBeforeTheReadEnds) {
  Harness h;
  ASSERT_TRUE(waitFor([&] { return h.service->state()->ready(); }, 10s));
  h.script->set(kLeafLid, 2, PortState::kDown, PhysPortState::kPolling);
  h.script->set(kSpineLid, 1, PortState::kDown, PhysPortState::kPolling);
  {
    std::lock_guard lock(h.script->mu);
    h.script->duringRead = [&] { h.service->requestPortProbe(kLeafLid); };  // a trap meanwhile
  }
  h.service->requestRouteRefresh("test: a routing pass");  // a sweep, then a table read
  ASSERT_TRUE(waitFor(
      [&] {
        std::lock_guard lock(h.script->mu);
        return h.script->probesWhenReadEnded >= 0;
      },
      10s));
  {
    std::lock_guard lock(h.script->mu);
    EXPECT_GE(h.script->probesWhenReadEnded, 1);  // probed inside the read
  }
  ASSERT_TRUE(waitFor([&] { return h.events(EventType::kLinkDown).size() == 1; }, 10s));
  {
    std::lock_guard lock(h.script->mu);
    EXPECT_EQ(h.script->probes, h.script->probesWhenReadEnded);  // and none after it
  }
  EXPECT_EQ(h.topo->calls(), 1);  // no crawl
}

TEST(ApiOsmService, SilentPortsAreProbedAgainBeforeACrawl) {
  Harness h;
  ASSERT_TRUE(waitFor([&] { return h.service->state()->ready(); }, 10s));
  // Right after the cable broke, SMPs to the leaf are still routed over it: no answers.
  {
    std::lock_guard lock(h.script->mu);
    h.script->answers.erase({kLeafLid.value(), 1});
    h.script->answers.erase({kLeafLid.value(), 2});
  }
  h.service->requestPortProbe(kLeafLid);
  ASSERT_TRUE(waitFor(
      [&] {
        std::lock_guard lock(h.script->mu);
        return h.script->probes >= 2;  // probed again on its own
      },
      10s, 5ms));
  // The SM has rerouted: the leaf answers, port 2 is down.
  h.script->set(kLeafLid, 1, PortState::kActive, PhysPortState::kLinkUp);
  h.script->set(kLeafLid, 2, PortState::kDown, PhysPortState::kPolling);
  h.script->set(kSpineLid, 1, PortState::kDown, PhysPortState::kPolling);
  ASSERT_TRUE(waitFor([&] { return h.events(EventType::kLinkDown).size() == 1; }, 10s));
  EXPECT_EQ(h.topo->calls(), 1);  // no crawl
  EXPECT_EQ(h.service->state()->osm.portProbeFailures, 0u);
}

TEST(ApiOsmService, SwitchesThatStaySilentFallBackToACrawl) {
  Harness h;
  ASSERT_TRUE(waitFor([&] { return h.service->state()->ready(); }, 10s));
  {
    std::lock_guard lock(h.script->mu);
    h.script->answers.clear();
  }
  h.service->requestPortProbe(kLeafLid);
  ASSERT_TRUE(waitFor([&] { return h.topo->calls() == 2; }, 10s));
  std::lock_guard lock(h.script->mu);
  // The first probe, its neighbour's port (silent too), 5 more, then the crawl.
  EXPECT_EQ(h.script->probes, 7);
}

TEST(ApiOsmService, ASilentSwitchIsExplainedByTheNeighbourThatSeesItsCableDown) {
  Harness h;
  ASSERT_TRUE(waitFor([&] { return h.service->state()->ready(); }, 10s));
  // The spine's LID is routed over the dead cable: it does not answer; the leaf does.
  {
    std::lock_guard lock(h.script->mu);
    h.script->answers.erase({kSpineLid.value(), 1});
  }
  h.script->set(kLeafLid, 2, PortState::kDown, PhysPortState::kPolling);
  h.service->requestPortProbe(kSpineLid);
  ASSERT_TRUE(waitFor([&] { return h.events(EventType::kLinkDown).size() == 1; }, 10s));
  EXPECT_EQ(countMissing(*h.service->state()->topology).links, 1u);
  // The spine is asked once more (by LID, then along a route without the dead cable), which
  // could show its other cables; still silent, it is left to the sweeps: no crawl, no loop.
  ASSERT_TRUE(waitFor(
      [&] {
        std::lock_guard lock(h.script->mu);
        return h.script->routeProbes >= 2;
      },
      10s, 5ms));
  h.service->requestPortProbe(kLeafLid);  // runs after anything the spine's probe left pending
  ASSERT_TRUE(waitFor(
      [&] {
        std::lock_guard lock(h.script->mu);
        return h.script->probes >= 6;
      },
      10s, 5ms));
  EXPECT_EQ(h.topo->calls(), 1);
  std::lock_guard lock(h.script->mu);
  // The spine, the leaf's port facing it, the leaf in full, the spine's end of the cable, the
  // spine again; then the leaf asked by the test. The spine by route: twice, not more.
  EXPECT_EQ(h.script->probes, 6);
  EXPECT_EQ(h.script->routeProbes, 2);
}

TEST(ApiOsmService, ASwitchSilentByLidIsReadByDirectedRoute) {
  Harness h;
  ASSERT_TRUE(waitFor([&] { return h.service->state()->ready(); }, 10s));
  // The leaf's LID is routed over its dead up-link until the SM reroutes: silent by LID, its
  // neighbour silent too; along the up cables it answers, its up-link port down.
  {
    std::lock_guard lock(h.script->mu);
    h.script->answers.clear();
    mad::PortInfo up, down;
    up.portState = static_cast<std::uint8_t>(PortState::kActive);
    up.portPhysState = static_cast<std::uint8_t>(PhysPortState::kLinkUp);
    down.portState = static_cast<std::uint8_t>(PortState::kDown);
    down.portPhysState = static_cast<std::uint8_t>(PhysPortState::kPolling);
    h.script->byRoute[{kLeaf.value(), 1}] = up;
    h.script->byRoute[{kLeaf.value(), 2}] = down;
  }
  h.service->requestPortProbe(kLeafLid);
  ASSERT_TRUE(waitFor([&] { return h.events(EventType::kLinkDown).size() == 1; }, 10s));
  EXPECT_EQ(countMissing(*h.service->state()->topology).links, 1u);
  EXPECT_EQ(h.topo->calls(), 1);  // no crawl
  std::lock_guard lock(h.script->mu);
  EXPECT_EQ(h.script->routeProbes, 1);
}

TEST(ApiOsmService, SmTrapReportsReachTheProbes) {
  Harness h;
  ASSERT_TRUE(waitFor([&] { return h.service->state()->ready(); }, 10s));
  RequestCoalescer coalescer(everyRequestRuns());
  CoalescedRequests requests(*h.service, coalescer);
  TrapDispatcher dispatch(*h.service, requests);
  // 128 from the leaf: its ports are read, the cable is down.
  h.script->set(kLeafLid, 2, PortState::kDown, PhysPortState::kPolling);
  h.script->set(kSpineLid, 1, PortState::kDown, PhysPortState::kPolling);
  mad::Notice n;
  n.trapNumber = 128;
  n.issuerLid = kLeafLid;
  n.dataLid = kLeafLid;
  dispatch(n);
  ASSERT_TRUE(waitFor([&] { return h.events(EventType::kLinkDown).size() == 1; }, 10s));
  EXPECT_EQ(h.topo->calls(), 1);
  // 64 for a port the model does not know: a crawl.
  mad::Notice in;
  in.trapNumber = 64;
  in.dataGid[15] = 0x77;
  dispatch(in);
  ASSERT_TRUE(waitFor([&] { return h.topo->calls() == 2; }, 10s));
  // 65 for the CA's port: the probe of its leaf, no crawl.
  const int before = [&] {
    std::lock_guard lock(h.script->mu);
    return h.script->probes;
  }();
  mad::Notice out;
  out.trapNumber = 65;
  const Guid caPort = h.service->state()->topology->findNode(kCa)->port(PortNum{1})->guid;
  for (int i = 0; i < 8; ++i)
    out.dataGid[8 + i] = static_cast<std::uint8_t>(caPort.value() >> (56 - 8 * i));
  dispatch(out);
  ASSERT_TRUE(waitFor(
      [&] {
        std::lock_guard lock(h.script->mu);
        return h.script->probes > before;
      },
      10s, 5ms));
  EXPECT_EQ(h.topo->calls(), 2);
}

TEST(ApiOsmService, UnknownSwitchesAndUnknownCablesFallBackToACrawl) {
  Harness h;
  ASSERT_TRUE(waitFor([&] { return h.service->state()->ready(); }, 10s));
  h.service->requestPortProbe(Lid{99});
  ASSERT_TRUE(waitFor([&] { return h.topo->calls() == 2; }, 10s));
  EXPECT_EQ(h.service->state()->osm.portProbeFailures, 1u);
  EXPECT_TRUE(h.events(EventType::kLinkDown).empty());
}

TEST(ApiOsmService, RoutingPassesThatChangedTablesReachTheRefreshHookOnce) {
  Harness h;
  RequestCoalescer coalescer(everyRequestRuns());
  CoalescedRequests requests(*h.service, coalescer);
  OsmEventDispatcher dispatch(requests);
  OsmEvent lft;
  lft.type = OsmEventType::kLftChange;
  lft.switchGuid = kLeaf;
  OsmEvent done;
  done.type = OsmEventType::kUcastRoutingDone;
  done.reason = "heavy_sweep";
  dispatch(done);  // a heavy sweep that changed nothing
  EXPECT_EQ(h.service->state()->osm.routeRefreshRequests, 0u);
  for (int i = 0; i < 5; ++i) dispatch(lft);
  dispatch(done);
  auto s = h.service->state();
  EXPECT_EQ(s->osm.routeRefreshRequests, 1u);
  EXPECT_EQ(s->osm.lastRouteRefreshReason, "heavy_sweep: 5 LFT change(s)");
  done.reason = "reroute";
  dispatch(done);
  EXPECT_EQ(h.service->state()->osm.routeRefreshRequests, 2u);

  OsmLinkStatus link;
  link.enabled = true;
  link.connected = true;
  link.smState = "standby";
  h.service->setOsmLink(link);
  EXPECT_EQ(h.service->state()->osm.link.smState, "standby");
  EXPECT_TRUE(h.service->state()->osm.link.connected);
}

TEST(ApiOsmService, ATrapStormIsCoalescedAndALinkChangeInsideItIsStillReported) {
  Harness h;
  ASSERT_TRUE(waitFor([&] { return h.service->state()->ready(); }, 10s));
  auto fakeNow = RequestCoalescer::Clock::now();
  RequestCoalescer::Options o;  // the daemon's windows (1 s quiet, 5 s longest wait)
  o.now = [&fakeNow] { return fakeNow; };
  RequestCoalescer coalescer(o);
  CoalescedRequests requests(*h.service, coalescer);
  OsmEventDispatcher dispatch(requests);
  const int crawlsBefore = h.topo->calls();
  const auto start = fakeNow;
  // 19,800 trap 128 lines in 10 s: from the leaf, the spine, LID 99 (no such switch) and no LID.
  const Lid from[] = {kLeafLid, kSpineLid, Lid{99}, Lid{0}};
  for (int i = 0; i < 19800; ++i) {
    fakeNow = start + std::chrono::microseconds(i * 10'000'000LL / 19800);
    if (i == 9000) {  // halfway: the leaf-spine cable really goes down
      h.script->set(kLeafLid, 2, PortState::kDown, PhysPortState::kPolling);
      h.script->set(kSpineLid, 1, PortState::kDown, PhysPortState::kPolling);
    }
    OsmEvent trap;
    trap.type = OsmEventType::kTrap;
    trap.trapNumber = 128;
    trap.issuerLid = from[i % 4];
    dispatch(trap);
    if (i % 20 == 0) coalescer.tick();
  }
  fakeNow += 2s;
  coalescer.tick();
  // (The scripted crawls still see the cable: a crawl after the probe may bring it back, and the
  // next probe's run reports it down again.)
  ASSERT_TRUE(waitFor([&] { return !h.events(EventType::kLinkDown).empty(); }, 10s));
  // Three keys (the leaf's probe, the spine's, one crawl for both kinds of unknown LID), each
  // run at most 2 + 10 s / 5 s times.
  const CoalescingCounts c = coalescer.counts();
  EXPECT_EQ(c.events, 19800u);
  EXPECT_LE(c.runs, 3u * 4u);
  EXPECT_EQ(c.bursts, 3u);
  EXPECT_GE(c.coalesced(), 19800u - 12u);
  ASSERT_TRUE(waitFor([&] { return h.topo->calls() > crawlsBefore; }, 10s));
  EXPECT_LE(h.topo->calls() - crawlsBefore, 4 + 1);  // the coalesced crawls (+1 a probe asked)
  std::lock_guard lock(h.script->mu);
  EXPECT_LE(h.script->probes, 2 * 4 * 4);  // each probe run: the switch and a few far ends
}

}  // namespace
}  // namespace ibfabric::api
