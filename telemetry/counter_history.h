// CounterHistory: what the last N sweeps saw of every port, compactly (for sparklines and the
// windowed health checks).
//
// At 10,240 HCAs a history of whole PortSamples (61,440 ports x 64 samples x ~480 bytes) would be
// ~1.9 GB, so each port keeps instead:
//   - a ring of N 12-byte points, one per kOk sample: when it was taken, and over the interval
//     since the port's previous kOk sample (across failed sweeps, as a gap) the transmit and
//     receive utilization and the congestion, to 1/10,000, and whether a counter reset;
//   - the exact deltas of its error counters, only where they are not zero (or could not be
//     known: a reset), which is rare on a healthy fabric;
//   - its previous kOk counters, exact, to measure the next interval against.
// A port reported kGone loses its history. window() judges a port over a time window exactly as
// summing its per-interval error deltas would (link_health_eval.h: PortWindow).
//
// Thread-safe: add() and the readers may run on different threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "telemetry/counter_sweep.h"
#include "telemetry/link_health_eval.h"
#include "telemetry/port_rates.h"

namespace ibfabric::telemetry {

/// One kOk sample of a port as the history keeps it.
struct HistoryPoint {
  mad::Clock::time_point at{};
  /// Since the port's previous kOk sample; 0 for the first (or after its counters were cleared).
  double seconds = 0.0;
  std::optional<double> txUtilization;  ///< To 1/10,000.
  std::optional<double> rxUtilization;
  std::optional<double> congestion;
  bool reset = false;  ///< A counter went backwards in the interval.
};

class CounterHistory {
 public:
  explicit CounterHistory(std::size_t depth, RateOptions rates = {});

  /// Takes a whole sweep. `restart`: ports whose counters were cleared since the previous sweep;
  /// their sample starts over (a point without an interval).
  void add(const CounterSnapshot& snapshot, const std::set<PortKey>& restart = {});
  /// Oldest first; empty for an unknown port.
  std::vector<HistoryPoint> points(PortKey key) const;
  /// The port's error counters over `window` and its LinkDowned increments over `flapWindow`,
  /// both ending at its newest point; congestion of the newest interval. Only the error counters
  /// (isErrorCounter) have deltas. nullopt for an unknown port.
  std::optional<PortWindow> window(PortKey key, std::chrono::nanoseconds window,
                                   std::chrono::nanoseconds flapWindow) const;
  std::vector<PortKey> ports() const;
  std::size_t depth() const { return depth_; }
  /// Bytes held by the rings, error deltas and previous counters (not the allocator's overhead).
  std::size_t bytes() const;

 private:
  static constexpr std::uint16_t kNone = 0xffff;  // a Slot field without a value
  static constexpr std::uint16_t kHasInterval = 1, kReset = 2;
  struct Slot {              // 12 bytes; its interval starts at the previous slot's atMs
    std::uint32_t atMs = 0;  // since epoch_
    std::uint16_t tx = kNone, rx = kNone, congestion = kNone;  // in 1/10,000
    std::uint16_t flags = 0;
  };
  struct ErrorDelta {  // an error counter's delta over one interval: not 0, or not known
    std::uint32_t startMs = 0;
    Counter counter{};
    bool ok = true;  // false: reset or unknown in that interval
    std::uint64_t delta = 0;
  };
  struct Last {  // the previous kOk sample, exact: what the next interval is measured against
    mad::Clock::time_point at{};
    CounterValues counters;
    std::vector<Counter> clearedAfterRead;
  };
  struct Ring {
    std::vector<Slot> slots;  // depth_ once the port has a sample
    std::uint32_t next = 0, size = 0;
    std::vector<ErrorDelta> errors;  // oldest first, none older than the oldest slot
    Last last;
    double newestSeconds = 0;  // exact interval and congestion of the newest point
    std::optional<double> newestCongestion;
    std::uint32_t readMask = 0;  // bit per Counter read by the newest sample
  };
  const Slot& slot(const Ring& r, std::size_t i) const {  // i-th oldest
    return r.slots[(r.next + depth_ - r.size + i) % depth_];
  }
  std::uint32_t offsetMs(mad::Clock::time_point at);
  void append(Ring& ring, const PortSample& sample, bool restart);
  void rebase(std::int64_t byMs);

  const std::size_t depth_;
  const RateOptions rates_;
  mutable std::mutex mu_;
  std::optional<mad::Clock::time_point> epoch_;  // of every Slot::atMs
  std::map<PortKey, Ring> rings_;
};

}  // namespace ibfabric::telemetry
