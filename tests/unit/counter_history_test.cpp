// CounterHistory keeps little per port and judges a window exactly as summing the per-interval
// deltas of whole samples does (summarize, the reference), through gaps, resets, width changes,
// cleared counters and a ring that wraps.
#include "telemetry/counter_history.h"

#include <gtest/gtest.h>

#include <random>

namespace ibfabric::telemetry {
namespace {

using namespace std::chrono_literals;

const PortKey kPort{Guid{0x200000}, PortNum{3}};

struct Series {
  std::vector<CounterSnapshot> sweeps;  // one port each
  std::vector<PortSample> ok;           // its kOk samples, in order
};

// `n` sweeps 10 s (+ jitter) apart: errors rise by small random steps, sometimes a counter
// resets, a sweep fails or the counters' widths change; LinkDowned is 8 bits wide and wraps.
Series randomSeries(std::uint32_t seed, int n) {
  std::mt19937 rng(seed);
  auto chance = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
  Series out;
  CounterValues v;
  int width = 64;
  for (Counter c : kAllCounters) v.set(c, rng() % 1000, c == Counter::kLinkDowned ? 8 : width);
  mad::Clock::time_point at{100s};
  for (int i = 0; i < n; ++i) {
    at += 10s + std::chrono::milliseconds(rng() % 700);
    for (Counter c : kAllCounters) {
      const int bits = c == Counter::kLinkDowned ? 8 : width;
      std::uint64_t next = v.get(c) + (chance(30) ? rng() % 50 : 0);
      if (isErrorCounter(c) && chance(3)) next = rng() % 5;  // reset (or a wrap)
      if (bits < 64) next &= (1ull << bits) - 1;
      v.set(c, next, bits);
    }
    if (chance(2)) {  // a width change: every counter's old value is meaningless
      width = width == 64 ? 32 : 64;
      for (Counter c : kAllCounters)
        if (c != Counter::kLinkDowned) v.set(c, v.get(c) & 0xffffffffu, width);
    }
    PortSample s;
    s.key = kPort;
    s.at = at;
    s.counters = v;
    s.rate = LinkRate{LinkWidth::k4x, LinkSpeed::kHdr};
    s.status = chance(8) ? PortStatus::kTimeout : PortStatus::kOk;
    CounterSnapshot snap;
    snap.ports = {s};
    out.sweeps.push_back(snap);
    if (s.status == PortStatus::kOk) out.ok.push_back(s);
  }
  return out;
}

void expectSameErrors(const PortWindow& got, const PortWindow& want, const std::string& where) {
  EXPECT_EQ(got.linkDownedInFlapWindow, want.linkDownedInFlapWindow) << where;
  EXPECT_EQ(got.resets, want.resets) << where;
  EXPECT_NEAR(got.seconds, want.seconds, 0.01) << where;
  for (Counter c : kAllCounters) {
    if (!isErrorCounter(c)) continue;
    EXPECT_EQ(got.deltas[index(c)], want.deltas[index(c)]) << where << " " << toString(c);
  }
  ASSERT_EQ(got.congestion.has_value(), want.congestion.has_value()) << where;
  if (got.congestion) {
    EXPECT_DOUBLE_EQ(*got.congestion, *want.congestion) << where;
  }
}

TEST(CounterHistory, WindowEqualsSummingWholeSamples) {
  for (std::uint32_t seed = 1; seed <= 40; ++seed) {
    const Series s = randomSeries(seed, 90);
    const std::size_t depth = 64;
    CounterHistory h(depth);
    std::vector<PortSample> kept;
    for (std::size_t i = 0; i < s.sweeps.size(); ++i) {
      h.add(s.sweeps[i]);
      const PortSample& p = s.sweeps[i].ports[0];
      if (p.status != PortStatus::kOk) continue;
      kept.push_back(p);
      if (kept.size() > depth) kept.erase(kept.begin());
      const auto got = h.window(kPort, 300s, 600s);
      ASSERT_TRUE(got.has_value());
      expectSameErrors(*got, summarize(kept, 300s, 600s),
                       "seed " + std::to_string(seed) + " sweep " + std::to_string(i));
    }
  }
}

TEST(CounterHistory, PointsCarryUtilizationAndCongestion) {
  CounterHistory h(8);
  PortSample s;
  s.key = kPort;
  s.rate = LinkRate{LinkWidth::k4x, LinkSpeed::kHdr};  // 200 Gb/s: 25e9 bytes/s
  s.at = mad::Clock::time_point{10s};
  s.counters.set(Counter::kXmitData, 0, 64);
  s.counters.set(Counter::kRcvData, 0, 64);
  s.counters.set(Counter::kXmitWait, 0, 32);
  CounterSnapshot a;
  a.ports = {s};
  h.add(a);
  s.at += 10s;
  s.counters.set(Counter::kXmitData, 25'000'000'000ull * 10 / 4 / 2, 64);  // half the link
  s.counters.set(Counter::kRcvData, 25'000'000'000ull * 10 / 4 / 4, 64);   // a quarter
  CounterSnapshot b;
  b.ports = {s};
  h.add(b);
  const auto p = h.points(kPort);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].seconds, 0.0);
  EXPECT_FALSE(p[0].txUtilization.has_value());
  EXPECT_DOUBLE_EQ(p[1].seconds, 10.0);
  ASSERT_TRUE(p[1].txUtilization && p[1].rxUtilization && p[1].congestion);
  EXPECT_NEAR(*p[1].txUtilization, 0.5, 1e-4);
  EXPECT_NEAR(*p[1].rxUtilization, 0.25, 1e-4);
  EXPECT_EQ(*p[1].congestion, 0.0);
  EXPECT_FALSE(p[1].reset);
}

TEST(CounterHistory, ClearedPortsStartOverAndHoldLittle) {
  const Series s = randomSeries(7, 70);
  CounterHistory h(64);
  for (const auto& snap : s.sweeps) h.add(snap);
  CounterSnapshot next = s.sweeps.back();
  next.ports[0].status = PortStatus::kOk;
  next.ports[0].at += 10s;
  h.add(next, {kPort});
  const auto p = h.points(kPort);
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p.back().seconds, 0.0);  // no interval across the clear
}

TEST(CounterHistory, AQuietPortHoldsAboutAKilobyte) {
  CounterHistory h(64);
  PortSample s;
  s.key = kPort;
  s.at = mad::Clock::time_point{10s};
  for (Counter c : kAllCounters) s.counters.set(c, 5, 64);
  for (int i = 0; i < 100; ++i) {
    s.at += 10s;
    s.counters.set(Counter::kXmitData, 1000u * i, 64);  // traffic, no errors
    CounterSnapshot snap;
    snap.ports = {s};
    h.add(snap);
  }
  EXPECT_EQ(h.points(kPort).size(), 64u);
  // 64 points of 12 bytes and the previous counters; no error deltas.
  EXPECT_LT(h.bytes(), 1200u);
}

TEST(CounterHistory, KeepsTimesAcrossMonthsOfUptime) {
  CounterHistory h(4);
  PortSample s;
  s.key = kPort;
  s.at = mad::Clock::time_point{10s};
  s.counters.set(Counter::kSymbolErrors, 0, 64);
  auto add = [&](std::chrono::nanoseconds after) {
    s.at += after;
    CounterSnapshot snap;
    snap.ports = {s};
    h.add(snap);
  };
  add(0s);
  add(std::chrono::hours(24 * 60));  // past the 32-bit millisecond range
  add(10s);
  const auto p = h.points(kPort);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[2].at, s.at);
  EXPECT_EQ(p[1].at, s.at - 10s);
  EXPECT_DOUBLE_EQ(p[2].seconds, 10.0);
  const auto w = h.window(kPort, 300s, 600s);
  ASSERT_TRUE(w.has_value());
  EXPECT_NEAR(w->seconds, 10.0, 1e-9);
}

}  // namespace
}  // namespace ibfabric::telemetry
