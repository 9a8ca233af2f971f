// RatesTable: a compact table rebuilds exactly the PortRates it was given, finds by key, and
// refuses repeated or unordered keys.
#include "telemetry/rates_table.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

namespace ibfabric::telemetry {
namespace {

using namespace std::chrono_literals;

void expectSame(const PortRates& a, const PortRates& b) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.intervalSeconds, b.intervalSeconds);
  for (Counter c : kAllCounters) {
    SCOPED_TRACE(std::string(ibName(c)));
    EXPECT_EQ(a[c].state, b[c].state);
    EXPECT_EQ(a[c].saturated, b[c].saturated);
    EXPECT_EQ(a[c].delta, b[c].delta);
    EXPECT_EQ(a[c].perSecond, b[c].perSecond);  // bit for bit, not nearly
  }
  EXPECT_EQ(a.txBytesPerSecond, b.txBytesPerSecond);
  EXPECT_EQ(a.rxBytesPerSecond, b.rxBytesPerSecond);
  EXPECT_EQ(a.txPacketsPerSecond, b.txPacketsPerSecond);
  EXPECT_EQ(a.rxPacketsPerSecond, b.rxPacketsPerSecond);
  EXPECT_EQ(a.txUtilization, b.txUtilization);
  EXPECT_EQ(a.rxUtilization, b.rxUtilization);
  EXPECT_EQ(a.congestion, b.congestion);
  EXPECT_EQ(a.xmitWaitTickSeconds, b.xmitWaitTickSeconds);
  EXPECT_EQ(a.xmitWaitTickFromDevice, b.xmitWaitTickFromDevice);
}

// Rates of random counter pairs, as a sweep computes them: ok, reset, saturated, unread.
std::vector<PortRates> randomRates(std::mt19937_64& rng, int ports) {
  std::vector<PortRates> out;
  const mad::Clock::time_point t0{std::chrono::seconds(1000)};
  for (int i = 0; i < ports; ++i) {
    PortSample a, b;
    a.key = b.key = {Guid{0x7000 + static_cast<std::uint64_t>(rng() % 4000) * 64}, PortNum{0}};
    a.key.port = b.key.port = PortNum{static_cast<std::uint8_t>(1 + i % 40)};
    a.at = t0;
    b.at = t0 + std::chrono::microseconds(1 + rng() % 20'000'000);
    if (rng() % 2) a.rate = b.rate = LinkRate{LinkWidth::k4x, LinkSpeed::kHdr};
    if (rng() % 3 == 0) b.xmitWaitTickSeconds = 1e-9 * static_cast<double>(1 + rng() % 100);
    for (Counter c : kAllCounters) {
      const int bits = rng() % 2 ? 64 : 32;
      const std::uint64_t max = bits == 64 ? ~0ull : (1ull << bits) - 1;
      if (rng() % 10 == 0) continue;  // not read
      const std::uint64_t old = rng() % (max / 2);
      std::uint64_t now = old + rng() % (max / 4);
      if (rng() % 10 == 0) now = old / 2;  // reset
      if (rng() % 20 == 0) now = max;      // saturated
      a.counters.set(c, old, bits);
      b.counters.set(c, now, bits);
    }
    if (rng() % 5 == 0) a.clearedAfterRead = {Counter::kSymbolErrors, Counter::kXmitWait};
    out.push_back(computeRates(a, b, {std::chrono::nanoseconds(1 + rng() % 16)}));
  }
  return out;
}

TEST(RatesTable, RebuildsEveryRateExactly) {
  std::mt19937_64 rng(17);
  auto rates = randomRates(rng, 500);
  std::sort(rates.begin(), rates.end(),
            [](const PortRates& a, const PortRates& b) { return a.key < b.key; });
  rates.erase(std::unique(rates.begin(), rates.end(),
                          [](const PortRates& a, const PortRates& b) { return a.key == b.key; }),
              rates.end());
  std::vector<PortRates> shuffled = rates;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  const RatesTable table(shuffled);
  ASSERT_EQ(table.size(), rates.size());
  std::size_t i = 0;
  for (const PortRates& r : table) {  // key order
    SCOPED_TRACE(i);
    expectSame(r, rates[i++]);
  }
  for (const PortRates& r : rates) {
    auto found = table.find(r.key);
    ASSERT_TRUE(found);
    expectSame(*found, r);
  }
  EXPECT_FALSE(table.find({Guid{1}, PortNum{1}}));
  EXPECT_LE(table.bytes(), rates.size() * 256);  // vs ~560 bytes a PortRates
}

TEST(RatesTable, KeysAreUniqueAndAppendedInOrder) {
  PortRates a, b;
  a.key = {Guid{1}, PortNum{1}};
  b.key = {Guid{1}, PortNum{2}};
  EXPECT_THROW(RatesTable({a, b, a}), std::invalid_argument);
  RatesTable t;
  t.append(a);
  t.append(b);
  EXPECT_THROW(t.append(a), std::invalid_argument);
  EXPECT_THROW(t.append(b), std::invalid_argument);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_TRUE(t.contains(b.key));
}

}  // namespace
}  // namespace ibfabric::telemetry
