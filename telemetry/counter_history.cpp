#include "telemetry/counter_history.h"

#include <algorithm>
#include <cmath>

namespace ibfabric::telemetry {
namespace {

constexpr double kScale = 10000.0;  // Slot ratios are kept in 1/10,000
// Offsets past this move the epoch (after ~24.8 days of uptime, then every ~24.8 days).
constexpr std::uint32_t kRebaseAtMs = 0x80000000u;

std::uint16_t quantize(const std::optional<double>& ratio) {
  if (!ratio || !std::isfinite(*ratio)) return 0xffff;
  const double q = std::round(std::clamp(*ratio, 0.0, 6.5534) * kScale);
  return static_cast<std::uint16_t>(q);
}

std::optional<double> unquantize(std::uint16_t q) {
  if (q == 0xffff) return std::nullopt;
  return q / kScale;
}

std::uint32_t maskOf(const CounterValues& c) {
  std::uint32_t m = 0;
  for (Counter k : kAllCounters)
    if (c.has(k)) m |= 1u << index(k);
  return m;
}

}  // namespace

CounterHistory::CounterHistory(std::size_t depth, RateOptions rates)
    : depth_(std::clamp<std::size_t>(depth, 1, 0xffff)), rates_(rates) {}

std::uint32_t CounterHistory::offsetMs(mad::Clock::time_point at) {
  if (!epoch_) epoch_ = at;
  if (at < *epoch_) return 0;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(at - *epoch_).count();
  if (ms >= kRebaseAtMs) {  // the new offset lands at half the range, however long the gap
    const std::int64_t by = ms - kRebaseAtMs / 2;
    rebase(by);
    ms -= by;
  }
  return static_cast<std::uint32_t>(ms);
}

void CounterHistory::rebase(std::int64_t byMs) {
  *epoch_ += std::chrono::milliseconds(byMs);
  auto shift = [byMs](std::uint32_t v) {
    return static_cast<std::uint32_t>(std::max<std::int64_t>(std::int64_t{v} - byMs, 0));
  };
  for (auto& [key, r] : rings_) {
    for (auto& s : r.slots) s.atMs = shift(s.atMs);
    for (auto& e : r.errors) e.startMs = shift(e.startMs);
  }
}

void CounterHistory::append(Ring& r, const PortSample& s, bool restart) {
  const bool first = r.slots.empty();
  if (first) r.slots.resize(depth_);
  Slot point;
  point.atMs = offsetMs(s.at);
  const std::uint32_t startMs = r.size > 0 ? slot(r, r.size - 1).atMs : point.atMs;
  r.newestSeconds = 0;
  r.newestCongestion.reset();
  if (!first && !restart) {
    PortSample older;
    older.key = s.key;
    older.at = r.last.at;
    older.counters = r.last.counters;
    older.clearedAfterRead = r.last.clearedAfterRead;
    older.rate = s.rate;
    const PortRates rates = computeRates(older, s, rates_);
    point.flags = kHasInterval | (rates.resets().empty() ? 0 : kReset);
    point.tx = quantize(rates.txUtilization);
    point.rx = quantize(rates.rxUtilization);
    point.congestion = quantize(rates.congestion);
    r.newestSeconds = rates.intervalSeconds;
    r.newestCongestion = rates.congestion;
    for (Counter c : kAllCounters) {
      if (!isErrorCounter(c) || !s.counters.has(c)) continue;
      const CounterDelta& d = rates[c];
      if (d.ok() && d.delta == 0) continue;
      r.errors.push_back({startMs, c, d.ok(), d.ok() ? d.delta : 0});
    }
  }
  r.slots[r.next] = point;
  r.next = static_cast<std::uint32_t>((r.next + 1) % depth_);
  r.size = static_cast<std::uint32_t>(std::min<std::size_t>(r.size + 1, depth_));
  // Deltas of intervals that started before the oldest slot are no longer in any window.
  const std::uint32_t oldest = slot(r, 0).atMs;
  std::erase_if(r.errors, [&](const ErrorDelta& e) { return e.startMs < oldest; });
  r.last = {s.at, s.counters, s.clearedAfterRead};
  r.readMask = maskOf(s.counters);
}

void CounterHistory::add(const CounterSnapshot& snapshot, const std::set<PortKey>& restart) {
  std::lock_guard lock(mu_);
  if (!epoch_) {  // the earliest reply of the first sweep: no offset of it is negative
    for (const PortSample& s : snapshot.ports)
      if (s.status == PortStatus::kOk && (!epoch_ || s.at < *epoch_)) epoch_ = s.at;
  }
  for (const PortSample& s : snapshot.ports) {
    if (s.status == PortStatus::kGone) {
      rings_.erase(s.key);
      continue;
    }
    if (s.status != PortStatus::kOk) continue;
    append(rings_[s.key], s, restart.count(s.key) > 0);
  }
}

std::vector<HistoryPoint> CounterHistory::points(PortKey key) const {
  std::lock_guard lock(mu_);
  std::vector<HistoryPoint> out;
  auto it = rings_.find(key);
  if (it == rings_.end() || !epoch_) return out;
  const Ring& r = it->second;
  out.reserve(r.size);
  for (std::size_t i = 0; i < r.size; ++i) {
    const Slot& s = slot(r, i);
    HistoryPoint p;
    p.at = *epoch_ + std::chrono::milliseconds(s.atMs);
    if (i > 0 && (s.flags & kHasInterval)) p.seconds = (s.atMs - slot(r, i - 1).atMs) / 1000.0;
    p.txUtilization = unquantize(s.tx);
    p.rxUtilization = unquantize(s.rx);
    p.congestion = unquantize(s.congestion);
    p.reset = (s.flags & kReset) != 0;
    out.push_back(p);
  }
  if (!out.empty() && r.newestSeconds > 0) out.back().seconds = r.newestSeconds;
  return out;
}

std::optional<PortWindow> CounterHistory::window(PortKey key, std::chrono::nanoseconds window,
                                                 std::chrono::nanoseconds flapWindow) const {
  std::lock_guard lock(mu_);
  auto it = rings_.find(key);
  if (it == rings_.end() || it->second.size == 0) return std::nullopt;
  const Ring& r = it->second;
  const auto windowMs = std::chrono::duration_cast<std::chrono::milliseconds>(window).count();
  const auto flapMs = std::chrono::duration_cast<std::chrono::milliseconds>(flapWindow).count();
  const std::uint32_t newest = slot(r, r.size - 1).atMs;
  auto within = [&](std::uint32_t startMs, long long ms) { return newest - startMs <= ms; };

  PortWindow w;
  w.key = key;
  std::size_t intervals = 0;  // in the error window
  for (std::size_t i = 1; i < r.size; ++i) {
    const Slot& s = slot(r, i);
    if (!(s.flags & kHasInterval)) continue;
    const std::uint32_t start = slot(r, i - 1).atMs;
    const bool inWindow = within(start, windowMs);
    if (!inWindow && !within(start, flapMs)) continue;
    if (s.flags & kReset) ++w.resets;
    if (!inWindow) continue;
    ++intervals;
    w.seconds +=
        i == r.size - 1 && r.newestSeconds > 0 ? r.newestSeconds : (s.atMs - start) / 1000.0;
  }
  std::array<std::size_t, kCounterCount> unknown{};
  std::array<std::uint64_t, kCounterCount> sum{};
  for (const ErrorDelta& e : r.errors) {
    if (e.counter == Counter::kLinkDowned && e.ok && within(e.startMs, flapMs))
      w.linkDownedInFlapWindow += e.delta;
    if (!within(e.startMs, windowMs)) continue;
    if (e.ok) {
      sum[index(e.counter)] += e.delta;
    } else {
      ++unknown[index(e.counter)];
    }
  }
  for (Counter c : kAllCounters) {
    const bool read = (r.readMask >> index(c)) & 1u;
    if (isErrorCounter(c) && read && intervals > unknown[index(c)])
      w.deltas[index(c)] = sum[index(c)];
  }
  if (r.size > 1 && (slot(r, r.size - 1).flags & kHasInterval)) w.congestion = r.newestCongestion;
  return w;
}

std::vector<PortKey> CounterHistory::ports() const {
  std::lock_guard lock(mu_);
  std::vector<PortKey> out;
  out.reserve(rings_.size());
  for (const auto& [k, r] : rings_) out.push_back(k);
  return out;
}

std::size_t CounterHistory::bytes() const {
  std::lock_guard lock(mu_);
  std::size_t n = 0;
  for (const auto& [k, r] : rings_) {
    n += sizeof(k) + sizeof(r) + r.slots.capacity() * sizeof(Slot) +
         r.errors.capacity() * sizeof(ErrorDelta) +
         r.last.clearedAfterRead.capacity() * sizeof(Counter);
  }
  return n;
}

}  // namespace ibfabric::telemetry
