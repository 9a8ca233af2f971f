#include "telemetry/port_rates.h"

#include <algorithm>

#include "telemetry/rates_table.h"

namespace ibfabric::telemetry {

std::string_view toString(DeltaState s) {
  switch (s) {
    case DeltaState::kOk:
      return "ok";
    case DeltaState::kUnknown:
      return "unknown";
    case DeltaState::kReset:
      return "reset";
  }
  return "?";
}

std::vector<Counter> PortRates::resets() const {
  std::vector<Counter> out;
  for (Counter c : kAllCounters)
    if (counters[index(c)].state == DeltaState::kReset) out.push_back(c);
  return out;
}

std::vector<Counter> PortRates::saturated() const {
  std::vector<Counter> out;
  for (Counter c : kAllCounters)
    if (counters[index(c)].saturated) out.push_back(c);
  return out;
}

CounterDelta counterDelta(std::uint64_t oldValue, std::uint64_t newValue, int bits, double seconds,
                          bool clearedAfterOld) {
  CounterDelta d;
  if (bits <= 0) return d;
  d.saturated = bits < 64 && newValue == (std::uint64_t{1} << bits) - 1;
  if (d.saturated) return d;  // kUnknown: the true count is beyond the maximum.
  const std::uint64_t base = clearedAfterOld ? 0 : oldValue;
  if (newValue < base) {
    d.state = DeltaState::kReset;
    return d;
  }
  d.state = DeltaState::kOk;
  d.delta = newValue - base;
  d.perSecond = seconds > 0 ? static_cast<double>(d.delta) / seconds : 0.0;
  return d;
}

PortRates computeRates(const PortSample& older, const PortSample& newer,
                       const RateOptions& options) {
  PortRates r;
  r.key = newer.key;
  r.intervalSeconds = std::chrono::duration<double>(newer.at - older.at).count();
  if (older.status != PortStatus::kOk || newer.status != PortStatus::kOk ||
      r.intervalSeconds <= 0) {
    return r;
  }
  for (Counter c : kAllCounters) {
    if (!older.counters.has(c) || !newer.counters.has(c)) continue;
    const bool cleared = std::find(older.clearedAfterRead.begin(), older.clearedAfterRead.end(),
                                   c) != older.clearedAfterRead.end();
    // A width change (capabilities changed) makes the old value meaningless: treat as reset.
    if (older.counters.bits[index(c)] != newer.counters.bits[index(c)]) {
      r.counters[index(c)].state = DeltaState::kReset;
      continue;
    }
    r.counters[index(c)] = counterDelta(older.counters.get(c), newer.counters.get(c),
                                        newer.counters.bits[index(c)], r.intervalSeconds, cleared);
  }
  auto rate = [&](Counter c, double scale) -> std::optional<double> {
    const CounterDelta& d = r[c];
    if (!d.ok()) return std::nullopt;
    return d.perSecond * scale;
  };
  r.txBytesPerSecond = rate(Counter::kXmitData, 4.0);
  r.rxBytesPerSecond = rate(Counter::kRcvData, 4.0);
  r.txPacketsPerSecond = rate(Counter::kXmitPkts, 1.0);
  r.rxPacketsPerSecond = rate(Counter::kRcvPkts, 1.0);
  const std::optional<LinkRate>& link = newer.rate ? newer.rate : older.rate;
  if (link && link->dataGbps() > 0) {
    const double bytesPerSecond = link->dataGbps() * 1e9 / 8.0;
    if (r.txBytesPerSecond) r.txUtilization = *r.txBytesPerSecond / bytesPerSecond;
    if (r.rxBytesPerSecond) r.rxUtilization = *r.rxBytesPerSecond / bytesPerSecond;
  }
  // The device's own tick when it told us (PortSamplesControl), else the configured default.
  r.xmitWaitTickFromDevice = newer.xmitWaitTickSeconds > 0;
  r.xmitWaitTickSeconds = r.xmitWaitTickFromDevice
                              ? newer.xmitWaitTickSeconds
                              : std::chrono::duration<double>(options.xmitWaitTick).count();
  if (const CounterDelta& w = r[Counter::kXmitWait]; w.ok()) {
    const double waited = static_cast<double>(w.delta) * r.xmitWaitTickSeconds;
    r.congestion = std::clamp(waited / r.intervalSeconds, 0.0, 1.0);
  }
  return r;
}

RatesTable computeRates(const CounterSnapshot& older, const CounterSnapshot& newer,
                        const RateOptions& options, const std::set<PortKey>& skip) {
  RatesTable out;
  out.reserve(newer.ports.size());
  for (const PortSample& n : newer.ports) {
    if (n.status != PortStatus::kOk || skip.count(n.key) > 0) continue;
    const PortSample* o = older.find(n.key);
    if (!o || o->status != PortStatus::kOk) continue;
    out.append(computeRates(*o, n, options));
  }
  out.shrinkToFit();
  return out;
}

}  // namespace ibfabric::telemetry
