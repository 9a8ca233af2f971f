// CircuitBreaker: one target's "stopped answering" state, kept across batches.
//
// Closed: requests go out. After `threshold` requests in a row failed (every attempt unanswered)
// the breaker opens: the engine completes that target's requests at once (kTargetDown) without
// sending them, except one probe per batch admitted after the breaker opened (half-open). An
// answered request, the probe included, closes it. threshold 0: the breaker never opens.
//
// A pure value on the engine clock; not thread-safe (the MAD engine uses it on its I/O thread).
#pragma once

#include "telemetry/clock.h"

namespace ibfabric::mad {

class CircuitBreaker {
 public:
  explicit CircuitBreaker(int threshold) : threshold_(threshold) {}

  /// A request to the target was answered: closes the breaker.
  void onAnswered();
  /// A request to the target failed at `now`; returns true if this failure opened the breaker.
  bool onFailed(Clock::time_point now);

  bool open() const { return open_; }
  /// When the breaker last opened (valid while open()).
  Clock::time_point openedAt() const { return openedAt_; }
  /// Whether a batch admitted at `admittedAt` may send one probe: only a batch that began after
  /// the failures that opened the breaker.
  bool probeAllowed(Clock::time_point admittedAt) const { return open_ && admittedAt >= openedAt_; }
  int consecutiveFailures() const { return consecutiveFailures_; }

 private:
  int threshold_;
  int consecutiveFailures_ = 0;
  bool open_ = false;
  Clock::time_point openedAt_{};
};

}  // namespace ibfabric::mad
