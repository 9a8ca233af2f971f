// Port rates: what two samples of one port's counters mean, as pure functions.
//
// For each counter: the delta and the rate per second over the interval between the samples'
// timestamps, with a state that says when no honest number exists:
//   - kUnknown    the counter is narrower than 64 bits and stuck at its maximum in the newer
//                 sample (saturated: the true count is unknown, never reported as 0/s), or
//                 either sample lacks it;
//   - kReset      the counter went backwards: someone cleared it (an OpenSM PerfMgr clears at
//                 75% of the width, perfquery -R, our own clear policy is *not* this case: it is
//                 announced by the older sample). The interval is re-baselined: no delta, no
//                 spike;
//   - kOk         delta = new - old (or new, when the older sample says we cleared it).
// Derived values: tx/rx bytes per second (data counters count 4-octet units: x4), packets per
// second, utilization per direction against the link's data rate (LinkRate::dataGbps), and the
// congestion ratio from PortXmitWait: ticks waited x tick length / interval, clamped to [0, 1].
//
// Pure functions on values; thread-safe.
#pragma once

#include <array>
#include <chrono>
#include <optional>
#include <set>
#include <vector>

#include "telemetry/counter_sweep.h"

namespace ibfabric::telemetry {

/// Length of one PortXmitWait tick for ports whose device does not answer PortSamplesControl
/// (the sweep reads its Tick once per topology and derives the port's tick from it and the
/// active speed: PortSample::xmitWaitTickSeconds). 8 ns; override per deployment with
/// RateOptions::xmitWaitTick (`ibfabric counters --xmit-wait-tick-ns`).
inline constexpr std::chrono::nanoseconds kDefaultXmitWaitTick{8};

struct RateOptions {
  std::chrono::nanoseconds xmitWaitTick = kDefaultXmitWaitTick;
};

enum class DeltaState : std::uint8_t { kOk, kUnknown, kReset };
std::string_view toString(DeltaState s);  // "ok", "unknown", "reset"

struct CounterDelta {       // 24 bytes: 17 of them per port in every sweep's rates
  std::uint64_t delta = 0;  ///< Valid when kOk.
  double perSecond = 0.0;   ///< Valid when kOk.
  DeltaState state = DeltaState::kUnknown;
  bool saturated = false;  ///< The newer sample is stuck at the counter's maximum.
  bool ok() const { return state == DeltaState::kOk; }
};

struct PortRates {
  PortKey key;
  double intervalSeconds = 0.0;
  std::array<CounterDelta, kCounterCount> counters{};

  std::optional<double> txBytesPerSecond;
  std::optional<double> rxBytesPerSecond;
  std::optional<double> txPacketsPerSecond;
  std::optional<double> rxPacketsPerSecond;
  /// Bytes/s x 8 over the link's data rate; nullopt without a rate or bytes.
  std::optional<double> txUtilization;
  std::optional<double> rxUtilization;
  /// Fraction of the interval the port had data but could not send, in [0, 1].
  std::optional<double> congestion;
  /// The PortXmitWait tick used for `congestion`, and whether it came from the device
  /// (PortSamplesControl) or is the configured default.
  double xmitWaitTickSeconds = 0.0;
  bool xmitWaitTickFromDevice = false;

  const CounterDelta& operator[](Counter c) const { return counters[index(c)]; }
  /// Counters that went backwards in this interval.
  std::vector<Counter> resets() const;
  std::vector<Counter> saturated() const;
};

/// One counter's delta between two readings of `bits` width. `clearedAfterOld`: we cleared the
/// counter right after reading `oldValue`, so it counts from 0.
CounterDelta counterDelta(std::uint64_t oldValue, std::uint64_t newValue, int bits, double seconds,
                          bool clearedAfterOld = false);

/// Rates of one port between an older and a newer sample (same key). Both must be kOk for any
/// value to be derived; otherwise everything is kUnknown.
PortRates computeRates(const PortSample& older, const PortSample& newer,
                       const RateOptions& options = {});

class RatesTable;
/// Rates of every port present (kOk) in both snapshots, in key order, except `skip`'s.
RatesTable computeRates(const CounterSnapshot& older, const CounterSnapshot& newer,
                        const RateOptions& options = {}, const std::set<PortKey>& skip = {});

}  // namespace ibfabric::telemetry
