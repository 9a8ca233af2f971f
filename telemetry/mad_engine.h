// MadEngine: asynchronous MAD requests with a window, per-MAD timeouts and retries.
//
// The engine owns one I/O thread that both sends and receives through a MadTransport: it keeps
// at most `window` requests in flight, sends the next one as soon as a reply (or a timeout)
// frees a slot, and matches replies on the low 32 bits of the transaction id (umad2sim and the
// kernel put the agent id in bits 32..47). It keeps its own timers (no kernel timeouts through
// umad2sim): a request unanswered for `timeout` is re-sent with a fresh TID up to `retries`
// times. A reply to an earlier attempt of a still-open request completes it; any reply for a
// finished request is ignored and counted (duplicate after success, late after failure).
//
// No head-of-line blocking: at most `perTargetWindow` requests to one LID are in flight, so a
// dead node holds a few slots while its requests time out and everything else keeps flowing.
// With `failFastAfter` > 0, once that many requests to one LID have failed in a row in a batch,
// its remaining requests in that batch complete with kTargetDown without being sent.
// The limits follow MadEngineOptions::policy (telemetry/mad_policy/flow_control.h): kFixed keeps
// `window`, `perTargetWindow`, `timeout` and `retries` as given; kAdaptive (the default) treats
// them as maxima (and the initial timeout) and adapts the windows (AIMD), the per-attempt timeout
// (RTO from measured round trips), caps retries with a budget, and opens a circuit breaker on a LID
// that stopped answering: its requests then complete kTargetDown without being sent, except one
// probe per batch (the batch's other requests to it wait for the probe's answer); a probe answered
// closes it. That state lives in the engine, across batches. Every batch has a watchdog
// (`batchWatchdog`, on the engine clock): when it expires, its unfinished requests complete with
// kAborted, so a batch always ends.
//
// Thread-safety: submit(), run(), stats() and the destructor may be called from any thread.
// Completion callbacks run on the I/O thread: keep them short and never wait on a batch from
// one. The transport must be open before the engine is constructed and must outlive it; the
// engine is the transport's only user while it exists.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "telemetry/clock.h"
#include "telemetry/mad_packet.h"
#include "telemetry/mad_policy/flow_control.h"
#include "telemetry/mad_transport.h"

namespace ibfabric::mad {

enum class MadOutcome {
  kOk,          ///< A reply arrived; `MadResult::reply` holds it (check madStatus()).
  kTimeout,     ///< Every attempt went unanswered (or the transport reported it lost).
  kTargetDown,  ///< Not sent: the target failed `failFastAfter` requests in a row this batch,
                ///< or its circuit breaker is open (kAdaptive).
  kAborted,     ///< The batch watchdog expired or the engine stopped first.
};

const char* toString(MadOutcome outcome);

struct MadResult {
  MadOutcome outcome = MadOutcome::kAborted;
  MadBuffer reply{};
  int attempts = 0;                 ///< Sends made for this request.
  Clock::duration latency{};        ///< First send to completion.
  Clock::time_point completedAt{};  ///< Engine clock when the request completed (reply arrival).
  int lastTransportStatus = 0;      ///< Last non-zero umad status or send errno seen, else 0.
  bool ok() const { return outcome == MadOutcome::kOk; }
};

struct MadRequest {
  MadAddress to;
  MadBuffer mad{};  ///< A built request; the engine writes the transaction id.
  /// Optional; runs on the I/O thread when the request completes.
  std::function<void(const MadResult&)> onComplete;
  /// Re-sends after the first attempt for this request; -1: MadEngineOptions::retries. 0 suits
  /// optional queries a device may not implement (an unanswered one costs one attempt).
  int retries = -1;
};

/// The requests of one submit(); results are in request order.
class MadBatch {
 public:
  explicit MadBatch(std::size_t size) : results_(size), remaining_(size) {}
  std::size_t size() const { return results_.size(); }
  bool done() const;
  void wait() const;
  /// Waits at most `realTime` (wall clock). If the batch is still not done, its unfinished
  /// requests are marked kAborted, later completions are dropped, and false is returned.
  bool waitFor(std::chrono::nanoseconds realTime);
  /// Valid once done() (or after waitFor returned).
  const std::vector<MadResult>& results() const { return results_; }

 private:
  friend class MadEngine;
  /// Stores a result; false if the batch was already finished (abandoned by waitFor).
  bool complete(std::size_t index, const MadResult& result);

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<MadResult> results_;
  std::vector<bool> completed_ = std::vector<bool>(results_.size(), false);
  std::size_t remaining_;
  bool finished_ = results_.empty();
};

using MadBatchPtr = std::shared_ptr<MadBatch>;

struct MadEngineOptions {
  /// kAdaptive: the limits below are maxima (timeout: the initial RTO) and `adaptive` holds the
  /// rest of the bounds; kFixed: they are used as given, no retry budget, no breaker.
  MadPolicy policy = MadPolicy::kAdaptive;
  AdaptiveOptions adaptive;
  /// Requests in flight at once, all targets together (>= 1). 256: the deepest window that never
  /// wedged umad2sim in the sweep benchmarks (512 wedged it every time) and the fastest there:
  /// 62-72k ports/s on the 10,240-HCA ibsim fabric vs 49-57k at 64 (docs/BENCHMARKS.md).
  int window = 256;
  int perTargetWindow = 4;  ///< In flight to one LID; 0 = only the global window.
  Clock::duration timeout = std::chrono::milliseconds(200);  ///< Per attempt (kAdaptive: initial).
  int retries = 3;                                           ///< Re-sends after the first attempt.
  int failFastAfter = 0;                                     ///< 0 = off. See the class comment.
  Clock::duration batchWatchdog = std::chrono::seconds(60);
  /// Longest single wait in the transport, so new submissions start promptly.
  Clock::duration idlePoll = std::chrono::milliseconds(5);
};

struct TargetStats {
  std::uint64_t sent = 0;      ///< Attempts.
  std::uint64_t answered = 0;  ///< Requests completed kOk.
  std::uint64_t timeouts = 0;  ///< Attempts that timed out or were reported lost.
  std::uint64_t failures = 0;  ///< Requests that ended kTimeout.
  std::uint64_t consecutiveFailures = 0;
  int window = 0;            ///< Requests allowed in flight to this LID now (0 = no limit).
  Clock::duration rto{};     ///< Timeout of this LID's next first attempt.
  bool breakerOpen = false;  ///< Requests complete kTargetDown, one probe per batch.
};

struct MadEngineStats {
  std::uint64_t sent = 0;          ///< Attempts handed to the transport.
  std::uint64_t sendErrors = 0;    ///< send() returned an error (the attempt then times out).
  std::uint64_t received = 0;      ///< Replies that completed a request.
  std::uint64_t timeouts = 0;      ///< Attempts that timed out (engine timer).
  std::uint64_t lostReported = 0;  ///< Attempts the transport returned with a failure status.
  std::uint64_t retries = 0;       ///< Re-sends.
  std::uint64_t duplicates = 0;    ///< Replies for an already answered request.
  std::uint64_t lateReplies = 0;   ///< Replies for a request that had already failed.
  /// Timeouts an answer proved premature: the reply to an earlier attempt after a re-send, or to
  /// a request that had failed (each such reply counts once).
  std::uint64_t spuriousTimeouts = 0;
  std::uint64_t windowCutsUndone = 0;  ///< Window cuts undone because their timeout was spurious.
  std::uint64_t unmatched = 0;         ///< Replies with an unknown TID.
  std::uint64_t completedOk = 0;
  std::uint64_t failed = 0;           ///< Requests that ended kTimeout.
  std::uint64_t targetDown = 0;       ///< Requests that ended kTargetDown.
  std::uint64_t aborted = 0;          ///< Requests that ended kAborted.
  std::uint64_t watchdogFired = 0;    ///< Batches whose watchdog expired.
  std::uint64_t transportErrors = 0;  ///< receive() errors.
  std::uint64_t maxInFlight = 0;      ///< High-water mark of requests in flight.
  // The policy and where it stands (telemetry/mad_policy/flow_control.h).
  MadPolicy policy = MadPolicy::kAdaptive;
  int window = 0;     ///< Requests allowed in flight overall now.
  int windowMin = 0;  ///< The bounds of `window`.
  int windowMax = 0;
  int targetWindowMax = 0;                  ///< Per-LID windows' bound (0: no per-LID limit).
  std::uint64_t windowDecreases = 0;        ///< Cuts of the overall window.
  std::uint64_t targetWindowDecreases = 0;  ///< Cuts of per-LID windows.
  Clock::duration srtt{};                   ///< Smoothed RTT of first-attempt answers.
  Clock::duration rttvar{};                 ///< Its mean deviation (RFC 6298 RTTVAR).
  Clock::duration rto{};                    ///< The timeout a LID without samples starts with.
  std::uint64_t retriesRefused = 0;         ///< Retries the budget refused (the request failed).
  double retryTokens = 0;                   ///< Retries the budget allows now.
  std::uint64_t breakerOpens = 0;           ///< Times a LID's circuit breaker opened.
  std::uint64_t openBreakers = 0;           ///< LIDs whose breaker is open now.
  std::uint64_t probes = 0;                 ///< Probes sent to LIDs with an open breaker.
  std::uint64_t breakerSkipped = 0;         ///< Requests completed kTargetDown by an open breaker.
  std::map<Lid, TargetStats> targets;
};

class MadEngine {
 public:
  MadEngine(MadTransport& transport, const Clock& clock, MadEngineOptions options = {});
  /// Stops the I/O thread; unfinished requests complete with kAborted.
  ~MadEngine();
  MadEngine(const MadEngine&) = delete;
  MadEngine& operator=(const MadEngine&) = delete;

  MadBatchPtr submit(std::vector<MadRequest> requests);
  /// The same, with a watchdog that expires at `deadline` (engine clock) if that is earlier than
  /// `batchWatchdog` after admission: the slices of one sweep share the sweep's deadline.
  MadBatchPtr submit(std::vector<MadRequest> requests, Clock::time_point deadline);
  /// submit() and wait; a wall-clock guard of twice the batch watchdog (at least 10 s) backs up
  /// the engine's own watchdog in case the transport itself blocks.
  std::vector<MadResult> run(std::vector<MadRequest> requests);
  MadEngineStats stats() const;
  const MadEngineOptions& options() const { return options_; }

 private:
  struct Submission {
    MadBatchPtr batch;
    std::vector<MadRequest> requests;
    Clock::time_point deadline = Clock::time_point::max();
  };
  struct ActiveBatch {
    MadBatchPtr batch;
    std::vector<MadRequest> requests;
    Clock::time_point deadline;
    Clock::time_point admittedAt;
    std::set<Lid> downTargets;
    std::set<Lid> probed;  ///< Targets with an open breaker that got their probe.
    std::map<Lid, int> failureStreak;
    std::size_t open = 0;  ///< Requests not yet completed by the engine.
  };
  struct Slot {
    ActiveBatch* batch = nullptr;
    std::size_t index = 0;
    int attempts = 0;
    bool probe = false;  ///< One attempt only: the target's breaker is open.
    Clock::time_point firstSent;
    Clock::time_point lastSent;
    Clock::time_point deadline;
    std::uint32_t currentTid = 0;
    struct Attempt {
      std::uint32_t tid = 0;
      Clock::time_point sentAt;
    };
    std::vector<Attempt> sent;      ///< Every attempt, oldest first.
    FlowControl::TimeoutCuts cuts;  ///< What this request's timeouts cut.
    int lastStatus = 0;
  };
  /// A finished request's TID: how it ended, and the attempt's target and send time (a late
  /// reply to it is still a round-trip sample).
  struct Retired {
    enum class Kind : std::uint8_t { kAnswered, kFailed } kind;
    Lid lid;
    Clock::time_point sentAt;
  };

  void ioLoop();
  void admit(std::vector<Submission>& incoming, Clock::time_point now);
  void expireAttempts(Clock::time_point now);
  void checkWatchdogs(Clock::time_point now);
  void fillWindow(Clock::time_point now);
  void sendAttempt(Slot* slot, Clock::time_point now);
  void attemptFailed(Slot* slot, Clock::time_point now);
  void handleReply(const ReceivedMad& mad, Clock::time_point now);
  void finish(Slot* slot, MadOutcome outcome, const MadBuffer* reply, Clock::time_point now);
  void retire(std::uint32_t tid, Retired retired);
  /// A reply whose TID is no longer live: a duplicate, a late reply, or a stranger.
  void handleStaleReply(const ReceivedMad& mad, std::uint32_t tid, Clock::time_point now);
  /// Fails every request in flight or queued (kAborted); batches not yet admitted stay.
  void abortOpen(Clock::time_point now);
  void abortEverything(Clock::time_point now);
  void markReady(Lid lid);
  /// Whether the next queued request of `slot`'s target goes out; completes it if not.
  bool admitToWire(Slot* slot, Clock::time_point now);
  int retryLimit(const Slot* slot) const;
  /// Copies the policy's state (overall and for `lid`) into stats_; statsMu_ must be held.
  void publishFlow(Lid lid);
  /// Takes the queued (not yet sent) slots of `batch` (or all, if null) out of the queues.
  std::vector<std::unique_ptr<Slot>> takeQueued(const ActiveBatch* batch);

  MadTransport& transport_;
  const Clock& clock_;
  const MadEngineOptions options_;
  FlowControl flow_;  // I/O thread only (and the constructor).

  // Shared with submitters.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Submission> incoming_;
  bool stop_ = false;

  mutable std::mutex statsMu_;
  MadEngineStats stats_;

  // I/O thread only.
  std::list<ActiveBatch> active_;
  // Queued requests per target, and the round-robin list of targets that have queued requests
  // and a free per-target slot: picking the next request is O(1) however many are blocked.
  struct TargetQueue {
    std::deque<std::unique_ptr<Slot>> queue;
    int inFlight = 0;
    bool ready = false;
  };
  std::unordered_map<Lid, TargetQueue> queues_;
  std::deque<Lid> ready_;
  std::size_t queued_ = 0;
  std::unordered_map<Slot*, std::unique_ptr<Slot>> inFlight_;
  std::unordered_map<std::uint32_t, Slot*> liveTids_;
  std::set<std::pair<Clock::time_point, Slot*>> deadlines_;
  std::unordered_map<std::uint32_t, Retired> retired_;
  std::deque<std::uint32_t> retiredOrder_;
  std::uint32_t nextTid_ = 1;

  std::thread io_;  // Last: started once everything above exists.
};

}  // namespace ibfabric::mad
