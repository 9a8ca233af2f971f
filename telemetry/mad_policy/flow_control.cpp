#include "telemetry/mad_policy/flow_control.h"

#include <algorithm>

#include "telemetry/mad_packet.h"

namespace ibfabric::mad {
namespace {

AimdWindow::Bounds overallBounds(MadPolicy policy, const FlowControl::Limits& l,
                                 const AdaptiveOptions& a) {
  if (policy == MadPolicy::kFixed) return {l.window, l.window, l.window};
  return {std::min(a.minWindow, l.window), l.window, a.initialWindow};
}

RttEstimator::Bounds rttBounds(MadPolicy policy, const FlowControl::Limits& l,
                               const AdaptiveOptions& a) {
  if (policy == MadPolicy::kFixed) return {l.timeout, l.timeout, l.timeout};
  RttEstimator::Bounds b;
  b.initial = l.timeout;
  b.min = a.timeoutMin;
  b.max = std::max(a.timeoutMin, a.timeoutMax);
  return b;
}

/// Directed-route SMPs all go to the permissive LID, whatever switch they are for: that "target"
/// is many, and one unreachable path must not close the breaker on every other.
bool hasBreaker(Lid lid) { return lid != kPermissiveLid; }

}  // namespace

const char* toString(MadPolicy policy) {
  return policy == MadPolicy::kFixed ? "fixed" : "adaptive";
}

std::optional<MadPolicy> parseMadPolicy(std::string_view text) {
  if (text == "adaptive") return MadPolicy::kAdaptive;
  if (text == "fixed") return MadPolicy::kFixed;
  return std::nullopt;
}

FlowControl::FlowControl(MadPolicy policy, Limits limits, AdaptiveOptions adaptive)
    : policy_(policy),
      limits_(limits),
      adaptive_(adaptive),
      rttBounds_(rttBounds(policy, limits, adaptive)),
      window_(overallBounds(policy, limits, adaptive)),
      overallRtt_(rttBounds_),
      budget_(adaptive.retryBudget, adaptive.retryBurst) {}

FlowControl::Target& FlowControl::target(Lid lid) {
  auto it = targets_.find(lid);
  if (it != targets_.end()) return it->second;
  const int max = limits_.perTargetWindow;
  Target t{AimdWindow({adaptive_.minPerTargetWindow, max, max}), RttEstimator(rttBounds_),
           CircuitBreaker(adaptive_.breakerAfter)};
  t.rtt.seedFrom(overallRtt_);
  return targets_.emplace(lid, std::move(t)).first->second;
}

const FlowControl::Target* FlowControl::findTarget(Lid lid) const {
  auto it = targets_.find(lid);
  return it == targets_.end() ? nullptr : &it->second;
}

int FlowControl::window() const { return window_.current(); }

int FlowControl::perTargetWindow(Lid lid) const {
  if (!adaptive()) return limits_.perTargetWindow;
  const Target* t = findTarget(lid);
  if (t && t->breaker.open()) return 1;  // The probe; the rest of the batch waits for its answer.
  if (limits_.perTargetWindow <= 0) return 0;
  return t ? t->window.current() : limits_.perTargetWindow;
}

Clock::duration FlowControl::attemptTimeout(Lid lid, bool probe) {
  if (!adaptive()) return limits_.timeout;
  // A target that is back answers like the rest of the fabric: its probe does not wait out the
  // target's own backed-off timer.
  return probe ? overallRtt_.rto() : target(lid).rtt.rto();
}

Clock::duration FlowControl::targetRto(Lid lid) const {
  const Target* t = adaptive() ? findTarget(lid) : nullptr;
  return t ? t->rtt.rto() : overallRtt_.rto();
}

bool FlowControl::breakerOpen(Lid lid) const {
  const Target* t = findTarget(lid);
  return t && t->breaker.open();
}

FlowControl::Admission FlowControl::admit(Lid lid, Clock::time_point batchAdmittedAt,
                                          bool batchProbed) {
  if (!adaptive() || !hasBreaker(lid)) return Admission::kSend;
  const CircuitBreaker& b = target(lid).breaker;
  if (!b.open()) return Admission::kSend;
  if (!batchProbed && b.probeAllowed(batchAdmittedAt)) return Admission::kProbe;
  return Admission::kRefuse;
}

void FlowControl::onFirstSend() {
  if (adaptive()) budget_.onFirstSend();
}

bool FlowControl::mayRetry() { return !adaptive() || budget_.trySpend(); }

void FlowControl::onAnswered(Lid lid, Clock::duration rtt, bool spurious, const TimeoutCuts& cuts) {
  // The overall estimator sees every sample under both policies (it is what the stats show);
  // only kAdaptive acts on it.
  overallRtt_.sample(rtt);
  if (spurious) ++spurious_;
  if (!adaptive()) return;
  Target& t = target(lid);
  if (spurious) {
    if (cuts.targetBefore && t.window.undoCut(*cuts.targetBefore, cuts.targetCut)) ++cutsUndone_;
    if (cuts.overallBefore && window_.undoCut(*cuts.overallBefore, cuts.overallCut)) ++cutsUndone_;
  }
  t.rtt.sample(rtt);  // Replaces a backed-off RTO (RFC 6298 5.7).
  if (t.breaker.open()) --openBreakers_;
  t.breaker.onAnswered();
  t.window.onAnswer();
  window_.onAnswer();
}

void FlowControl::onLateAnswer(Lid lid, Clock::duration rtt) {
  overallRtt_.sample(rtt);
  ++spurious_;
  if (!adaptive()) return;
  Target& t = target(lid);
  t.rtt.sample(rtt);
  if (t.breaker.open()) --openBreakers_;
  t.breaker.onAnswered();
}

void FlowControl::onTimeout(Lid lid, Clock::time_point sentAt, bool firstAttempt,
                            Clock::time_point now, TimeoutCuts& cuts) {
  if (!adaptive()) return;
  Target& t = target(lid);
  t.rtt.backOff(sentAt, now);
  const AimdWindow::State targetBefore = t.window.state();
  if (limits_.perTargetWindow > 0 && t.window.onLoss(sentAt, now)) {
    ++targetDecreases_;
    if (!cuts.targetBefore) cuts.targetBefore = targetBefore;
    cuts.targetCut = t.window.decreases();
  }
  const AimdWindow::State overallBefore = window_.state();
  if (firstAttempt && !t.breaker.open() && t.breaker.consecutiveFailures() == 0 &&
      window_.onLoss(sentAt, now)) {
    if (!cuts.overallBefore) cuts.overallBefore = overallBefore;
    cuts.overallCut = window_.decreases();
  }
}

bool FlowControl::onRequestFailed(Lid lid, Clock::time_point now) {
  if (!adaptive() || !hasBreaker(lid)) return false;
  if (!target(lid).breaker.onFailed(now)) return false;
  ++openBreakers_;
  return true;
}

}  // namespace ibfabric::mad
