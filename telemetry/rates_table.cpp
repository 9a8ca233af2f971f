#include "telemetry/rates_table.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace ibfabric::telemetry {
namespace {

static_assert(kCounterCount * 3 <= 64, "a counter's state and saturation take 3 bits");
constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

// The derived values, in the order Entry::derived keeps them.
constexpr std::array<std::optional<double> PortRates::*, 7> kDerived = {
    &PortRates::txBytesPerSecond,   &PortRates::rxBytesPerSecond, &PortRates::txPacketsPerSecond,
    &PortRates::rxPacketsPerSecond, &PortRates::txUtilization,    &PortRates::rxUtilization,
    &PortRates::congestion,
};

std::string describe(PortKey key) { return toString(key.node) + "/" + toString(key.port); }

}  // namespace

RatesTable::RatesTable(const std::vector<PortRates>& rates) {
  entries_.reserve(rates.size());
  for (const PortRates& r : rates) entries_.push_back(encode(r));
  std::sort(entries_.begin(), entries_.end(),
            [](const Entry& a, const Entry& b) { return a.key < b.key; });
  auto repeated = std::adjacent_find(entries_.begin(), entries_.end(),
                                     [](const Entry& a, const Entry& b) { return a.key == b.key; });
  if (repeated != entries_.end())
    throw std::invalid_argument("rates table: port " + describe(repeated->key) + " given twice");
}

void RatesTable::append(const PortRates& rates) {
  if (!entries_.empty() && !(entries_.back().key < rates.key))
    throw std::invalid_argument("rates table: port " + describe(rates.key) + " out of order");
  entries_.push_back(encode(rates));
}

std::optional<PortRates> RatesTable::find(PortKey key) const {
  const Entry* e = locate(key);
  if (!e) return std::nullopt;
  return decode(*e);
}

const RatesTable::Entry* RatesTable::locate(PortKey key) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const Entry& e, const PortKey& k) { return e.key < k; });
  return it != entries_.end() && it->key == key ? &*it : nullptr;
}

PortRates RatesTable::const_iterator::operator*() const { return decode(*at_); }

RatesTable::Entry RatesTable::encode(const PortRates& r) {
  Entry e;
  e.key = r.key;
  e.intervalSeconds = r.intervalSeconds;
  e.xmitWaitTickSeconds = r.xmitWaitTickSeconds;
  e.xmitWaitTickFromDevice = r.xmitWaitTickFromDevice;
  for (std::size_t i = 0; i < kCounterCount; ++i) {
    const CounterDelta& d = r.counters[i];
    e.deltas[i] = d.delta;
    e.states |= static_cast<std::uint64_t>(d.state) << (2 * i);
    if (d.saturated) e.states |= std::uint64_t{1} << (2 * kCounterCount + i);
  }
  for (std::size_t i = 0; i < kDerived.size(); ++i) e.derived[i] = (r.*kDerived[i]).value_or(kNone);
  return e;
}

PortRates RatesTable::decode(const Entry& e) {
  PortRates r;
  r.key = e.key;
  r.intervalSeconds = e.intervalSeconds;
  r.xmitWaitTickSeconds = e.xmitWaitTickSeconds;
  r.xmitWaitTickFromDevice = e.xmitWaitTickFromDevice;
  for (std::size_t i = 0; i < kCounterCount; ++i) {
    CounterDelta& d = r.counters[i];
    d.state = static_cast<DeltaState>((e.states >> (2 * i)) & 3);
    d.saturated = ((e.states >> (2 * kCounterCount + i)) & 1) != 0;
    d.delta = e.deltas[i];
    // As counterDelta() computes it: only an ok delta has a rate.
    if (d.ok() && e.intervalSeconds > 0)
      d.perSecond = static_cast<double>(d.delta) / e.intervalSeconds;
  }
  for (std::size_t i = 0; i < kDerived.size(); ++i) {
    if (!std::isnan(e.derived[i])) r.*kDerived[i] = e.derived[i];
  }
  return r;
}

}  // namespace ibfabric::telemetry
