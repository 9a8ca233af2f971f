#include "telemetry/mad_policy/aimd_window.h"

#include <algorithm>

namespace ibfabric::mad {

AimdWindow::AimdWindow(Bounds bounds)
    : min_(std::max(1, bounds.min)),
      max_(std::max(min_, bounds.max)),
      window_(std::clamp(bounds.initial, min_, max_)),
      slowStartThreshold_(max_) {}

void AimdWindow::onAnswer() {
  // One more per `current()` answers above the threshold: a whole window's worth adds exactly one.
  const double step = window_ < slowStartThreshold_ ? 1.0 : 1.0 / current();
  window_ = std::min<double>(max_, window_ + step);
}

bool AimdWindow::onLoss(Clock::time_point sentAt, Clock::time_point now) {
  if (sentAt < lastCut_ || current() <= min_) return false;
  lastCut_ = now;
  window_ = std::max<double>(min_, static_cast<int>(window_) / 2);
  slowStartThreshold_ = window_;
  ++decreases_;
  return true;
}

bool AimdWindow::undoCut(State before, std::uint64_t cut) {
  if (cut == 0 || cut != decreases_ || cut == lastUndone_) return false;
  lastUndone_ = cut;
  window_ = std::clamp<double>(before.window, min_, max_);
  slowStartThreshold_ = before.slowStartThreshold;
  ++undone_;
  return true;
}

}  // namespace ibfabric::mad
