// FakeClock: a manually advanced clock for deterministic tests.
//
// Time only moves when someone calls advance()/advanceTo() (the fake MAD transport does so when
// a receive would otherwise block). Thread-safe: the time is an atomic.
#pragma once

#include <atomic>

#include "telemetry/clock.h"

namespace ibfabric::mad {

class FakeClock final : public Clock {
 public:
  FakeClock() = default;
  time_point now() const override { return time_point(duration(nanos_.load())); }
  void advance(duration d) { nanos_.fetch_add(d.count()); }
  /// Moves time forward to `t`; never backwards.
  void advanceTo(time_point t) {
    auto target = t.time_since_epoch().count();
    auto cur = nanos_.load();
    while (cur < target && !nanos_.compare_exchange_weak(cur, target)) {
    }
  }

 private:
  // Starts at an arbitrary non-zero instant so that "zero" time points stand out in tests.
  std::atomic<duration::rep> nanos_{1'000'000'000};
};

}  // namespace ibfabric::mad
