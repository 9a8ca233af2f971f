// FlowControl: the MAD engine's policy — how many requests go out at once, overall and to one
// LID, how long an attempt waits, whether a retry may go out, and whether a target is sent to.
//
// kFixed is the engine as it always was: `window` overall, `perTargetWindow` per LID, `timeout`
// per attempt, every retry allowed, every target sent to. kAdaptive (the default) makes those
// limits follow the fabric:
//   * windows: an AimdWindow overall within [minWindow, window] (starting at initialWindow) and
//     one per LID within [minPerTargetWindow, perTargetWindow] (starting at the maximum); every
//     answer grows both, an engine-timer timeout cuts the target's window, and a first attempt's
//     timeout also the overall one (a retry's loss belongs to its first attempt's episode, and a
//     target that is not answering at all is its own window's and breaker's business);
//   * timeouts: one RttEstimator per LID (seeded from the overall one, which sees every sample)
//     with `timeout` as the initial RTO, clamped to [timeoutMin, timeoutMax]; a timeout backs the
//     target's RTO off, so each retry waits twice as long. Every attempt has its own TID, so an
//     answer says which attempt it answers and is always an unambiguous sample (Karn's rule is
//     for transports that cannot tell; MADs can), re-sent requests and late replies included;
//   * spurious timeouts (Eifel, RFC 3522, with the TID as the timestamp): an answer to an attempt
//     older than the request's last one proves its timeout premature: the window cuts that
//     request's timeouts made are undone (if no later cut happened) and its sample replaces the
//     backed-off RTO; a reply to a request that had already failed is a sample too and closes the
//     target's breaker (it answers, only slower than its timer);
//   * a RetryBudget: `retryBudget` retry tokens per first send, at most `retryBurst` saved;
//   * a CircuitBreaker per LID: after `breakerAfter` failed requests in a row its requests
//     complete kTargetDown without being sent, except one probe (one attempt, the overall RTO)
//     per batch admitted after the breaker opened; the batch's other requests to it wait for the
//     probe: sent if it was answered (the breaker closed), refused if not. Not for the permissive
//     LID: every directed-route SMP goes there, whatever switch it is for.
// Transport-reported losses (umad status != 0) come back at once: they are retried (within the
// budget) and count against the breaker, but they say nothing about queueing delay, so they
// neither cut a window nor back off a timer.
//
// Owned by the MadEngine and used on its I/O thread only; not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "discovery/types.h"
#include "telemetry/clock.h"
#include "telemetry/mad_policy/aimd_window.h"
#include "telemetry/mad_policy/circuit_breaker.h"
#include "telemetry/mad_policy/retry_budget.h"
#include "telemetry/mad_policy/rtt_estimator.h"

namespace ibfabric::mad {

enum class MadPolicy { kAdaptive, kFixed };

const char* toString(MadPolicy policy);
/// "adaptive" or "fixed"; nullopt otherwise.
std::optional<MadPolicy> parseMadPolicy(std::string_view text);

/// The bounds of the adaptive policy; the maxima are MadEngineOptions' window, perTargetWindow
/// (initial timeout: timeout; most re-sends: retries).
struct AdaptiveOptions {
  int minWindow = 8;
  int initialWindow = 32;
  int minPerTargetWindow = 1;
  /// No lower than the fixed policy's 200 ms: on a shared plane (ibsim with an ibqueryerrors loop
  /// beside a 10,240-HCA sweep) a 20 ms floor took queueing delay for loss, and the spurious
  /// re-sends and window cuts collapsed the sweeps (docs/BENCHMARKS.md, 2026-12-02 21:00).
  Clock::duration timeoutMin = std::chrono::milliseconds(200);
  Clock::duration timeoutMax = std::chrono::seconds(2);
  double retryBudget = 0.1;  ///< Retry tokens earned per first send.
  double retryBurst = 100;   ///< Tokens saved at most (and at start).
  int breakerAfter = 3;      ///< Failed requests in a row that open a target's breaker; 0 = off.
};

class FlowControl {
 public:
  struct Limits {
    int window = 256;
    int perTargetWindow = 4;  ///< 0: no per-target limit.
    Clock::duration timeout = std::chrono::milliseconds(200);
  };
  enum class Admission : std::uint8_t {
    kSend,    ///< An ordinary request.
    kProbe,   ///< The target's breaker is open; this is its one probe in the batch (one attempt).
    kRefuse,  ///< The target's breaker is open: complete kTargetDown without sending.
  };

  /// What one request's timeouts cut, kept with the request so that a timeout that proves
  /// spurious can be undone: the state before its first cut and the number of its last one.
  struct TimeoutCuts {
    std::optional<AimdWindow::State> targetBefore;
    std::optional<AimdWindow::State> overallBefore;
    std::uint64_t targetCut = 0;
    std::uint64_t overallCut = 0;
  };

  FlowControl(MadPolicy policy, Limits limits, AdaptiveOptions adaptive);

  MadPolicy policy() const { return policy_; }
  bool adaptive() const { return policy_ == MadPolicy::kAdaptive; }

  int window() const;
  /// In flight to `lid` at most; 0 = no limit. 1 while its breaker is open: the probe goes out
  /// and the batch's other requests to it wait for the answer (sent if it closes the breaker,
  /// refused if not), so a target that is back is swept whole at once.
  int perTargetWindow(Lid lid) const;
  /// The timer of an attempt to `lid`; a probe waits the overall RTO, not the target's own.
  Clock::duration attemptTimeout(Lid lid, bool probe);
  /// What to do with the next request to `lid` of a batch admitted at `batchAdmittedAt` that has
  /// (`batchProbed`) or has not yet sent a probe to it.
  Admission admit(Lid lid, Clock::time_point batchAdmittedAt, bool batchProbed);

  void onFirstSend();
  /// Whether a retry may go out (spends a retry token under kAdaptive).
  bool mayRetry();
  /// A request to `lid` was answered `rtt` after the answered attempt was sent. `spurious`: the
  /// answered attempt was not the last one sent, and `cuts` are what the request's timeouts cut.
  void onAnswered(Lid lid, Clock::duration rtt, bool spurious, const TimeoutCuts& cuts);
  /// A reply came `rtt` after its attempt for a request to `lid` that had already failed.
  void onLateAnswer(Lid lid, Clock::duration rtt);
  /// The engine timer expired on an attempt to `lid` sent at `sentAt`; what it cut is added to
  /// the request's `cuts`.
  void onTimeout(Lid lid, Clock::time_point sentAt, bool firstAttempt, Clock::time_point now,
                 TimeoutCuts& cuts);
  /// A request to `lid` failed (every attempt); true if this opened the target's breaker.
  bool onRequestFailed(Lid lid, Clock::time_point now);

  // Observers for the engine's stats.
  const RttEstimator& overallRtt() const { return overallRtt_; }
  const AimdWindow& overallWindow() const { return window_; }
  const RetryBudget& retryBudget() const { return budget_; }
  Clock::duration targetRto(Lid lid) const;
  int targetWindow(Lid lid) const { return perTargetWindow(lid); }
  bool breakerOpen(Lid lid) const;
  std::size_t openBreakers() const { return openBreakers_; }
  /// Cuts of the per-target windows, all targets together.
  std::uint64_t targetWindowDecreases() const { return targetDecreases_; }
  /// Timeouts proved premature by a later answer; the window cuts undone because of them.
  std::uint64_t spuriousTimeouts() const { return spurious_; }
  std::uint64_t cutsUndone() const { return cutsUndone_; }

 private:
  struct Target {
    AimdWindow window;
    RttEstimator rtt;
    CircuitBreaker breaker;
  };
  Target& target(Lid lid);
  const Target* findTarget(Lid lid) const;

  MadPolicy policy_;
  Limits limits_;
  AdaptiveOptions adaptive_;
  RttEstimator::Bounds rttBounds_;
  AimdWindow window_;
  RttEstimator overallRtt_;
  RetryBudget budget_;
  std::unordered_map<Lid, Target> targets_;
  std::size_t openBreakers_ = 0;
  std::uint64_t targetDecreases_ = 0;
  std::uint64_t spurious_ = 0;
  std::uint64_t cutsUndone_ = 0;
};

}  // namespace ibfabric::mad
