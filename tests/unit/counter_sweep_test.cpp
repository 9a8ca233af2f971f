// CounterSweeper on the scripted fake transport with in-memory topologies: capabilities decide
// the queries, CA and switch ports are addressed correctly, timeouts and vanished ports are
// reported per port.
#include "telemetry/counter_sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>

#include "discovery/net_topology.h"
#include "telemetry/event_log.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_mad_transport.h"

namespace ibfabric::telemetry {
namespace {

using namespace std::chrono_literals;
using mad::FakeMadTransport;
using Reply = FakeMadTransport::Reply;

constexpr Guid kSwitch{0x200000};
constexpr Guid kCaA{0x100000};
constexpr Guid kCaB{0x100010};
constexpr Guid kCaC{0x100020};
constexpr LinkRate k4xHdr{LinkWidth::k4x, LinkSpeed::kHdr};

// A switch (LID 1) with CAs A (LID 5), B (LID 6) and, optionally, C (LID 7) on ports 1..3;
// C's cable in `cState` at both ends (LinkUp).
TopologyPtr fabric(bool withC = true, std::uint32_t switchVendor = 0,
                   std::uint32_t switchDevice = 0, PortState cState = PortState::kActive) {
  TopologyBuilder b;
  b.addNode({NodeType::kSwitch, kSwitch, kSwitch, "sw", switchVendor, switchDevice, 0, 4});
  b.addNode({NodeType::kCa, kCaA, kCaA, "hostA mlx5_0", 0, 0, 0, 1});
  b.addNode({NodeType::kCa, kCaB, kCaB, "hostB mlx5_0", 0, 0, 0, 1});
  if (withC) b.addNode({NodeType::kCa, kCaC, kCaC, "hostC mlx5_0", 0, 0, 0, 1});
  auto add = [&](Guid g, int num, int lid) {
    Port p;
    p.num = PortNum(static_cast<std::uint8_t>(num));
    p.lid = Lid(static_cast<std::uint16_t>(lid));
    p.state = (g == kCaC || (g == kSwitch && num == 3)) ? cState : PortState::kActive;
    p.physState = PhysPortState::kLinkUp;
    if (num != 0) p.activeRate = k4xHdr;
    b.addPort(g, p);
  };
  for (int p = 0; p <= 4; ++p) add(kSwitch, p, 1);
  add(kCaA, 1, 5);
  add(kCaB, 1, 6);
  if (withC) add(kCaC, 1, 7);
  b.connect(kSwitch, PortNum{1}, kCaA, PortNum{1});
  b.connect(kSwitch, PortNum{2}, kCaB, PortNum{1});
  if (withC) b.connect(kSwitch, PortNum{3}, kCaC, PortNum{1});
  return b.build();
}

// A scripted PMA per LID: capability masks and counter values per (LID, port).
struct FakePma {
  std::mutex mu;
  std::map<std::uint16_t, mad::ClassPortInfo> cpi;
  std::map<std::pair<std::uint16_t, int>, mad::PortCountersExtended> ext;
  std::map<std::pair<std::uint16_t, int>, mad::PortCounters> narrow;
  std::set<std::uint16_t> dead;
  std::map<std::uint16_t, std::uint16_t> status;  // MAD status to answer with
  std::map<std::uint16_t, std::uint8_t> tick;     // PortSamplesControl.Tick; absent: refused
  std::set<std::uint16_t> silentSamplesControl;   // PortSamplesControl never answered
  std::vector<std::pair<std::uint16_t, mad::MadHeader>> asked;

  FakeMadTransport::Responder responder() {
    return [this](const mad::MadAddress& to, const mad::MadBuffer& req, int) {
      std::lock_guard lock(mu);
      const auto lid = to.lid.value();
      const mad::MadHeader h = mad::decodeHeader(req);
      asked.emplace_back(lid, h);
      if (dead.count(lid)) return std::vector<Reply>{};
      mad::MadBuffer reply = FakeMadTransport::responseTo(req);
      if (auto st = status.find(lid); st != status.end()) {
        mad::MadHeader rh = mad::decodeHeader(reply);
        rh.status = st->second;
        mad::encodeHeader(reply, rh);
        return std::vector<Reply>{{1ms, reply}};
      }
      switch (static_cast<mad::PmaAttribute>(h.attributeId)) {
        case mad::PmaAttribute::kPortSamplesControl: {
          if (silentSamplesControl.count(lid)) return std::vector<Reply>{};
          auto t = tick.find(lid);
          if (t == tick.end()) {
            mad::MadHeader rh = mad::decodeHeader(reply);
            rh.status = 0x000c;  // unsupported method/attribute combination
            mad::encodeHeader(reply, rh);
            break;
          }
          mad::PortSamplesControl v;
          v.tick = t->second;
          mad::encodePortSamplesControl(reply, v);
          break;
        }
        case mad::PmaAttribute::kClassPortInfo:
          mad::encodeClassPortInfo(reply, cpi[lid]);
          break;
        case mad::PmaAttribute::kPortCountersExtended: {
          int port = mad::decodePortCountersExtended(req).portSelect;
          auto v = ext[{lid, port}];
          v.portSelect = static_cast<std::uint8_t>(port);
          mad::encodePortCountersExtended(reply, v);
          break;
        }
        case mad::PmaAttribute::kPortCounters: {
          int port = mad::decodePortCounters(req).portSelect;
          if (h.method == static_cast<std::uint8_t>(mad::MadMethod::kSet)) break;  // echo
          auto v = narrow[{lid, port}];
          v.portSelect = static_cast<std::uint8_t>(port);
          mad::encodePortCounters(reply, v);
          break;
        }
        default:
          break;
      }
      return std::vector<Reply>{{1ms, reply}};
    };
  }
  std::size_t count(std::uint16_t attr, std::optional<std::uint16_t> lid = std::nullopt) {
    std::lock_guard lock(mu);
    std::size_t n = 0;
    for (const auto& [l, h] : asked)
      if (h.attributeId == attr && (!lid || l == *lid)) ++n;
    return n;
  }
};

mad::ClassPortInfo caps(std::uint16_t mask, std::uint32_t mask2 = 0) {
  mad::ClassPortInfo c;
  c.baseVersion = 1;
  c.classVersion = 1;
  c.capabilityMask = mask;
  c.capabilityMask2 = mask2;
  return c;
}

struct Harness {
  explicit Harness(SweepOptions so = {}) : transport(clock, pma.responder()) {
    pma.cpi[1] = caps(0x1300);  // what ibsim reports for switches
    for (std::uint16_t lid : {5, 6, 7}) pma.cpi[lid] = caps(0x1200);
    std::string error;
    transport.open(error);
    mad::MadEngineOptions o;
    o.window = 8;
    o.retries = 2;
    o.timeout = 50ms;
    engine = std::make_unique<mad::MadEngine>(transport, clock, o);
    sweeper = std::make_unique<CounterSweeper>(*engine, clock, std::move(so));
  }
  FakePma pma;
  mad::FakeClock clock;
  FakeMadTransport transport;
  std::unique_ptr<mad::MadEngine> engine;
  std::unique_ptr<CounterSweeper> sweeper;
};

constexpr std::uint16_t kCpi = 0x0001, kPsc = 0x0010, kPc = 0x0012, kPce = 0x001D;

TEST(CounterSweep, ReadsEveryLinkedPortAtTheRightAddress) {
  Harness h;
  for (int p = 1; p <= 3; ++p) {
    h.pma.ext[{1, p}].portXmitData = 1000u * static_cast<unsigned>(p);
    h.pma.narrow[{1, p}].symbolErrorCounter = static_cast<std::uint32_t>(p);
    h.pma.narrow[{1, p}].portXmitWait = 77;
  }
  h.pma.ext[{5, 1}].portRcvData = 123456789012ull;
  h.pma.narrow[{6, 1}].linkDownedCounter = 3;
  h.sweeper->setTopology(fabric());
  auto snap = h.sweeper->sweep();
  ASSERT_EQ(snap->ports.size(), 6u);  // switch ports 1..3 (port 4 has no link) + 3 CA ports
  EXPECT_EQ(snap->stats.portsOk, 6u);
  EXPECT_TRUE(snap->failures.empty());
  for (int p = 1; p <= 3; ++p) {
    const PortSample* s = snap->find({kSwitch, PortNum(static_cast<std::uint8_t>(p))});
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->lid, Lid{1});
    EXPECT_EQ(s->status, PortStatus::kOk);
    EXPECT_EQ(s->counters.get(Counter::kXmitData), 1000u * static_cast<unsigned>(p));
    EXPECT_EQ(s->counters.bits[index(Counter::kXmitData)], 64);
    EXPECT_EQ(s->counters.get(Counter::kSymbolErrors), static_cast<unsigned>(p));
    EXPECT_EQ(s->counters.bits[index(Counter::kSymbolErrors)], 16);
    EXPECT_EQ(s->counters.get(Counter::kXmitWait), 77u);
    EXPECT_EQ(s->counters.bits[index(Counter::kXmitWait)], 32);
    ASSERT_TRUE(s->remote.has_value());
    EXPECT_EQ(s->rate, k4xHdr);
  }
  const PortSample* a = snap->find({kCaA, PortNum{1}});
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->lid, Lid{5});
  EXPECT_EQ(a->counters.get(Counter::kRcvData), 123456789012ull);
  EXPECT_EQ(a->remote->node, kSwitch);
  EXPECT_EQ(a->remoteDescription, "sw");
  EXPECT_EQ(snap->find({kCaB, PortNum{1}})->counters.get(Counter::kLinkDowned), 3u);
  EXPECT_EQ(snap->find({kSwitch, PortNum{4}}), nullptr);
  // Queries to a CA go to its own LID (port select 1); to a switch port, the switch's LID.
  EXPECT_EQ(h.pma.count(kPce, 1), 3u);
  EXPECT_EQ(h.pma.count(kPce, 5), 1u);
  EXPECT_EQ(h.pma.count(kPc, 6), 1u);
}

TEST(CounterSweep, XmitWaitTickFromPortSamplesControlOncePerDeviceModel) {
  Harness h;
  h.pma.tick[1] = 7;   // the switch, an NVIDIA Quantum-2: counts 8 bytes of the whole port
  h.pma.tick[6] = 31;  // CA B, the middle one of the CA model: per the IBA, 32 symbol times
  h.sweeper->setTopology(fabric(true, 0x02c9, 0xd2f2));
  auto snap = h.sweeper->sweep();
  EXPECT_EQ(snap->stats.samplesControlQueries, 2u);  // one per model: the switch, the CAs
  EXPECT_EQ(h.pma.count(kPsc, 1), 1u);
  EXPECT_EQ(h.pma.count(kPsc, 6), 1u);
  EXPECT_TRUE(h.sweeper->capabilities().at(kSwitch).xmitWaitPerPortBytes);
  // 4x HDR: a symbol time is 0.16 ns; every CA of the model gets the answer of B.
  EXPECT_NEAR(snap->find({kSwitch, PortNum{1}})->xmitWaitTickSeconds, 0.32e-9, 1e-15);
  for (Guid ca : {kCaA, kCaB, kCaC})
    EXPECT_NEAR(snap->find({ca, PortNum{1}})->xmitWaitTickSeconds, 5.12e-9, 1e-15);
  h.sweeper->sweep();
  h.sweeper->setTopology(fabric(true, 0x02c9, 0xd2f2));
  h.sweeper->sweep();
  EXPECT_EQ(h.pma.count(kPsc), 2u);  // answers are kept across topologies
}

TEST(CounterSweep, UnansweredPortSamplesControlIsNoFailureAndAvoidedLidsAreNeverAsked) {
  SweepOptions so;
  so.samplesControlAvoid = {Lid{6}};  // e.g. the SM's LID
  Harness h(so);
  h.pma.silentSamplesControl.insert(7);  // the CA model's representative never answers
  h.sweeper->setTopology(fabric());      // the switch refuses (MAD status)
  auto snap = h.sweeper->sweep();
  EXPECT_EQ(h.pma.count(kPsc, 6), 0u);
  EXPECT_EQ(h.pma.count(kPsc, 7), 1u);  // one attempt, no retry
  EXPECT_EQ(snap->stats.portsOk, 6u);
  EXPECT_EQ(snap->stats.failedRequests, 0u);
  EXPECT_EQ(snap->stats.retries, 0u);
  EXPECT_TRUE(snap->failures.empty());
  for (const auto& p : snap->ports) EXPECT_EQ(p.xmitWaitTickSeconds, 0.0);  // the default
  EXPECT_FALSE(h.sweeper->capabilities().at(kSwitch).sampleTick.has_value());
  h.sweeper->sweep();
  EXPECT_EQ(h.pma.count(kPsc), 2u);  // not again for this topology
  h.sweeper->setTopology(fabric());
  h.sweeper->sweep();
  EXPECT_EQ(h.pma.count(kPsc, 7), 2u);  // unanswered: asked again with the next topology
  EXPECT_EQ(h.pma.count(kPsc, 1), 1u);  // refused: not asked again
}

TEST(CounterSweep, ClassPortInfoOncePerTopology) {
  Harness h;
  h.sweeper->setTopology(fabric());
  h.sweeper->sweep();
  h.sweeper->sweep();
  EXPECT_EQ(h.pma.count(kCpi), 4u);  // one per node
  EXPECT_EQ(h.sweeper->capabilities().size(), 4u);
  EXPECT_TRUE(h.sweeper->capabilities().at(kSwitch).allPortSelect());
  EXPECT_FALSE(h.sweeper->capabilities().at(kCaA).allPortSelect());
  h.sweeper->setTopology(fabric());
  h.sweeper->sweep();
  EXPECT_EQ(h.pma.count(kCpi), 8u);
}

TEST(CounterSweep, ExtendedErrorCountersNeedOnlyPortCountersExtended) {
  Harness h;
  h.pma.cpi[5] = caps(0x1200, 1u << 1);
  h.pma.ext[{5, 1}].symbolErrorCounter = 70000;  // beyond 16 bits
  h.pma.ext[{5, 1}].portXmitWait = 1ull << 40;
  h.sweeper->setTopology(fabric());
  auto snap = h.sweeper->sweep();
  EXPECT_EQ(h.pma.count(kPc, 5), 0u);
  EXPECT_EQ(h.pma.count(kPce, 5), 1u);
  const PortSample* a = snap->find({kCaA, PortNum{1}});
  EXPECT_EQ(a->counters.get(Counter::kSymbolErrors), 70000u);
  EXPECT_EQ(a->counters.bits[index(Counter::kSymbolErrors)], 64);
  EXPECT_EQ(a->counters.get(Counter::kXmitWait), 1ull << 40);
}

TEST(CounterSweep, WithoutExtendedCountersDataComesFromPortCounters) {
  Harness h;
  h.pma.cpi[6] = caps(0);  // no extended counters, no XmitWait
  h.pma.narrow[{6, 1}].portXmitData = 0xFFFFFFFFu;
  h.sweeper->setTopology(fabric());
  auto snap = h.sweeper->sweep();
  EXPECT_EQ(h.pma.count(kPce, 6), 0u);
  const PortSample* b = snap->find({kCaB, PortNum{1}});
  EXPECT_EQ(b->counters.bits[index(Counter::kXmitData)], 32);
  EXPECT_TRUE(b->counters.saturated(Counter::kXmitData));
  EXPECT_FALSE(b->counters.has(Counter::kXmitWait));
}

TEST(CounterSweep, TimedOutPortDoesNotStopTheSweep) {
  Harness h;
  h.pma.dead.insert(6);
  h.sweeper->setTopology(fabric());
  auto snap = h.sweeper->sweep();  // CA B's ClassPortInfo fails
  EXPECT_EQ(snap->find({kCaB, PortNum{1}})->status, PortStatus::kUnreachable);
  EXPECT_EQ(snap->stats.portsOk, 5u);
  ASSERT_EQ(snap->failures.size(), 1u);
  EXPECT_EQ(snap->failures[0].lid, Lid{6});
  EXPECT_EQ(snap->failures[0].attempts, 3);  // 1 + 2 retries

  // It answers ClassPortInfo now, but its counter queries time out.
  h.pma.dead.clear();
  h.sweeper->sweep();
  h.pma.dead.insert(6);
  h.pma.cpi.erase(6);
  auto again = h.sweeper->sweep();
  const PortSample* b = again->find({kCaB, PortNum{1}});
  EXPECT_EQ(b->status, PortStatus::kTimeout);
  EXPECT_NE(b->detail.find("timeout"), std::string::npos) << b->detail;
  EXPECT_EQ(again->stats.portsOk, 5u);
  ASSERT_EQ(again->failures.size(), 1u);
  EXPECT_EQ(again->failures[0].failedRequests, 2);  // PortCountersExtended + PortCounters
  EXPECT_EQ(again->failures[0].attempts, 6);
  EXPECT_EQ(again->stats.retries, 4u);
}

// A port that stops answering is stale, not blank: its sample says when its last good reading
// was taken, across sweeps, a new topology and a sweeper that continues another.
TEST(CounterSweep, FailedPortsKeepTheTimeOfTheirLastGoodReading) {
  Harness h;
  h.sweeper->setTopology(fabric());
  auto first = h.sweeper->sweep();
  const PortSample* b1 = first->find({kCaB, PortNum{1}});
  ASSERT_EQ(b1->status, PortStatus::kOk);
  EXPECT_EQ(b1->lastOk, b1->at);
  EXPECT_FALSE(b1->stale());
  EXPECT_EQ(first->stats.portsStale, 0u);

  h.clock.advance(10s);
  h.pma.dead.insert(6);
  auto second = h.sweeper->sweep();
  const PortSample* b2 = second->find({kCaB, PortNum{1}});
  EXPECT_EQ(b2->status, PortStatus::kTimeout);
  EXPECT_TRUE(b2->stale());
  EXPECT_EQ(b2->lastOk, b1->at);
  EXPECT_EQ(second->stats.portsStale, 1u);
  EXPECT_EQ(second->stats.portsOk, 5u);
  EXPECT_GT(second->find({kCaA, PortNum{1}})->lastOk, b1->at);  // the others read again

  h.sweeper->setTopology(fabric());  // a new crawl of the same fabric
  h.clock.advance(10s);
  auto third = h.sweeper->sweep();
  EXPECT_EQ(third->find({kCaB, PortNum{1}})->lastOk, b1->at);

  // A sweeper that replaces this one (the counter source re-created) continues its snapshot.
  CounterSweeper next(*h.engine, h.clock);
  next.continueAfter(*third);
  next.setTopology(fabric());
  h.clock.advance(10s);
  auto fourth = next.sweep();
  EXPECT_EQ(fourth->sequence, third->sequence + 1);
  EXPECT_EQ(fourth->find({kCaB, PortNum{1}})->lastOk, b1->at);
  EXPECT_EQ(fourth->stats.portsStale, 1u);

  // A port no sweep ever read is failed, not stale.
  CounterSweeper fresh(*h.engine, h.clock);
  fresh.setTopology(fabric());
  auto never = fresh.sweep();
  const PortSample* b0 = never->find({kCaB, PortNum{1}});
  EXPECT_NE(b0->status, PortStatus::kOk);
  EXPECT_FALSE(b0->stale());
  EXPECT_EQ(never->stats.portsStale, 0u);

  h.pma.dead.clear();
  h.clock.advance(10s);
  auto back = next.sweep();
  const PortSample* b5 = back->find({kCaB, PortNum{1}});
  EXPECT_EQ(b5->status, PortStatus::kOk);
  EXPECT_EQ(b5->lastOk, b5->at);
  EXPECT_EQ(back->stats.portsStale, 0u);
}

TEST(CounterSweep, ErrorStatusIsUnsupported) {
  Harness h;
  h.sweeper->setTopology(fabric());
  h.sweeper->sweep();
  h.pma.status[7] = 0x000C;
  auto snap = h.sweeper->sweep();
  EXPECT_EQ(snap->find({kCaC, PortNum{1}})->status, PortStatus::kUnsupported);
}

TEST(CounterSweep, PortThatDisappearsIsReportedGoneOnce) {
  Harness h;
  h.sweeper->setTopology(fabric(true));
  auto first = h.sweeper->sweep();
  EXPECT_EQ(first->ports.size(), 6u);
  h.sweeper->setTopology(fabric(false));
  auto second = h.sweeper->sweep();
  ASSERT_EQ(second->ports.size(), 6u);
  const PortSample* c = second->find({kCaC, PortNum{1}});
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, PortStatus::kGone);
  EXPECT_EQ(c->nodeDescription, "hostC mlx5_0");
  EXPECT_EQ(second->find({kSwitch, PortNum{3}})->status, PortStatus::kGone);
  EXPECT_EQ(second->stats.ports, 4u);
  const std::size_t askedC = h.pma.count(kPce, 7);
  auto third = h.sweeper->sweep();
  EXPECT_EQ(third->ports.size(), 4u);
  EXPECT_EQ(third->find({kCaC, PortNum{1}}), nullptr);
  EXPECT_EQ(h.pma.count(kPce, 7), askedC);  // not polled any more
}

// A re-crawl without a link: followTopology() logs link_down with both ends, the next sweep lists
// both ends gone once and neither is polled again; the link coming back is a link_up.
TEST(CounterSweep, FollowTopologyLogsLinkDownAndStopsPollingBothEnds) {
  Harness h;
  EventLog log;
  followTopology(*h.sweeper, log, fabric(true));  // the first topology: no events
  EXPECT_EQ(log.size(), 0u);
  h.sweeper->sweep();

  // CA C keeps its node but loses the cable: the builder is given the port without connect().
  TopologyBuilder b;
  b.addNode({NodeType::kSwitch, kSwitch, kSwitch, "sw", 0, 0, 0, 4});
  for (auto [g, d] : {std::pair{kCaA, "hostA mlx5_0"}, std::pair{kCaB, "hostB mlx5_0"},
                      std::pair{kCaC, "hostC mlx5_0"}})
    b.addNode({NodeType::kCa, g, g, d, 0, 0, 0, 1});
  auto add = [&](Guid g, int num, int lid, bool up) {
    Port p;
    p.num = PortNum(static_cast<std::uint8_t>(num));
    p.lid = Lid(static_cast<std::uint16_t>(lid));
    p.state = up ? PortState::kActive : PortState::kDown;
    p.physState = up ? PhysPortState::kLinkUp : PhysPortState::kPolling;
    if (up && num != 0) p.activeRate = k4xHdr;
    b.addPort(g, p);
  };
  for (int p = 0; p <= 4; ++p) add(kSwitch, p, 1, p != 3);
  add(kCaA, 1, 5, true);
  add(kCaB, 1, 6, true);
  add(kCaC, 1, 7, false);
  b.connect(kSwitch, PortNum{1}, kCaA, PortNum{1});
  b.connect(kSwitch, PortNum{2}, kCaB, PortNum{1});
  TopologyDelta delta = followTopology(*h.sweeper, log, b.build());
  EXPECT_EQ(delta.linksRemoved().size(), 1u);

  auto events = log.query();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, EventType::kLinkDown);
  EXPECT_EQ(events[0].end, (EventEnd{kCaC, "hostC mlx5_0", PortNum{1}}));
  ASSERT_TRUE(events[0].remote);
  EXPECT_EQ(*events[0].remote, (EventEnd{kSwitch, "sw", PortNum{3}}));

  const std::size_t askedC = h.pma.count(kPce, 7);
  const std::size_t askedSwitch = h.pma.count(kPce, 1);
  auto gone = h.sweeper->sweep();
  EXPECT_EQ(gone->find({kCaC, PortNum{1}})->status, PortStatus::kGone);
  EXPECT_EQ(gone->find({kSwitch, PortNum{3}})->status, PortStatus::kGone);
  EXPECT_EQ(gone->stats.ports, 4u);
  auto after = h.sweeper->sweep();
  EXPECT_EQ(after->find({kCaC, PortNum{1}}), nullptr);
  EXPECT_EQ(after->find({kSwitch, PortNum{3}}), nullptr);
  EXPECT_EQ(h.pma.count(kPce, 7), askedC);                // CA C: not polled
  EXPECT_EQ(h.pma.count(kPce, 1), askedSwitch + 2 * 2u);  // switch: ports 1 and 2 only

  followTopology(*h.sweeper, log, fabric(true));
  EventQuery since;
  since.sinceId = events.back().id;
  events = log.query(since);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, EventType::kLinkUp);
  EXPECT_EQ(events[0].end.node, kCaC);
  auto back = h.sweeper->sweep();
  EXPECT_EQ(back->find({kCaC, PortNum{1}})->status, PortStatus::kOk);
}

// A cable the SM has not activated (Init): no PMA packet passes it, so its HCA end is not polled
// (no timeouts, no unreachable port of our making); its switch end is.
TEST(CounterSweep, TheHcaEndOfACableNotYetActiveIsNotPolled) {
  Harness h;
  h.sweeper->setTopology(fabric(true, 0, 0, PortState::kInit));
  auto snap = h.sweeper->sweep();
  EXPECT_EQ(snap->find({kCaC, PortNum{1}}), nullptr);
  ASSERT_NE(snap->find({kSwitch, PortNum{3}}), nullptr);
  EXPECT_EQ(snap->find({kSwitch, PortNum{3}})->status, PortStatus::kOk);
  EXPECT_EQ(h.pma.count(kPce, 7), 0u);
  EXPECT_EQ(snap->stats.portsOk, 5u);
  h.sweeper->setTopology(fabric(true));  // activated
  EXPECT_EQ(h.sweeper->sweep()->find({kCaC, PortNum{1}})->status, PortStatus::kOk);
}

// The topology a counters baseline carries (ibnetdiscover text) reads back with the same links:
// a delta against the snapshot it was written from is empty.
TEST(CounterSweep, SavedTopologyTextRoundTripsWithoutChanges) {
  auto topo = fabric(true);
  auto text = formatNetFile(netFabricFromTopology(*topo));
  auto back = topologyFromNetFabric(parseNetText(text, "saved"), "saved");
  TopologyDelta delta(topo, back);
  EXPECT_TRUE(delta.linksRemoved().empty()) << text;
  EXPECT_TRUE(delta.linksAdded().empty()) << text;
  EventLog log;
  appendTopologyEvents(log, delta);
  EXPECT_EQ(log.size(), 0u);
}

TEST(CounterSweep, PortFilter) {
  SweepOptions o;
  o.portFilter = [](const Node& n, const Port& p) { return n.isSwitch() && p.num == PortNum{2}; };
  Harness h(o);
  h.sweeper->setTopology(fabric());
  auto snap = h.sweeper->sweep();
  ASSERT_EQ(snap->ports.size(), 1u);
  EXPECT_EQ(snap->ports[0].key.port, PortNum{2});
  EXPECT_EQ(h.pma.count(kCpi), 1u);
}

TEST(CounterSweep, ClearSaturatedPolicySendsCounterSelect) {
  SweepOptions o;
  o.clearSaturated = true;
  Harness h(o);
  h.pma.narrow[{5, 1}].symbolErrorCounter = 0xFFFF;
  h.pma.narrow[{5, 1}].portXmitWait = 0xFFFFFFFFu;
  h.sweeper->setTopology(fabric());
  auto snap = h.sweeper->sweep();
  EXPECT_EQ(snap->stats.clearRequests, 1u);
  const PortSample* a = snap->find({kCaA, PortNum{1}});
  EXPECT_EQ(a->clearedAfterRead,
            (std::vector<Counter>{Counter::kSymbolErrors, Counter::kXmitWait}));
  std::lock_guard lock(h.pma.mu);
  int sets = 0;
  for (const auto& [lid, hd] : h.pma.asked)
    if (hd.method == static_cast<std::uint8_t>(mad::MadMethod::kSet)) ++sets;
  EXPECT_EQ(sets, 1);
}

// A switch (LID 1) with `n` CAs (LIDs 10, 11, ...) on its ports 1..n: 2n linked ports.
TopologyPtr wideFabric(int n) {
  TopologyBuilder b;
  b.addNode({NodeType::kSwitch, kSwitch, kSwitch, "sw", 0, 0, 0, n});
  auto add = [&](Guid g, int num, int lid) {
    Port p;
    p.num = PortNum(static_cast<std::uint8_t>(num));
    p.lid = Lid(static_cast<std::uint16_t>(lid));
    p.state = PortState::kActive;
    p.physState = PhysPortState::kLinkUp;
    if (num != 0) p.activeRate = k4xHdr;
    b.addPort(g, p);
  };
  for (int i = 1; i <= n; ++i) {
    const Guid ca{0x100000u + static_cast<std::uint64_t>(i)};
    b.addNode({NodeType::kCa, ca, ca, "host" + std::to_string(i) + " mlx5_0", 0, 0, 0, 1});
  }
  for (int p = 0; p <= n; ++p) add(kSwitch, p, 1);
  for (int i = 1; i <= n; ++i) {
    const Guid ca{0x100000u + static_cast<std::uint64_t>(i)};
    add(ca, 1, 9 + i);
    b.connect(kSwitch, PortNum(static_cast<std::uint8_t>(i)), ca, PortNum{1});
  }
  return b.build();
}

void wideCounters(FakePma& pma, int n) {
  for (int i = 1; i <= n; ++i) {
    const auto lid = static_cast<std::uint16_t>(9 + i);
    pma.cpi[lid] = caps(0x1200);
    pma.ext[{lid, 1}].portXmitData = 1000u + static_cast<unsigned>(i);
    pma.narrow[{lid, 1}].symbolErrorCounter = static_cast<std::uint32_t>(i);
    pma.ext[{1, i}].portRcvData = 5000u + static_cast<unsigned>(i);
    pma.narrow[{1, i}].linkDownedCounter = static_cast<std::uint32_t>(i % 7);
  }
}

// sweep(sink) on 120 ports (window 8: slices of 64 requests, 4 slices): the same snapshot as
// sweep(), also for a target whose counter queries time out; every port reaches the sink once.
TEST(CounterSweep, StreamedSweepGivesTheSameSnapshotAndEveryPortOnce) {
  constexpr int kCas = 60;
  Harness batch, streamed;
  for (Harness* h : {&batch, &streamed}) {
    wideCounters(h->pma, kCas);
    h->sweeper->setTopology(wideFabric(kCas));
  }
  std::vector<PortKey> seen;
  const auto sink = [&](const PortSample& s) { seen.push_back(s.key); };
  batch.sweeper->sweep();
  streamed.sweeper->sweep(sink);
  ASSERT_EQ(seen.size(), 2u * kCas);
  // Capabilities are known now: the dead CA's counter queries time out.
  for (Harness* h : {&batch, &streamed}) h->pma.dead.insert(12);
  seen.clear();
  auto a = batch.sweeper->sweep();
  auto b = streamed.sweeper->sweep(sink);

  ASSERT_EQ(a->ports.size(), 2u * kCas);
  ASSERT_EQ(b->ports.size(), a->ports.size());
  for (std::size_t i = 0; i < a->ports.size(); ++i) {
    const PortSample &x = a->ports[i], &y = b->ports[i];
    EXPECT_EQ(x.key, y.key);
    EXPECT_EQ(x.status, y.status) << y.detail;
    EXPECT_EQ(x.detail, y.detail);
    EXPECT_EQ(x.lid, y.lid);
    EXPECT_EQ(x.counters, y.counters);
    EXPECT_EQ(x.remote, y.remote);
    EXPECT_EQ(x.nodeDescription, y.nodeDescription);
  }
  EXPECT_EQ(b->stats.ports, a->stats.ports);
  EXPECT_EQ(b->stats.portsOk, 2u * kCas - 1);
  EXPECT_EQ(b->stats.portsOk, a->stats.portsOk);
  EXPECT_EQ(b->stats.requests, a->stats.requests);
  EXPECT_EQ(b->stats.attempts, a->stats.attempts);
  EXPECT_EQ(b->stats.failedRequests, a->stats.failedRequests);
  ASSERT_EQ(a->failures.size(), 1u);
  ASSERT_EQ(b->failures.size(), 1u);
  EXPECT_EQ(b->failures[0].lid, Lid{12});
  EXPECT_EQ(b->failures[0].requests, a->failures[0].requests);
  EXPECT_EQ(b->failures[0].attempts, a->failures[0].attempts);
  EXPECT_EQ(b->failures[0].failedRequests, a->failures[0].failedRequests);
  EXPECT_EQ(b->failures[0].reason, a->failures[0].reason);

  std::vector<PortKey> keys;
  for (const auto& p : b->ports) keys.push_back(p.key);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, keys);
}

// The hook between slices (setBetweenSlices): 120 ports, 4 slices of 64 requests → called after
// each of the first three slices, with the next slice in the engine, and MADs it runs on the same
// engine are answered; the sweep reads every port as without it.
TEST(CounterSweep, TheCallerRunsItsOwnMadsBetweenSlices) {
  constexpr int kCas = 60;
  Harness h;
  wideCounters(h.pma, kCas);
  h.sweeper->setTopology(wideFabric(kCas));
  h.sweeper->sweep();  // capabilities
  int calls = 0, answered = 0;
  h.sweeper->setBetweenSlices([&] {
    ++calls;
    std::vector<mad::MadRequest> own;
    own.push_back({mad::pmaAddress(Lid{5}), mad::buildClassPortInfoGet(), {}});
    answered += h.engine->run(std::move(own)).front().ok() ? 1 : 0;
  });
  const auto snap = h.sweeper->sweep();
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(answered, 3);
  EXPECT_EQ(snap->stats.portsOk, 2u * kCas);
  h.sweeper->setBetweenSlices({});
  EXPECT_EQ(h.sweeper->sweep()->stats.portsOk, 2u * kCas);
  EXPECT_EQ(calls, 3);
}

// The fake PMA holds back the sweep's last counter query until the sink has seen a port. A sweep
// that handed its ports over only at the end would never release it: the responder gives up
// after 10 s and the test fails.
TEST(CounterSweep, StreamedSweepHandsOverPortsBeforeTheLastQueryIsSent) {
  constexpr int kCas = 60;
  constexpr std::size_t kQueries = 2 * 2 * kCas;  // PortCountersExtended + PortCounters per port
  Harness h;
  wideCounters(h.pma, kCas);
  std::mutex mu;
  std::condition_variable cv;
  bool sunk = false;
  std::size_t counterQueries = 0;
  bool releasedBySink = false;
  const auto inner = h.pma.responder();
  mad::FakeMadTransport transport(
      h.clock, [&](const mad::MadAddress& to, const mad::MadBuffer& req, int index) {
        const auto attr = mad::decodeHeader(req).attributeId;
        if (attr == kPc || attr == kPce) {
          std::unique_lock lock(mu);
          if (++counterQueries == kQueries)
            releasedBySink = cv.wait_for(lock, std::chrono::seconds(10), [&] { return sunk; });
        }
        return inner(to, req, index);
      });
  std::string error;
  ASSERT_TRUE(transport.open(error));
  mad::MadEngineOptions o;
  o.window = 8;
  o.timeout = 50ms;
  mad::MadEngine engine(transport, h.clock, o);
  CounterSweeper sweeper(engine, h.clock);
  sweeper.setTopology(wideFabric(kCas));
  std::size_t ports = 0;
  auto snap = sweeper.sweep([&](const PortSample&) {
    ++ports;
    std::lock_guard lock(mu);
    sunk = true;
    cv.notify_all();
  });
  EXPECT_TRUE(releasedBySink);
  EXPECT_EQ(counterQueries, kQueries);
  EXPECT_EQ(ports, 2u * kCas);
  EXPECT_EQ(snap->stats.portsOk, 2u * kCas);
}

// A plane where nothing answers any more: the slices share one deadline, the engine's batch
// watchdog from the sweep's first send, as one batch would. 120 ports, window 8: 4 slices of 64
// requests; a slice of dead targets needs 8 rounds of 150 ms (50 ms, 2 retries) = 1.2 s > 1 s.
// With a watchdog per slice the sweep took ~3 s and sent every slice.
TEST(CounterSweep, SlicesShareOneDeadline) {
  constexpr int kCas = 60;
  FakePma pma;
  wideCounters(pma, kCas);
  pma.cpi[1] = caps(0x1300);
  mad::FakeClock clock;
  mad::FakeMadTransport transport(clock, pma.responder());
  std::string error;
  ASSERT_TRUE(transport.open(error));
  mad::MadEngineOptions o;
  o.policy = mad::MadPolicy::kFixed;  // Every dead target's requests sent: the deadline decides.
  o.window = 8;
  o.retries = 2;
  o.timeout = 50ms;
  o.batchWatchdog = 1s;
  mad::MadEngine engine(transport, clock, o);
  CounterSweeper sweeper(engine, clock);
  sweeper.setTopology(wideFabric(kCas));
  ASSERT_EQ(sweeper.sweep()->stats.portsOk, 2u * kCas);

  pma.dead.insert(1);
  for (int i = 1; i <= kCas; ++i) pma.dead.insert(static_cast<std::uint16_t>(9 + i));
  auto snap = sweeper.sweep();
  EXPECT_LE(snap->stats.madDuration, 1200ms);
  EXPECT_GE(snap->stats.madDuration, 1s);
  EXPECT_EQ(snap->stats.portsOk, 0u);
  EXPECT_EQ(snap->stats.requests, 4u * kCas);  // every query accounted, sent or not
  EXPECT_EQ(snap->stats.failedRequests, 4u * kCas);
  // The last two slices (56 ports) were never sent: at most two slices' requests went out.
  EXPECT_LE(snap->stats.attempts, 2u * 64u * 3u);
  std::size_t unsent = 0;
  for (const PortSample& p : snap->ports) {
    EXPECT_EQ(p.status, PortStatus::kTimeout) << p.detail;
    if (p.detail.find("after 0 sends") != std::string::npos) ++unsent;
  }
  EXPECT_GE(unsent, 56u);
  EXPECT_EQ(snap->failures.size(), static_cast<std::size_t>(kCas + 1));
}

TEST(CounterSweep, ClearRequestFields) {
  auto m = buildPortCountersClear(3, {Counter::kSymbolErrors, Counter::kXmitData});
  auto h = mad::decodeHeader(m);
  EXPECT_EQ(h.method, static_cast<std::uint8_t>(mad::MadMethod::kSet));
  EXPECT_EQ(h.attributeId, kPc);
  auto v = mad::decodePortCounters(m);
  EXPECT_EQ(v.portSelect, 3);
  EXPECT_EQ(v.counterSelect, (1u << 0) | (1u << 12));
}

TEST(CounterValues, Saturation) {
  CounterValues v;
  v.set(Counter::kLocalLinkIntegrityErrors, 15, 4);
  v.set(Counter::kLinkDowned, 254, 8);
  v.set(Counter::kXmitData, ~0ull, 64);
  EXPECT_TRUE(v.saturated(Counter::kLocalLinkIntegrityErrors));
  EXPECT_FALSE(v.saturated(Counter::kLinkDowned));
  EXPECT_FALSE(v.saturated(Counter::kXmitData));
  EXPECT_FALSE(v.saturated(Counter::kRcvData));  // not read
}

}  // namespace
}  // namespace ibfabric::telemetry
