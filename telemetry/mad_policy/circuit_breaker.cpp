#include "telemetry/mad_policy/circuit_breaker.h"

namespace ibfabric::mad {

void CircuitBreaker::onAnswered() {
  consecutiveFailures_ = 0;
  open_ = false;
}

bool CircuitBreaker::onFailed(Clock::time_point now) {
  ++consecutiveFailures_;
  if (open_ || threshold_ <= 0 || consecutiveFailures_ < threshold_) return false;
  open_ = true;
  openedAt_ = now;
  return true;
}

}  // namespace ibfabric::mad
