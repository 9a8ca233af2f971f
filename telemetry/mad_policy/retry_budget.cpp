#include "telemetry/mad_policy/retry_budget.h"

#include <algorithm>

namespace ibfabric::mad {

RetryBudget::RetryBudget(double perRequest, double burst)
    : perRequest_(std::max(0.0, perRequest)), burst_(std::max(1.0, burst)), tokens_(burst_) {}

void RetryBudget::onFirstSend() { tokens_ = std::min(burst_, tokens_ + perRequest_); }

bool RetryBudget::trySpend() {
  if (tokens_ < 1.0) {
    ++refusals_;
    return false;
  }
  tokens_ -= 1.0;
  return true;
}

}  // namespace ibfabric::mad
