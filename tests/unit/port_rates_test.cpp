// Port rates: x4 bytes, utilization against several link rates, congestion clamp, saturation
// and resets.
#include "telemetry/port_rates.h"

#include "telemetry/rates_table.h"

#include <gtest/gtest.h>

namespace ibfabric::telemetry {
namespace {

using namespace std::chrono_literals;

PortSample sample(mad::Clock::time_point at, std::optional<LinkRate> rate = std::nullopt) {
  PortSample s;
  s.key = {Guid{0x100000}, PortNum{1}};
  s.at = at;
  s.rate = rate;
  return s;
}

const mad::Clock::time_point t0{std::chrono::seconds(100)};

TEST(PortRates, DataCountersCountFourOctetUnits) {
  auto a = sample(t0);
  auto b = sample(t0 + 2s);
  a.counters.set(Counter::kXmitData, 1000, 64);
  b.counters.set(Counter::kXmitData, 3000, 64);
  a.counters.set(Counter::kRcvData, 10, 64);
  b.counters.set(Counter::kRcvData, 10, 64);
  a.counters.set(Counter::kXmitPkts, 5, 64);
  b.counters.set(Counter::kXmitPkts, 25, 64);
  auto r = computeRates(a, b);
  EXPECT_DOUBLE_EQ(r.intervalSeconds, 2.0);
  EXPECT_EQ(r[Counter::kXmitData].delta, 2000u);
  EXPECT_DOUBLE_EQ(*r.txBytesPerSecond, 4000.0);  // 2000 words x 4 / 2 s
  EXPECT_DOUBLE_EQ(*r.rxBytesPerSecond, 0.0);
  EXPECT_DOUBLE_EQ(*r.txPacketsPerSecond, 10.0);
  EXPECT_FALSE(r.rxPacketsPerSecond.has_value());  // not read
  EXPECT_FALSE(r.txUtilization.has_value());       // no link rate
}

struct UtilCase {
  LinkRate rate;
  double dataGbps;
};

TEST(PortRates, UtilizationAgainstDataRate) {
  const UtilCase cases[] = {
      {{LinkWidth::k1x, LinkSpeed::kSdr}, 2.0},    // 2.5 Gb/s, 8b/10b
      {{LinkWidth::k4x, LinkSpeed::kQdr}, 32.0},   // 4 x 10, 8b/10b
      {{LinkWidth::k4x, LinkSpeed::kHdr}, 200.0},  // 4 x 50
      {{LinkWidth::k2x, LinkSpeed::kNdr}, 200.0},  // 2 x 100
  };
  for (const auto& c : cases) {
    auto a = sample(t0, c.rate);
    auto b = sample(t0 + 1s, c.rate);
    // Half the data rate in one second: bytes = Gb/s * 1e9 / 8 / 2, in 4-byte words.
    const auto words = static_cast<std::uint64_t>(c.dataGbps * 1e9 / 8 / 2 / 4);
    a.counters.set(Counter::kXmitData, 0, 64);
    b.counters.set(Counter::kXmitData, words, 64);
    a.counters.set(Counter::kRcvData, 0, 64);
    b.counters.set(Counter::kRcvData, words / 4, 64);
    auto r = computeRates(a, b);
    ASSERT_TRUE(r.txUtilization.has_value()) << c.rate.toString();
    EXPECT_NEAR(*r.txUtilization, 0.5, 1e-9) << c.rate.toString();
    EXPECT_NEAR(*r.rxUtilization, 0.125, 1e-9) << c.rate.toString();
  }
  // EDR signals at 25.78125 Gb/s per lane; 64b/66b leaves 25 Gb/s of data.
  LinkRate edr{LinkWidth::k4x, LinkSpeed::kEdr};
  auto a = sample(t0, edr);
  auto b = sample(t0 + 1s, edr);
  a.counters.set(Counter::kXmitData, 0, 64);
  b.counters.set(Counter::kXmitData, 3'000'000'000ull, 64);  // 12 GB/s = 96 Gb/s
  EXPECT_NEAR(*computeRates(a, b).txUtilization, 96.0 / 100.0, 1e-9);
}

TEST(PortRates, CongestionFromXmitWaitIsClamped) {
  auto a = sample(t0);
  auto b = sample(t0 + 1s);
  a.counters.set(Counter::kXmitWait, 1000, 32);
  b.counters.set(Counter::kXmitWait, 1000 + 31'250'000, 32);  // 0.25 s of 8 ns ticks
  auto r = computeRates(a, b);
  EXPECT_NEAR(*r.congestion, 0.25, 1e-12);
  RateOptions slow;
  slow.xmitWaitTick = 1us;  // the same count is now 31 s of waiting in 1 s
  EXPECT_DOUBLE_EQ(*computeRates(a, b, slow).congestion, 1.0);
  b.counters.set(Counter::kXmitWait, 1000, 32);
  EXPECT_DOUBLE_EQ(*computeRates(a, b).congestion, 0.0);
}

TEST(PortRates, CongestionUsesTheDevicesTickWhenItToldUs) {
  auto a = sample(t0);
  auto b = sample(t0 + 1s);
  a.counters.set(Counter::kXmitWait, 0, 32);
  b.counters.set(Counter::kXmitWait, 100'000'000, 32);
  b.xmitWaitTickSeconds = 1e-9;  // from PortSamplesControl
  auto r = computeRates(a, b);
  EXPECT_NEAR(*r.congestion, 0.1, 1e-12);  // 1e8 x 1 ns in 1 s, not 1e8 x 8 ns
  EXPECT_TRUE(r.xmitWaitTickFromDevice);
  EXPECT_DOUBLE_EQ(r.xmitWaitTickSeconds, 1e-9);
  b.xmitWaitTickSeconds = 0;  // the device did not say: the configured default
  r = computeRates(a, b);
  EXPECT_NEAR(*r.congestion, 0.8, 1e-12);
  EXPECT_FALSE(r.xmitWaitTickFromDevice);
  EXPECT_DOUBLE_EQ(r.xmitWaitTickSeconds, 8e-9);
}

TEST(PortRates, XmitWaitTickFromPortSamplesControl) {
  // (Tick + 1) symbol times; a symbol time is one byte on one lane: 4 ns at SDR, 1 ns at QDR,
  // 0.16 ns at HDR (50 Gb/s per lane), whatever the width.
  EXPECT_NEAR(xmitWaitTickSeconds(0, LinkRate{LinkWidth::k1x, LinkSpeed::kSdr}, false), 4e-9,
              1e-15);
  EXPECT_NEAR(xmitWaitTickSeconds(0, LinkRate{LinkWidth::k4x, LinkSpeed::kSdr}, false), 4e-9,
              1e-15);
  EXPECT_NEAR(xmitWaitTickSeconds(7, LinkRate{LinkWidth::k4x, LinkSpeed::kQdr}, false), 8e-9,
              1e-15);
  EXPECT_NEAR(xmitWaitTickSeconds(31, LinkRate{LinkWidth::k4x, LinkSpeed::kHdr}, false), 5.12e-9,
              1e-15);
  // Devices that count bytes of the whole port (NVIDIA Quantum, Tick 7): 8 bytes over 4 lanes.
  EXPECT_NEAR(xmitWaitTickSeconds(7, LinkRate{LinkWidth::k4x, LinkSpeed::kHdr}, true), 0.32e-9,
              1e-15);
  EXPECT_EQ(xmitWaitTickSeconds(7, std::nullopt, false), 0.0);  // no rate: unknown
  EXPECT_TRUE(countsXmitWaitPerPortBytes(0x02c9, 0xd2f2));
  EXPECT_FALSE(countsXmitWaitPerPortBytes(0x02c9, 0xcf08));  // Switch-IB 2: per lane
  EXPECT_FALSE(countsXmitWaitPerPortBytes(0x1234, 0xd2f2));
}

TEST(PortRates, SaturatedCounterIsUnknownNotZero) {
  auto a = sample(t0);
  auto b = sample(t0 + 1s);
  a.counters.set(Counter::kXmitData, 0xFFFFFFFFu, 32);
  b.counters.set(Counter::kXmitData, 0xFFFFFFFFu, 32);
  a.counters.set(Counter::kSymbolErrors, 100, 16);
  b.counters.set(Counter::kSymbolErrors, 0xFFFF, 16);
  auto r = computeRates(a, b);
  EXPECT_EQ(r[Counter::kXmitData].state, DeltaState::kUnknown);
  EXPECT_TRUE(r[Counter::kXmitData].saturated);
  EXPECT_FALSE(r.txBytesPerSecond.has_value());
  EXPECT_EQ(r[Counter::kSymbolErrors].state, DeltaState::kUnknown);
  EXPECT_EQ(r.saturated(), (std::vector<Counter>{Counter::kXmitData, Counter::kSymbolErrors}));
  // A 64-bit counter at its maximum is a value, not saturation.
  a.counters.set(Counter::kRcvData, ~0ull - 10, 64);
  b.counters.set(Counter::kRcvData, ~0ull, 64);
  EXPECT_EQ(computeRates(a, b)[Counter::kRcvData].delta, 10u);
}

TEST(PortRates, CounterGoingBackwardsIsAResetWithoutSpike) {
  auto a = sample(t0);
  auto b = sample(t0 + 1s);
  a.counters.set(Counter::kXmitData, 3'000'000'000u, 32);  // PerfMgr clears at 75% of width
  b.counters.set(Counter::kXmitData, 1000, 32);
  a.counters.set(Counter::kLinkDowned, 9, 8);
  b.counters.set(Counter::kLinkDowned, 0, 8);
  auto r = computeRates(a, b);
  EXPECT_EQ(r[Counter::kXmitData].state, DeltaState::kReset);
  EXPECT_FALSE(r.txBytesPerSecond.has_value());
  EXPECT_EQ(r.resets(), (std::vector<Counter>{Counter::kXmitData, Counter::kLinkDowned}));
  // The next interval counts from the new baseline.
  auto c = sample(t0 + 2s);
  c.counters.set(Counter::kXmitData, 1250, 32);
  c.counters.set(Counter::kLinkDowned, 0, 8);
  auto r2 = computeRates(b, c);
  EXPECT_DOUBLE_EQ(*r2.txBytesPerSecond, 1000.0);
  EXPECT_TRUE(r2.resets().empty());
}

TEST(PortRates, OurOwnClearCountsFromZero) {
  auto a = sample(t0);
  auto b = sample(t0 + 1s);
  a.counters.set(Counter::kSymbolErrors, 0xFFFF, 16);
  a.clearedAfterRead = {Counter::kSymbolErrors};
  b.counters.set(Counter::kSymbolErrors, 5, 16);
  auto r = computeRates(a, b);
  EXPECT_EQ(r[Counter::kSymbolErrors].state, DeltaState::kOk);
  EXPECT_EQ(r[Counter::kSymbolErrors].delta, 5u);
}

TEST(PortRates, ErrorRatesForEveryErrorCounter) {
  auto a = sample(t0);
  auto b = sample(t0 + 4s);
  std::uint64_t n = 1;
  for (Counter c : kAllCounters) {
    if (!isErrorCounter(c)) continue;
    a.counters.set(c, 1, narrowWidth(c));
    b.counters.set(c, 1 + 4 * n, narrowWidth(c));
    n = n % 3 + 1;
  }
  auto r = computeRates(a, b);
  n = 1;
  int errors = 0;
  for (Counter c : kAllCounters) {
    if (!isErrorCounter(c)) continue;
    ++errors;
    EXPECT_EQ(r[c].delta, 4 * n) << toString(c);
    EXPECT_DOUBLE_EQ(r[c].perSecond, static_cast<double>(n)) << toString(c);
    n = n % 3 + 1;
  }
  EXPECT_EQ(errors, 12);
}

TEST(PortRates, NoRatesUnlessBothSamplesOk) {
  auto a = sample(t0);
  auto b = sample(t0 + 1s);
  a.counters.set(Counter::kXmitData, 1, 64);
  b.counters.set(Counter::kXmitData, 2, 64);
  b.status = PortStatus::kTimeout;
  auto r = computeRates(a, b);
  EXPECT_EQ(r[Counter::kXmitData].state, DeltaState::kUnknown);
  EXPECT_FALSE(r.txBytesPerSecond.has_value());
}

TEST(PortRates, SnapshotsPairPortsByKey) {
  CounterSnapshot s1, s2;
  auto a = sample(t0);
  a.counters.set(Counter::kRcvData, 0, 64);
  auto b = sample(t0 + 1s);
  b.counters.set(Counter::kRcvData, 25, 64);
  s1.ports = {a};
  auto gone = b;
  gone.key.port = PortNum{2};
  gone.status = PortStatus::kGone;
  s2.ports = {b, gone};
  auto rates = computeRates(s1, s2);
  ASSERT_EQ(rates.size(), 1u);
  EXPECT_DOUBLE_EQ(*rates.find(a.key)->rxBytesPerSecond, 100.0);
  EXPECT_TRUE(computeRates(s1, s2, {}, {a.key}).empty());  // asked to skip it
}

}  // namespace
}  // namespace ibfabric::telemetry
