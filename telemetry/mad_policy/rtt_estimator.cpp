#include "telemetry/mad_policy/rtt_estimator.h"

#include <algorithm>

namespace ibfabric::mad {

RttEstimator::RttEstimator(Bounds bounds) : bounds_(bounds), rto_(clamp(bounds.initial)) {}

Clock::duration RttEstimator::clamp(Clock::duration d) const {
  return std::clamp(d, bounds_.min, std::max(bounds_.min, bounds_.max));
}

void RttEstimator::sample(Clock::duration rtt) {
  if (rtt < Clock::duration::zero()) rtt = Clock::duration::zero();
  if (!measured_) {
    srtt_ = rtt;
    rttvar_ = rtt / 2;
    measured_ = true;
  } else {
    const Clock::duration error = srtt_ > rtt ? srtt_ - rtt : rtt - srtt_;
    rttvar_ = (3 * rttvar_ + error) / 4;
    srtt_ = (7 * srtt_ + rtt) / 8;
  }
  rto_ = clamp(srtt_ + std::max(bounds_.granularity, 4 * rttvar_));
}

bool RttEstimator::backOff(Clock::time_point sentAt, Clock::time_point now) {
  if (sentAt < lastBackOff_) return false;
  lastBackOff_ = now;
  rto_ = clamp(2 * rto_);
  return true;
}

void RttEstimator::seedFrom(const RttEstimator& other) {
  srtt_ = other.srtt_;
  rttvar_ = other.rttvar_;
  measured_ = other.measured_;
  rto_ = clamp(measured_ ? srtt_ + std::max(bounds_.granularity, 4 * rttvar_) : other.rto_);
}

}  // namespace ibfabric::mad
