// SweepAnalyzer: rates against the previous sweep (or a baseline), the history, restarted ports,
// ports gone from the topology (skipped: no window, no history, their link not judged), links
// without a polled end dropped, and health events only from the second sweep on.
#include "telemetry/sweep_analysis.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

namespace ibfabric::telemetry {
namespace {

using namespace std::chrono_literals;

constexpr Guid kSw{0x200000};
constexpr Guid kCa1{0x100001};
constexpr Guid kCa2{0x100002};
const PortKey kSw1{kSw, PortNum{1}};
const PortKey kSw2{kSw, PortNum{2}};
const PortKey kHost1{kCa1, PortNum{1}};
const PortKey kHost2{kCa2, PortNum{1}};
const mad::Clock::time_point kT0{1000s};

Port activePort(int num, LinkWidth active = LinkWidth::k4x) {
  Port p;
  p.num = PortNum(static_cast<std::uint8_t>(num));
  p.state = PortState::kActive;
  p.physState = PhysPortState::kLinkUp;
  p.widthEnabled = static_cast<WidthMask>(LinkWidth::k4x) | static_cast<WidthMask>(LinkWidth::k1x);
  p.widthSupported = p.widthEnabled;
  p.speedEnabled = speedBit(LinkSpeed::kHdr);
  p.speedSupported = p.speedEnabled;
  p.activeRate = LinkRate{active, LinkSpeed::kHdr};
  return p;
}

/// A switch with host h1 on port 1 and, when `withHost2`, host h2 on port 2. `host1Width`: the
/// active width of the h1 link (below 4x makes it degraded).
TopologyPtr fabric(bool withHost2, LinkWidth host1Width = LinkWidth::k4x) {
  TopologyBuilder b;
  b.addNode({NodeType::kSwitch, kSw, kSw, "sw", 0, 0, 0, 2});
  b.addNode({NodeType::kCa, kCa1, kCa1, "h1 mlx5_0", 0, 0, 0, 1});
  b.addNode({NodeType::kCa, kCa2, kCa2, "h2 mlx5_0", 0, 0, 0, 1});
  b.addPort(kSw, activePort(1, host1Width));
  b.addPort(kCa1, activePort(1, host1Width));
  b.connect(kSw, PortNum{1}, kCa1, PortNum{1});
  if (withHost2) {
    b.addPort(kSw, activePort(2));
    b.addPort(kCa2, activePort(1));
    b.connect(kSw, PortNum{2}, kCa2, PortNum{1});
  }
  return b.build();
}

PortSample sample(PortKey key, PortStatus status, mad::Clock::time_point at, std::uint64_t data) {
  PortSample s;
  s.key = key;
  s.nodeDescription = key.node == kSw ? "sw" : key.node == kCa1 ? "h1 mlx5_0" : "h2 mlx5_0";
  s.status = status;
  s.at = at;
  if (status == PortStatus::kOk) s.counters.set(Counter::kXmitData, data, 32);
  return s;
}

CounterSnapshotPtr sweep(TopologyPtr topology, std::vector<PortSample> ports) {
  auto snap = std::make_shared<CounterSnapshot>();
  snap->topology = std::move(topology);
  std::sort(ports.begin(), ports.end(),
            [](const PortSample& a, const PortSample& b) { return a.key < b.key; });
  snap->ports = std::move(ports);
  return snap;
}

/// Every port of fabric(true) answering, xmit data `data` at `at`.
CounterSnapshotPtr fullSweep(const TopologyPtr& t, mad::Clock::time_point at, std::uint64_t data) {
  return sweep(
      t, {sample(kSw1, PortStatus::kOk, at, data), sample(kSw2, PortStatus::kOk, at, data),
          sample(kHost1, PortStatus::kOk, at, data), sample(kHost2, PortStatus::kOk, at, data)});
}

std::size_t countOf(const EventLog& log, EventType type) {
  auto ev = log.query();
  return static_cast<std::size_t>(
      std::count_if(ev.begin(), ev.end(), [&](const Event& e) { return e.type == type; }));
}

const LinkHealthReport* linkOf(const SweepAnalysis& a, PortKey end) {
  for (const auto& r : a.health)
    if (r.a == end || r.b == end) return &r;
  return nullptr;
}

TEST(SweepAnalysis, FirstSweepJudgesHealthButRaisesNoHealthEventsAndHasNoRates) {
  CounterHistory history(8);
  EventLog log;
  SweepAnalyzer analyzer(history);
  const auto t = fabric(true, LinkWidth::k1x);  // the h1 link runs below its enabled width
  auto first = analyzer.analyze(fullSweep(t, kT0, 100), log);
  EXPECT_TRUE(first.firstSweep);
  EXPECT_TRUE(first.rates.empty());
  ASSERT_EQ(first.health.size(), 2u);
  ASSERT_NE(linkOf(first, kHost1), nullptr);
  EXPECT_EQ(linkOf(first, kHost1)->state, LinkState::kDegraded);
  EXPECT_EQ(countOf(log, EventType::kLinkDegraded), 0u);

  auto second = analyzer.analyze(fullSweep(t, kT0 + 1s, 1100), log);
  EXPECT_FALSE(second.firstSweep);
  EXPECT_EQ(countOf(log, EventType::kLinkDegraded), 1u);
}

TEST(SweepAnalysis, RatesAgainstThePreviousSweepAndEverySweepInTheHistory) {
  CounterHistory history(8);
  EventLog log;
  SweepAnalyzer analyzer(history);
  const auto t = fabric(true);
  analyzer.analyze(fullSweep(t, kT0, 100), log);
  auto a = analyzer.analyze(fullSweep(t, kT0 + 1s, 1100), log);
  ASSERT_EQ(a.rates.size(), 4u);
  const PortRates first = *a.rates.begin();
  EXPECT_EQ(first.key, kHost1);  // in the snapshot's (key) order
  ASSERT_TRUE(first.txBytesPerSecond.has_value());
  EXPECT_DOUBLE_EQ(*first.txBytesPerSecond, 4000.0);  // 1000 words of 4 bytes in 1 s
  EXPECT_EQ(history.points(kSw2).size(), 2u);
  EXPECT_EQ(a.judged.size(), 4u);
  EXPECT_EQ(analyzer.previous()->ports.front().at, kT0 + 1s);
}

TEST(SweepAnalysis, RestartedPortsGetNoRateAndNoResetEvent) {
  CounterHistory history(8);
  EventLog log;
  SweepAnalyzer analyzer(history);
  const auto t = fabric(true);
  analyzer.analyze(fullSweep(t, kT0, 5000), log);
  // Every counter went backwards; sw port 1 was cleared by us, the others by someone else.
  auto a = analyzer.analyze(fullSweep(t, kT0 + 1s, 10), log, {kSw1});
  EXPECT_EQ(a.rates.size(), 3u);
  EXPECT_TRUE(std::none_of(a.rates.begin(), a.rates.end(),
                           [](const PortRates& r) { return r.key == kSw1; }));
  EXPECT_EQ(countOf(log, EventType::kCounterReset), 3u);
}

TEST(SweepAnalysis, APortGoneFromTheTopologyIsSkipped) {
  CounterHistory history(8);
  EventLog log;
  SweepAnalyzer analyzer(history);
  analyzer.analyze(fullSweep(fabric(true), kT0, 100), log);
  // h2 unlinked: the sweeper lists sw port 2 and h2 once as gone.
  auto a = analyzer.analyze(sweep(fabric(false), {sample(kSw1, PortStatus::kOk, kT0 + 1s, 200),
                                                  sample(kSw2, PortStatus::kGone, kT0 + 1s, 0),
                                                  sample(kHost1, PortStatus::kOk, kT0 + 1s, 200),
                                                  sample(kHost2, PortStatus::kGone, kT0 + 1s, 0)}),
                            log);
  auto judged = [&](PortKey k) { return std::count(a.judged.begin(), a.judged.end(), k); };
  EXPECT_EQ(a.judged.size(), 2u);
  EXPECT_EQ(judged(kSw2), 0);
  EXPECT_EQ(judged(kHost2), 0);
  EXPECT_EQ(judged(kSw1), 1);
  EXPECT_EQ(judged(kHost1), 1);
  EXPECT_TRUE(history.points(kSw2).empty());
  EXPECT_TRUE(history.points(kHost2).empty());
  EXPECT_EQ(a.rates.size(), 2u);
  ASSERT_EQ(a.health.size(), 1u);
  EXPECT_EQ(linkOf(a, kHost2), nullptr);
  EXPECT_EQ(countOf(log, EventType::kPortGone), 2u);
}

TEST(SweepAnalysis, LinksWithoutAPolledEndAreDropped) {
  CounterHistory history(8);
  EventLog log;
  SweepAnalyzer analyzer(history);
  // Only h1's link is swept (a port filter).
  auto a = analyzer.analyze(sweep(fabric(true), {sample(kSw1, PortStatus::kOk, kT0, 1),
                                                 sample(kHost1, PortStatus::kOk, kT0, 1)}),
                            log);
  ASSERT_EQ(a.health.size(), 1u);
  EXPECT_NE(linkOf(a, kHost1), nullptr);
}

TEST(SweepAnalysis, ABaselineIsTheSweepBeforeTheFirst) {
  CounterHistory history(8);
  EventLog log;
  SweepAnalyzer analyzer(history);
  const auto t = fabric(true);
  analyzer.setBaseline(sweep(nullptr, {sample(kHost1, PortStatus::kOk, kT0, 100)}));
  EXPECT_EQ(history.points(kHost1).size(), 1u);
  auto a = analyzer.analyze(fullSweep(t, kT0 + 2s, 2100), log);
  EXPECT_FALSE(a.firstSweep);
  ASSERT_EQ(a.rates.size(), 1u);
  EXPECT_EQ((*a.rates.begin()).key, kHost1);
  EXPECT_DOUBLE_EQ(*(*a.rates.begin()).txBytesPerSecond, 4000.0);
  EXPECT_EQ(history.points(kHost1).size(), 2u);
}

}  // namespace
}  // namespace ibfabric::telemetry
