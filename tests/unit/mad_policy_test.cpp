// The MAD engine's policy pieces on their own (telemetry/mad_policy/): the AIMD window, the
// RFC 6298 estimator, the retry budget and the circuit breaker. The engine tests
// (mad_engine_test.cpp) show the same behaviour through the fake transport.
#include <gtest/gtest.h>

#include "telemetry/mad_policy/aimd_window.h"
#include "telemetry/mad_policy/circuit_breaker.h"
#include "telemetry/mad_policy/flow_control.h"
#include "telemetry/mad_policy/retry_budget.h"
#include "telemetry/mad_policy/rtt_estimator.h"

namespace ibfabric::mad {
namespace {

using namespace std::chrono_literals;

Clock::time_point at(Clock::duration d) { return Clock::time_point(d); }

TEST(AimdWindow, SlowStartThenOneMorePerWindowOfAnswers) {
  AimdWindow w({.min = 2, .max = 64, .initial = 4});
  EXPECT_EQ(w.current(), 4);
  for (int i = 0; i < 4; ++i) w.onAnswer();  // One window of answers doubles it.
  EXPECT_EQ(w.current(), 8);
  // A loss halves it and ends slow start: from then on one window of answers adds one.
  EXPECT_TRUE(w.onLoss(at(1s), at(2s)));
  EXPECT_EQ(w.current(), 4);
  for (int i = 0; i < 4; ++i) w.onAnswer();
  EXPECT_EQ(w.current(), 5);
  for (int i = 0; i < 10'000; ++i) w.onAnswer();
  EXPECT_EQ(w.current(), 64);  // Never above max.
}

TEST(AimdWindow, OneBurstOfLossesCutsOnce) {
  AimdWindow w({.min = 2, .max = 256, .initial = 256});
  // 100 attempts sent at t=1s all time out together: one episode, one cut.
  for (int i = 0; i < 100; ++i) w.onLoss(at(1s), at(1200ms) + std::chrono::microseconds(i));
  EXPECT_EQ(w.current(), 128);
  EXPECT_EQ(w.decreases(), 1u);
  // An attempt sent after the cut and lost again is a new episode.
  EXPECT_TRUE(w.onLoss(at(1300ms), at(1500ms)));
  EXPECT_EQ(w.current(), 64);
  for (int i = 0; i < 20; ++i) w.onLoss(at(10s + i * 1s), at(10s + i * 1s + 1ms));
  EXPECT_EQ(w.current(), 2);  // Never below min.
}

TEST(AimdWindow, ASpuriousCutIsUndoneOnceAndNotAfterALaterCut) {
  AimdWindow w({.min = 2, .max = 256, .initial = 64});
  AimdWindow::State before = w.state();
  ASSERT_TRUE(w.onLoss(at(1s), at(2s)));
  EXPECT_EQ(w.current(), 32);
  EXPECT_TRUE(w.undoCut(before, w.decreases()));
  EXPECT_EQ(w.current(), 64);
  EXPECT_FALSE(w.undoCut(before, w.decreases()));  // Once.
  EXPECT_EQ(w.undone(), 1u);
  // Two cuts: the first one's proof comes after the second: the second stays.
  before = w.state();
  ASSERT_TRUE(w.onLoss(at(3s), at(4s)));
  const std::uint64_t first = w.decreases();
  ASSERT_TRUE(w.onLoss(at(5s), at(6s)));
  EXPECT_FALSE(w.undoCut(before, first));
  EXPECT_EQ(w.current(), 16);
  EXPECT_FALSE(w.undoCut(before, 0));  // 0: no cut recorded.
}

TEST(RttEstimator, FollowsRfc6298) {
  RttEstimator e({.initial = 200ms, .min = 1ms, .max = 2s, .granularity = 1ms});
  EXPECT_EQ(e.rto(), 200ms);
  EXPECT_FALSE(e.measured());
  e.sample(40ms);  // SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR
  EXPECT_EQ(e.srtt(), 40ms);
  EXPECT_EQ(e.rttvar(), 20ms);
  EXPECT_EQ(e.rto(), 120ms);
  e.sample(80ms);  // RTTVAR = 3/4 20 + 1/4 |40 - 80| = 25; SRTT = 7/8 40 + 1/8 80 = 45
  EXPECT_EQ(e.rttvar(), 25ms);
  EXPECT_EQ(e.srtt(), 45ms);
  EXPECT_EQ(e.rto(), 145ms);
  for (int i = 0; i < 200; ++i) e.sample(10ms);  // Steady: RTTVAR -> 0, RTO -> SRTT + G.
  EXPECT_LE(e.rto(), 12ms);
  EXPECT_GE(e.rto(), 11ms);
}

TEST(RttEstimator, ClampedToBounds) {
  RttEstimator e({.initial = 200ms, .min = 20ms, .max = 2s, .granularity = 1ms});
  e.sample(100us);
  EXPECT_EQ(e.rto(), 20ms);
  for (int i = 0; i < 5; ++i) e.sample(5s);
  EXPECT_EQ(e.rto(), 2s);
}

TEST(RttEstimator, BacksOffOncePerEpisodeUntilTheNextSample) {
  RttEstimator e({.initial = 100ms, .min = 20ms, .max = 2s});
  EXPECT_TRUE(e.backOff(at(1s), at(1100ms)));
  EXPECT_FALSE(e.backOff(at(1s), at(1101ms)));  // Sent before the back-off: same episode.
  EXPECT_EQ(e.rto(), 200ms);
  EXPECT_TRUE(e.backOff(at(1100ms), at(1300ms)));  // The retry's own timeout.
  EXPECT_EQ(e.rto(), 400ms);
  for (int i = 0; i < 10; ++i) e.backOff(at(10s * (i + 1)), at(10s * (i + 1) + 1ms));
  EXPECT_EQ(e.rto(), 2s);
  e.sample(30ms);  // A valid sample recomputes the RTO from the measurements.
  EXPECT_EQ(e.rto(), 90ms);
}

TEST(RetryBudget, CapsRetriesAtTheFractionOfFirstSends) {
  RetryBudget b(0.1, 5);
  int retries = 0;
  for (int i = 0; i < 1000; ++i) {
    b.onFirstSend();
    retries += b.trySpend() ? 1 : 0;
  }
  // The burst, then one retry per ten requests.
  EXPECT_GE(retries, 100);
  EXPECT_LE(retries, 105);
  EXPECT_EQ(b.refusals(), static_cast<std::uint64_t>(1000 - retries));
}

TEST(CircuitBreaker, OpensAfterThresholdAndClosesOnAnAnswer) {
  CircuitBreaker b(3);
  EXPECT_FALSE(b.onFailed(at(1s)));
  b.onAnswered();  // An answer in between resets the streak.
  EXPECT_FALSE(b.onFailed(at(2s)));
  EXPECT_FALSE(b.onFailed(at(3s)));
  EXPECT_TRUE(b.onFailed(at(4s)));
  EXPECT_TRUE(b.open());
  EXPECT_FALSE(b.onFailed(at(5s)));      // Opens once.
  EXPECT_FALSE(b.probeAllowed(at(3s)));  // A batch from before the failures: no probe.
  EXPECT_TRUE(b.probeAllowed(at(4s)));
  EXPECT_TRUE(b.probeAllowed(at(6s)));
  b.onAnswered();
  EXPECT_FALSE(b.open());
  EXPECT_EQ(b.consecutiveFailures(), 0);
}

TEST(CircuitBreaker, ThresholdZeroNeverOpens) {
  CircuitBreaker b(0);
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(b.onFailed(at(1s * i)));
  EXPECT_FALSE(b.open());
}

TEST(FlowControl, FixedPolicyIsTheGivenLimits) {
  FlowControl f(MadPolicy::kFixed, {.window = 256, .perTargetWindow = 4, .timeout = 200ms}, {});
  const Lid lid(7);
  for (int i = 0; i < 10; ++i) {
    FlowControl::TimeoutCuts cuts;
    f.onTimeout(lid, at(1s * i), true, at(1s * i + 200ms), cuts);
    EXPECT_FALSE(cuts.targetBefore || cuts.overallBefore);
    EXPECT_TRUE(f.mayRetry());
    EXPECT_FALSE(f.onRequestFailed(lid, at(1s * i + 1s)));
  }
  EXPECT_EQ(f.window(), 256);
  EXPECT_EQ(f.perTargetWindow(lid), 4);
  EXPECT_EQ(f.attemptTimeout(lid, false), 200ms);
  EXPECT_EQ(f.admit(lid, at(100s), false), FlowControl::Admission::kSend);
}

TEST(FlowControl, ASpuriousTimeoutUndoesItsWindowCutsAndItsBackOff) {
  FlowControl f(MadPolicy::kAdaptive, {.window = 64, .perTargetWindow = 4, .timeout = 200ms},
                {.initialWindow = 64});
  const Lid lid(7);
  f.onAnswered(lid, 10ms, false, {});
  const Clock::duration rto = f.targetRto(lid);
  FlowControl::TimeoutCuts cuts;
  f.onTimeout(lid, at(1s), true, at(1s) + rto, cuts);  // The first attempt's timer fires...
  EXPECT_EQ(f.window(), 32);
  EXPECT_EQ(f.perTargetWindow(lid), 2);
  EXPECT_EQ(f.targetRto(lid), 2 * rto);
  ASSERT_TRUE(cuts.targetBefore && cuts.overallBefore);
  // ...and its answer comes after the re-send went out: the timeout was premature.
  f.onAnswered(lid, 250ms, true, cuts);
  EXPECT_EQ(f.window(), 64);  // Restored (the answer's +1 is capped at the maximum).
  EXPECT_EQ(f.perTargetWindow(lid), 4);
  EXPECT_GT(f.targetRto(lid), 250ms);  // The 250 ms sample, not the doubled timer.
  EXPECT_EQ(f.spuriousTimeouts(), 1u);
  EXPECT_EQ(f.cutsUndone(), 2u);

  // A genuine loss (the re-send is answered) keeps its cut.
  FlowControl::TimeoutCuts lost;
  f.onTimeout(lid, at(5s), true, at(6s), lost);
  f.onAnswered(lid, 10ms, false, lost);
  EXPECT_LT(f.window(), 64);
  EXPECT_EQ(f.spuriousTimeouts(), 1u);
}

TEST(FlowControl, ALateReplyIsASampleAndClosesTheBreaker) {
  FlowControl f(MadPolicy::kAdaptive, {.window = 64, .perTargetWindow = 4, .timeout = 200ms},
                {.breakerAfter = 2});
  const Lid lid(9);
  EXPECT_FALSE(f.onRequestFailed(lid, at(1s)));
  EXPECT_TRUE(f.onRequestFailed(lid, at(2s)));
  ASSERT_TRUE(f.breakerOpen(lid));
  f.onLateAnswer(lid, 900ms);  // It answers, slower than its timer.
  EXPECT_FALSE(f.breakerOpen(lid));
  EXPECT_EQ(f.openBreakers(), 0u);
  EXPECT_GT(f.targetRto(lid), 900ms);
  EXPECT_EQ(f.overallRtt().srtt(), 900ms);
  EXPECT_EQ(f.spuriousTimeouts(), 1u);
}

TEST(FlowControl, PolicyNames) {
  EXPECT_TRUE(parseMadPolicy("adaptive") == MadPolicy::kAdaptive);
  EXPECT_TRUE(parseMadPolicy("fixed") == MadPolicy::kFixed);
  EXPECT_FALSE(parseMadPolicy("aimd"));
  EXPECT_STREQ(toString(MadPolicy::kFixed), "fixed");
}

TEST(FlowControl, DirectedRouteSmpsShareNoBreaker) {
  // Every directed-route SMP goes to the permissive LID, whichever switch it is for.
  FlowControl f(MadPolicy::kAdaptive, {}, {});
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(f.onRequestFailed(Lid(0xFFFF), at(1s * i)));
  EXPECT_EQ(f.admit(Lid(0xFFFF), at(100s), false), FlowControl::Admission::kSend);
  for (int i = 0; i < 2; ++i) EXPECT_FALSE(f.onRequestFailed(Lid(7), at(1s * i)));
  EXPECT_TRUE(f.onRequestFailed(Lid(7), at(3s)));
  EXPECT_EQ(f.admit(Lid(7), at(2s), false), FlowControl::Admission::kRefuse);
  EXPECT_EQ(f.admit(Lid(7), at(4s), false), FlowControl::Admission::kProbe);
  EXPECT_EQ(f.admit(Lid(7), at(4s), true), FlowControl::Admission::kRefuse);
  EXPECT_EQ(f.openBreakers(), 1u);
}

}  // namespace
}  // namespace ibfabric::mad
