// Link health from counters: flapping window, error thresholds as rates, congestion, degraded
// rate from discovery, down ports.
#include "telemetry/link_health_eval.h"

#include <gtest/gtest.h>

#include "tests/support/fabrics.h"

namespace ibfabric::telemetry {
namespace {

using namespace std::chrono_literals;

constexpr Guid kSw = testing::kPairSwitch;
constexpr Guid kCa = testing::kPairCa;
const PortKey kSwPort{kSw, PortNum{1}};
const PortKey kCaPort{kCa, PortNum{1}};

// sw[1] -- "h mlx5_0"[1], both ends enabling 1x|4x HDR and running `active` HDR.
TopologyPtr pair(LinkWidth active = LinkWidth::k4x, PortState state = PortState::kActive) {
  Port p;
  p.state = state;
  p.physState = PhysPortState::kLinkUp;
  p.widthEnabled = static_cast<WidthMask>(LinkWidth::k4x) | static_cast<WidthMask>(LinkWidth::k1x);
  p.widthSupported = p.widthEnabled;
  p.speedEnabled = speedBit(LinkSpeed::kHdr);
  p.speedSupported = p.speedEnabled;
  p.activeRate = LinkRate{active, LinkSpeed::kHdr};
  return testing::switchCaPair(p);
}

// Samples of one port every `step`, with LinkDowned and SymbolErrors as given per sample.
std::vector<PortSample> series(PortKey key, const std::vector<std::uint64_t>& linkDowned,
                               const std::vector<std::uint64_t>& symbols,
                               std::chrono::seconds step) {
  std::vector<PortSample> out;
  const mad::Clock::time_point t0{1000s};
  for (std::size_t i = 0; i < linkDowned.size(); ++i) {
    PortSample s;
    s.key = key;
    s.at = t0 + step * static_cast<int>(i);
    s.counters.set(Counter::kLinkDowned, linkDowned[i], 8);
    s.counters.set(Counter::kSymbolErrors, symbols[i], 16);
    s.counters.set(Counter::kXmitWait, 0, 32);
    out.push_back(s);
  }
  return out;
}

std::vector<LinkHealthReport> judge(const TopologyPtr& t, const PortWindow* sw,
                                    const HealthThresholds& th = HealthThresholds::defaults()) {
  return evaluateLinkHealth(
      *t, [&](PortKey k) { return k == kSwPort ? sw : nullptr; }, th);
}

TEST(LinkHealthEval, QuietLinkIsOk) {
  auto w = summarize(series(kSwPort, {0, 0, 0}, {0, 0, 0}, 10s), 300s, 600s);
  auto r = judge(pair(), &w);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].state, LinkState::kOk);
  EXPECT_TRUE(r[0].reasons.empty());
  EXPECT_EQ(r[0].a, kCaPort);  // the CA end first
}

TEST(LinkHealthEval, FlappingCountsLinkDownedWithinTheWindowOnly) {
  // +1 at 0-60 s, +1 at 60-120 s, then quiet: two increments.
  auto samples = series(kSwPort, {0, 1, 2, 2, 2}, {0, 0, 0, 0, 0}, 60s);
  auto inWindow = summarize(samples, 300s, 600s);
  EXPECT_EQ(inWindow.linkDownedInFlapWindow, 2u);
  HealthThresholds th = HealthThresholds::defaults();
  th.errorsPerHour[index(Counter::kLinkDowned)] = 0;  // judge flapping alone
  auto r = judge(pair(), &inWindow, th);
  EXPECT_EQ(r[0].state, LinkState::kFaulty);
  ASSERT_FALSE(r[0].reasons.empty());
  EXPECT_EQ(r[0].reasons[0].code, "flapping");
  // With a 150 s flap window only the last intervals count: no increment there.
  auto outside = summarize(samples, 300s, 150s);
  EXPECT_EQ(outside.linkDownedInFlapWindow, 0u);
  EXPECT_EQ(judge(pair(), &outside, th)[0].state, LinkState::kOk);
  // A reset of LinkDowned in the window is not an increment.
  auto reset = summarize(series(kSwPort, {5, 0, 1}, {0, 0, 0}, 60s), 300s, 600s);
  EXPECT_EQ(reset.linkDownedInFlapWindow, 1u);
  EXPECT_EQ(reset.resets, 1u);
}

TEST(LinkHealthEval, ErrorRateOverThresholdIsFaulty) {
  // 3 symbol errors in 10 minutes = 18/h > 10/h.
  auto w = summarize(series(kSwPort, {0, 0, 0}, {0, 1, 3}, 300s), 600s, 600s);
  ASSERT_TRUE(w.perHour(Counter::kSymbolErrors).has_value());
  EXPECT_DOUBLE_EQ(*w.perHour(Counter::kSymbolErrors), 18.0);
  auto r = judge(pair(), &w);
  EXPECT_EQ(r[0].state, LinkState::kFaulty);
  EXPECT_EQ(r[0].reasons[0].code, "errors");
  EXPECT_NE(r[0].reasons[0].text.find("SymbolErrorCounter"), std::string::npos);
  // 1 in 10 minutes = 6/h: under the threshold.
  auto quiet = summarize(series(kSwPort, {0, 0, 0}, {0, 0, 1}, 300s), 600s, 600s);
  EXPECT_EQ(judge(pair(), &quiet)[0].state, LinkState::kOk);
}

TEST(LinkHealthEval, DiscardsOverThresholdOnlyDegrade) {
  PortWindow w;
  w.key = kSwPort;
  w.seconds = 60;
  w.deltas[index(Counter::kXmitDiscards)] = 10;  // 600/h > 100/h
  auto r = judge(pair(), &w);
  EXPECT_EQ(r[0].state, LinkState::kDegraded);
}

TEST(LinkHealthEval, SwitchRelayErrorsAreUnreachableTrafficNotACableFault) {
  PortWindow w;
  w.key = kSwPort;
  w.seconds = 60;
  w.deltas[index(Counter::kRcvSwitchRelayErrors)] = 30;  // 1800/h > 100/h
  auto r = judge(pair(), &w);
  EXPECT_EQ(r[0].state, LinkState::kOk);
  ASSERT_EQ(r[0].reasons.size(), 1u);
  EXPECT_EQ(r[0].reasons[0].code, kUnreachableTrafficReason);
  EXPECT_EQ(r[0].reasons[0].port, kSwPort);
  EXPECT_NE(r[0].reasons[0].text.find("PortRcvSwitchRelayErrors 1800.0/h"), std::string::npos)
      << r[0].reasons[0].text;
  // With a real integrity fault beside it, the link is judged on that alone.
  w.deltas[index(Counter::kSymbolErrors)] = 5;  // 300/h
  r = judge(pair(), &w);
  EXPECT_EQ(r[0].state, LinkState::kFaulty);
  ASSERT_EQ(r[0].reasons.size(), 2u);
}

TEST(LinkHealthEval, DiscardsOnADownLinkAreUnreachableTraffic) {
  PortWindow w;
  w.key = kSwPort;
  w.seconds = 60;
  w.deltas[index(Counter::kXmitDiscards)] = 10;
  auto r = judge(pair(LinkWidth::k4x, PortState::kDown), &w);
  EXPECT_EQ(r[0].state, LinkState::kDown);
  ASSERT_EQ(r[0].reasons.size(), 3u);  // both ends down, then the discards
  EXPECT_EQ(r[0].reasons[2].code, kUnreachableTrafficReason);
  EXPECT_TRUE(isRoutingSymptom(Counter::kRcvSwitchRelayErrors, false));
  EXPECT_TRUE(isRoutingSymptom(Counter::kXmitDiscards, true));
  EXPECT_FALSE(isRoutingSymptom(Counter::kXmitDiscards, false));
  EXPECT_FALSE(isRoutingSymptom(Counter::kSymbolErrors, true));
}

TEST(LinkHealthEval, CongestionOverThresholdDegrades) {
  PortWindow w;
  w.key = kSwPort;
  w.congestion = 0.4;
  auto r = judge(pair(), &w);
  EXPECT_EQ(r[0].state, LinkState::kDegraded);
  EXPECT_EQ(r[0].reasons[0].code, "congestion");
  EXPECT_DOUBLE_EQ(*r[0].congestion, 0.4);
  w.congestion = 0.01;
  EXPECT_EQ(judge(pair(), &w)[0].state, LinkState::kOk);
}

TEST(LinkHealthEval, BelowEnabledWidthFromDiscoveryDegrades) {
  auto r = judge(pair(LinkWidth::k1x), nullptr);
  EXPECT_EQ(r[0].state, LinkState::kDegraded);
  ASSERT_FALSE(r[0].reasons.empty());
  EXPECT_EQ(r[0].reasons[0].code, "below-enabled");
}

TEST(LinkHealthEval, PortNotActiveIsDown) {
  auto r = judge(pair(LinkWidth::k4x, PortState::kDown), nullptr);
  EXPECT_EQ(r[0].state, LinkState::kDown);
  EXPECT_EQ(r[0].reasons[0].code, "down");
}

TEST(LinkHealthEval, DefaultsFollowIbqueryerrors) {
  auto t = HealthThresholds::defaults();
  EXPECT_EQ(t.errorsPerHour[index(Counter::kSymbolErrors)], 10);
  EXPECT_EQ(t.errorsPerHour[index(Counter::kXmitDiscards)], 100);
  EXPECT_EQ(t.errorsPerHour[index(Counter::kXmitData)], 0);
  int checked = 0;
  for (Counter c : kAllCounters) checked += t.errorsPerHour[index(c)] > 0;
  EXPECT_EQ(checked, 12);
}

}  // namespace
}  // namespace ibfabric::telemetry
