// Clock: the time source of the MAD engine, behind an interface so tests can drive time.
//
// `SteadyClock` reads std::chrono::steady_clock. Implementations must be thread-safe: the engine
// reads the clock from its I/O thread while other threads may read it too.
#pragma once

#include <chrono>

namespace ibfabric::mad {

class Clock {
 public:
  using duration = std::chrono::nanoseconds;
  using time_point = std::chrono::time_point<std::chrono::steady_clock, duration>;

  virtual ~Clock() = default;
  virtual time_point now() const = 0;
};

/// The real monotonic clock. Stateless; thread-safe.
class SteadyClock final : public Clock {
 public:
  time_point now() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace ibfabric::mad
