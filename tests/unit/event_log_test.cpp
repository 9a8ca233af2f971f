// EventLog: ids, bounds, queries, waiting; events from topology deltas and from sweeps; the
// per-port history ring.
#include "telemetry/event_log.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>
#include <thread>

#include "telemetry/counter_history.h"
#include "tests/support/fabrics.h"

namespace ibfabric::telemetry {
namespace {

using namespace std::chrono_literals;

EventEnd end(int port) {
  return {Guid{0x100000}, "h mlx5_0", PortNum(static_cast<std::uint8_t>(port))};
}

TEST(EventLog, MonotonicIdsBoundedAndQueryable) {
  EventLog log(3);
  EXPECT_EQ(log.lastId(), 0u);
  for (int i = 1; i <= 5; ++i)
    log.append(i % 2 ? EventType::kLinkDown : EventType::kLinkUp, end(i), std::nullopt, "x");
  EXPECT_EQ(log.lastId(), 5u);
  EXPECT_EQ(log.size(), 3u);
  EXPECT_EQ(log.dropped(), 2u);
  auto all = log.query();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, 3u);
  EXPECT_EQ(all[2].id, 5u);
  EXPECT_LE(all[0].steadyTime, all[2].steadyTime);
  auto since = log.query({4, {}, 10});
  ASSERT_EQ(since.size(), 1u);
  EXPECT_EQ(since[0].id, 5u);
  auto downs = log.query({0, {EventType::kLinkDown}, 10});
  ASSERT_EQ(downs.size(), 2u);
  EXPECT_EQ(downs[0].end.port, PortNum{3});
  EXPECT_EQ(log.query({0, {}, 1}).size(), 1u);
  EXPECT_TRUE(log.query({9, {}, 10}).empty());
}

TEST(EventLog, WaitForNewer) {
  EventLog log;
  EXPECT_FALSE(log.waitForNewer(0, 10ms));
  std::jthread t([&] {
    std::this_thread::sleep_for(20ms);
    log.append(EventType::kCounterReset, end(1), std::nullopt, "r");
  });
  EXPECT_TRUE(log.waitForNewer(0, 5s));
  t.join();
  EXPECT_TRUE(log.waitForNewer(0, 0ms));
  EXPECT_FALSE(log.waitForNewer(1, 1ms));
}

TEST(EventLog, TypeNamesRoundTrip) {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kEventTypeCount; ++i) {
    auto t = static_cast<EventType>(i);
    EXPECT_FALSE(toString(t).empty()) << "event type " << i << " has no name";
    EXPECT_EQ(parseEventType(toString(t)), t) << toString(t);
    names.insert(toString(t));
  }
  EXPECT_EQ(names.size(), kEventTypeCount) << "two event types share a name";
  EXPECT_FALSE(parseEventType("nope").has_value());
}

// sw[1] -- "h mlx5_0"[1], ports in `state` (LinkUp, no rate).
TopologyPtr pair(bool linked, PortState state = PortState::kActive) {
  Port p;
  p.state = state;
  p.physState = PhysPortState::kLinkUp;
  return testing::switchCaPair(p, linked);
}

TEST(EventLog, LinkDownAndUpFromTopologyDeltas) {
  EventLog log;
  appendTopologyEvents(log, TopologyDelta(pair(true), pair(false)));
  appendTopologyEvents(log, TopologyDelta(pair(false), pair(true)));
  appendTopologyEvents(log, TopologyDelta(pair(true), pair(true, PortState::kInit)));
  auto ev = log.query();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].type, EventType::kLinkDown);
  EXPECT_EQ(ev[1].type, EventType::kLinkUp);
  EXPECT_EQ(ev[2].type, EventType::kLinkDown);
  ASSERT_TRUE(ev[0].remote.has_value());
  // The CA end first (lower level), the switch as the remote end.
  EXPECT_EQ(ev[0].end.node, Guid{0x100000});
  EXPECT_EQ(ev[0].end.description, "h mlx5_0");
  EXPECT_EQ(ev[0].remote->node, Guid{0x200000});
  EXPECT_EQ(ev[0].remote->port, PortNum{1});
}

TEST(EventLog, ACableBackInInitIsUpThenActive) {
  EventLog log;
  appendTopologyEvents(log, TopologyDelta(pair(false), pair(true, PortState::kInit)));
  appendTopologyEvents(
      log, TopologyDelta(pair(true, PortState::kInit), pair(true, PortState::kArmed)));  // no news
  appendTopologyEvents(log, TopologyDelta(pair(true, PortState::kArmed), pair(true)));
  auto ev = log.query();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].type, EventType::kLinkUp);
  EXPECT_NE(ev[0].message.find("not yet Active"), std::string::npos) << ev[0].message;
  EXPECT_EQ(ev[1].type, EventType::kLinkActive);
  EXPECT_EQ(toString(ev[1].type), "link_active");
  // Straight from no cable to Active: one link_up, nothing about activation.
  EventLog direct;
  appendTopologyEvents(direct, TopologyDelta(pair(false), pair(true)));
  ASSERT_EQ(direct.query().size(), 1u);
  EXPECT_EQ(direct.query()[0].type, EventType::kLinkUp);
  EXPECT_EQ(direct.query()[0].message.find("not yet Active"), std::string::npos);
}

TEST(LinkActivity, FromBothEndsStates) {
  using S = PortState;
  using P = PhysPortState;
  EXPECT_EQ(linkActivity(S::kActive, P::kLinkUp, S::kActive, P::kLinkUp), LinkActivity::kActive);
  EXPECT_EQ(linkActivity(S::kActive, P::kLinkUp, S::kInit, P::kLinkUp), LinkActivity::kInit);
  EXPECT_EQ(linkActivity(S::kArmed, P::kLinkUp, S::kArmed, P::kLinkUp), LinkActivity::kInit);
  EXPECT_EQ(linkActivity(S::kDown, P::kPolling, S::kActive, P::kLinkUp), LinkActivity::kDown);
  EXPECT_EQ(linkActivity(S::kDown, P::kLinkUp, S::kInit, P::kLinkUp), LinkActivity::kInit);
  EXPECT_EQ(linkActivity(S::kDown, P::kDisabled, S::kDown, P::kPolling), LinkActivity::kDown);
  EXPECT_EQ(toString(LinkActivity::kInit), "init");
}

PortSample sample(int port, PortStatus st, mad::Clock::time_point at, std::uint64_t data) {
  PortSample s;
  s.key = {Guid{0x200000}, PortNum(static_cast<std::uint8_t>(port))};
  s.nodeDescription = "sw";
  s.status = st;
  s.at = at;
  s.counters.set(Counter::kXmitData, data, 32);
  return s;
}

TEST(HealthEventTracker, UnreachableOnceResetAndGone) {
  EventLog log;
  HealthEventTracker tr;
  const mad::Clock::time_point t0{10s};
  CounterSnapshot s1, s2, s3;
  s1.ports = {sample(1, PortStatus::kOk, t0, 100), sample(2, PortStatus::kTimeout, t0, 0)};
  tr.observeSweep(s1, {}, log);
  s2.ports = {sample(1, PortStatus::kOk, t0 + 1s, 5), sample(2, PortStatus::kTimeout, t0, 0)};
  tr.observeSweep(s2, computeRates(s1, s2), log);
  s3.ports = {sample(1, PortStatus::kGone, t0 + 2s, 0)};
  tr.observeSweep(s3, {}, log);
  auto ev = log.query();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].type, EventType::kPortUnreachable);  // once, not per sweep
  EXPECT_EQ(ev[0].end.port, PortNum{2});
  EXPECT_EQ(ev[1].type, EventType::kCounterReset);
  EXPECT_NE(ev[1].message.find("PortXmitData"), std::string::npos);
  EXPECT_EQ(ev[2].type, EventType::kPortGone);
}

TEST(HealthEventTracker, ASweepThatLosesThePlaneIsNotAnEventPerPort) {
  EventLog log;
  HealthEventTracker tr;
  const mad::Clock::time_point t0{10s};
  CounterSnapshot s1;
  for (int p = 1; p <= 200; ++p) s1.ports.push_back(sample(p, PortStatus::kTimeout, t0, 0));
  tr.observeSweep(s1, {}, log);
  auto ev = log.query();
  ASSERT_EQ(ev.size(), 65u);  // 64 ports, then one for the other 136
  for (const auto& e : ev) EXPECT_EQ(e.type, EventType::kPortUnreachable);
  EXPECT_EQ(ev[63].end.port, PortNum{64});
  EXPECT_EQ(ev[64].end.port, PortNum{65});
  EXPECT_NE(ev[64].message.find("136 more ports"), std::string::npos) << ev[64].message;
  // Still tracked one by one: nothing new next sweep, and a port back then lost is told again.
  CounterSnapshot s2 = s1;
  s2.ports[0].status = PortStatus::kOk;
  tr.observeSweep(s2, {}, log);
  EXPECT_EQ(log.query().size(), 65u);
  tr.observeSweep(s1, {}, log);
  ASSERT_EQ(log.query().size(), 66u);
  EXPECT_EQ(log.query().back().end.port, PortNum{1});
}

TEST(HealthEventTracker, CongestionHighThenClearedAndDegraded) {
  EventLog log;
  HealthEventTracker tr(0.05);
  LinkHealthReport r;
  r.a = {Guid{0x100000}, PortNum{1}};
  r.b = {Guid{0x200000}, PortNum{1}};
  r.state = LinkState::kDegraded;
  r.congestion = 0.5;
  r.reasons.push_back({"congestion", r.b, "congestion 50%"});
  tr.observeHealth({r}, log);
  tr.observeHealth({r}, log);  // no repeat
  r.reasons.clear();
  r.state = LinkState::kOk;
  r.congestion = 0.07;  // below high, above clear: still congested
  tr.observeHealth({r}, log);
  r.congestion = 0.01;
  tr.observeHealth({r}, log);
  auto ev = log.query();
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].type, EventType::kLinkDegraded);
  EXPECT_EQ(ev[1].type, EventType::kCongestionHigh);
  EXPECT_EQ(ev[2].type, EventType::kLinkRecovered);
  EXPECT_EQ(ev[3].type, EventType::kCongestionCleared);
}

TEST(HealthEventTracker, UnreachableTrafficIsItsOwnEventOncePerEpisode) {
  EventLog log;
  HealthEventTracker tr;
  LinkHealthReport r;
  r.a = {Guid{0x100000}, PortNum{1}};
  r.b = {Guid{0x200000}, PortNum{3}};
  r.state = LinkState::kOk;
  r.reasons.push_back({kUnreachableTrafficReason, r.b,
                       "PortRcvSwitchRelayErrors 1804.7/h over 100.0/h: traffic to an "
                       "unreachable destination dropped here (not a fault of this cable)"});
  tr.observeHealth({r}, log);
  tr.observeHealth({r}, log);  // no repeat while it lasts
  auto ev = log.query();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].type, EventType::kUnreachableTraffic);
  EXPECT_EQ(toString(ev[0].type), "unreachable_traffic");
  EXPECT_EQ(ev[0].end.port, PortNum{3});
  r.reasons.clear();
  tr.observeHealth({r}, log);
  EXPECT_EQ(log.query().size(), 1u);  // no degraded, no recovered, no error_threshold
}

TEST(CounterHistory, KeepsTheLastNPerPort) {
  CounterHistory h(3);
  const mad::Clock::time_point t0{10s};
  for (int i = 0; i < 5; ++i) {
    CounterSnapshot s;
    s.ports = {sample(1, PortStatus::kOk, t0 + std::chrono::seconds(i), 10u * i),
               sample(2, i == 4 ? PortStatus::kTimeout : PortStatus::kOk, t0, 0)};
    h.add(s);
  }
  auto p1 = h.points({Guid{0x200000}, PortNum{1}});
  ASSERT_EQ(p1.size(), 3u);
  EXPECT_EQ(p1[0].at, t0 + 2s);
  EXPECT_EQ(p1[2].at, t0 + 4s);
  EXPECT_DOUBLE_EQ(p1[2].seconds, 1.0);
  EXPECT_EQ(h.points({Guid{0x200000}, PortNum{2}}).size(), 3u);  // the timeout is a gap
  CounterSnapshot gone;
  gone.ports = {sample(1, PortStatus::kGone, t0, 0)};
  h.add(gone);
  EXPECT_TRUE(h.points({Guid{0x200000}, PortNum{1}}).empty());
  EXPECT_EQ(h.ports().size(), 1u);
}

}  // namespace
}  // namespace ibfabric::telemetry
