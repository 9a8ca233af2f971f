// CounterHistory: the last N samples of every port, in memory (for sparklines, smoothing and
// windowed health checks).
//
// One fixed-size ring per port, oldest first when read. add() takes a whole sweep: kOk samples
// are appended, failed ones are skipped (a gap, not a zero), and a port reported kGone loses its
// history. Thread-safe: add() and the readers may run on different threads.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

#include "telemetry/counter_sweep.h"

namespace ibfabric::telemetry {

class CounterHistory {
 public:
  explicit CounterHistory(std::size_t depth);

  void add(const CounterSnapshot& snapshot);
  /// Oldest first; empty for an unknown port.
  std::vector<PortSample> samples(PortKey key) const;
  std::vector<PortKey> ports() const;
  std::size_t depth() const { return depth_; }

 private:
  struct Ring {
    std::vector<PortSample> slots;
    std::size_t next = 0;  ///< Where the next sample goes.
    std::size_t size = 0;
  };
  const std::size_t depth_;
  mutable std::mutex mu_;
  std::map<PortKey, Ring> rings_;
};

}  // namespace ibfabric::telemetry
