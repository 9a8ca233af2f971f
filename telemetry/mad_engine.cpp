#include "telemetry/mad_engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cassert>

namespace ibfabric::mad {
namespace {

// Remembered finished TIDs, to tell duplicates and late replies from strangers.
constexpr std::size_t kRetiredMemory = 1 << 16;

}  // namespace

const char* toString(MadOutcome outcome) {
  switch (outcome) {
    case MadOutcome::kOk:
      return "ok";
    case MadOutcome::kTimeout:
      return "timeout";
    case MadOutcome::kTargetDown:
      return "target-down";
    case MadOutcome::kAborted:
      return "aborted";
  }
  return "?";
}

// ---- MadBatch --------------------------------------------------------------------------------

bool MadBatch::done() const {
  std::lock_guard lock(mu_);
  return finished_;
}

void MadBatch::wait() const {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return finished_; });
}

bool MadBatch::waitFor(std::chrono::nanoseconds realTime) {
  std::unique_lock lock(mu_);
  if (cv_.wait_for(lock, realTime, [this] { return finished_; })) return true;
  for (std::size_t i = 0; i < results_.size(); ++i) {
    if (!completed_[i]) results_[i].outcome = MadOutcome::kAborted;
  }
  finished_ = true;
  cv_.notify_all();
  return false;
}

bool MadBatch::complete(std::size_t index, const MadResult& result) {
  std::lock_guard lock(mu_);
  if (finished_ || completed_[index]) return false;
  results_[index] = result;
  completed_[index] = true;
  if (--remaining_ == 0) {
    finished_ = true;
    cv_.notify_all();
  }
  return true;
}

// ---- MadEngine -------------------------------------------------------------------------------

MadEngine::MadEngine(MadTransport& transport, const Clock& clock, MadEngineOptions options)
    : transport_(transport),
      clock_(clock),
      options_(options),
      flow_(options.policy, {options.window, options.perTargetWindow, options.timeout},
            options.adaptive) {
  assert(options_.window >= 1);
  stats_.policy = options_.policy;
  stats_.windowMin = flow_.overallWindow().min();
  stats_.windowMax = flow_.overallWindow().max();
  stats_.targetWindowMax = options_.perTargetWindow;
  publishFlow(Lid{});
  stats_.targets.clear();
  io_ = std::thread([this] { ioLoop(); });
}

MadEngine::~MadEngine() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  io_.join();
}

MadBatchPtr MadEngine::submit(std::vector<MadRequest> requests) {
  return submit(std::move(requests), Clock::time_point::max());
}

MadBatchPtr MadEngine::submit(std::vector<MadRequest> requests, Clock::time_point deadline) {
  auto batch = std::make_shared<MadBatch>(requests.size());
  if (requests.empty()) return batch;
  {
    std::lock_guard lock(mu_);
    if (stop_) {
      batch->waitFor(std::chrono::nanoseconds::zero());
      return batch;
    }
    incoming_.push_back(Submission{batch, std::move(requests), deadline});
  }
  cv_.notify_all();
  return batch;
}

std::vector<MadResult> MadEngine::run(std::vector<MadRequest> requests) {
  MadBatchPtr batch = submit(std::move(requests));
  auto guard =
      std::max<std::chrono::nanoseconds>(2 * options_.batchWatchdog, std::chrono::seconds(10));
  if (!batch->waitFor(guard)) {
    spdlog::error("mad engine: batch of {} still running after {} s of wall time; abandoned",
                  batch->size(), std::chrono::duration_cast<std::chrono::seconds>(guard).count());
  }
  return batch->results();
}

MadEngineStats MadEngine::stats() const {
  std::lock_guard lock(statsMu_);
  return stats_;
}

void MadEngine::ioLoop() {
  std::vector<Submission> incoming;
  while (true) {
    {
      std::unique_lock lock(mu_);
      if (queued_ == 0 && inFlight_.empty()) {
        cv_.wait(lock, [this] { return stop_ || !incoming_.empty(); });
      }
      if (stop_) break;
      incoming.swap(incoming_);
    }
    auto now = clock_.now();
    if (!incoming.empty()) admit(incoming, now);
    expireAttempts(now);
    checkWatchdogs(now);
    fillWindow(now);
    if (inFlight_.empty()) continue;

    auto wait = options_.idlePoll;
    if (!deadlines_.empty()) wait = std::min(wait, deadlines_.begin()->first - now);
    if (wait < Clock::duration::zero()) wait = Clock::duration::zero();
    ReceiveResult r = transport_.receive(wait);
    now = clock_.now();
    // Replies that are already queued are taken without waiting (through umad2sim that costs no
    // system call), up to one window's worth, before timers and the window are serviced again.
    for (int drained = 0; r.status == ReceiveStatus::kMad; ++drained) {
      handleReply(r.mad, now);
      if (drained >= flow_.window() || inFlight_.empty()) break;
      r = transport_.receive(Clock::duration::zero());
    }
    if (r.status == ReceiveStatus::kError) {
      std::uint64_t n;
      {
        std::lock_guard lock(statsMu_);
        n = ++stats_.transportErrors;
      }
      if ((n & (n - 1)) == 0) spdlog::warn("mad engine: receive failed ({} times): {}", n, r.error);
      // A transport that cannot work until it is reopened (the MAD proxy child exited): what is
      // open fails now, not request by request over its timeouts and retries while every
      // receive fails at once (a spin until the batch watchdog). The owner reads fatalError().
      if (!transport_.fatalError().empty()) abortOpen(now);
    }
  }
  abortEverything(clock_.now());
}

void MadEngine::admit(std::vector<Submission>& incoming, Clock::time_point now) {
  for (Submission& s : incoming) {
    ActiveBatch& ab = active_.emplace_back();
    ab.batch = std::move(s.batch);
    ab.requests = std::move(s.requests);
    ab.deadline = std::min(now + options_.batchWatchdog, s.deadline);
    ab.admittedAt = now;
    ab.open = ab.requests.size();
    for (std::size_t i = 0; i < ab.requests.size(); ++i) {
      auto slot = std::make_unique<Slot>();
      slot->batch = &ab;
      slot->index = i;
      const Lid lid = ab.requests[i].to.lid;
      queues_[lid].queue.push_back(std::move(slot));
      ++queued_;
      markReady(lid);
    }
  }
  incoming.clear();
}

void MadEngine::expireAttempts(Clock::time_point now) {
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    Slot* slot = deadlines_.begin()->second;
    deadlines_.erase(deadlines_.begin());
    const Lid lid = slot->batch->requests[slot->index].to.lid;
    flow_.onTimeout(lid, slot->lastSent, slot->attempts == 1, now, slot->cuts);
    {
      std::lock_guard lock(statsMu_);
      ++stats_.timeouts;
      ++stats_.targets[lid].timeouts;
      publishFlow(lid);
    }
    attemptFailed(slot, now);
  }
}

int MadEngine::retryLimit(const Slot* slot) const {
  if (slot->probe) return 0;
  const int perRequest = slot->batch->requests[slot->index].retries;
  return perRequest >= 0 ? perRequest : options_.retries;
}

void MadEngine::attemptFailed(Slot* slot, Clock::time_point now) {
  if (slot->attempts > retryLimit(slot)) {
    finish(slot, MadOutcome::kTimeout, nullptr, now);
    return;
  }
  const bool allowed = flow_.mayRetry();
  {
    std::lock_guard lock(statsMu_);
    ++(allowed ? stats_.retries : stats_.retriesRefused);
    stats_.retryTokens = flow_.retryBudget().tokens();
  }
  if (allowed) {
    sendAttempt(slot, now);
  } else {
    finish(slot, MadOutcome::kTimeout, nullptr, now);
  }
}

void MadEngine::checkWatchdogs(Clock::time_point now) {
  for (ActiveBatch& ab : active_) {
    if (ab.deadline > now || ab.open == 0) continue;
    spdlog::warn("mad engine: batch watchdog expired with {} of {} requests open; aborting them",
                 ab.open, ab.requests.size());
    {
      std::lock_guard lock(statsMu_);
      ++stats_.watchdogFired;
    }
    std::vector<Slot*> victims;
    for (auto& [ptr, owned] : inFlight_) {
      if (ptr->batch == &ab) victims.push_back(ptr);
    }
    for (Slot* v : victims) finish(v, MadOutcome::kAborted, nullptr, now);
    for (auto& q : takeQueued(&ab)) finish(q.get(), MadOutcome::kAborted, nullptr, now);
  }
  active_.remove_if([](const ActiveBatch& ab) { return ab.open == 0; });
}

void MadEngine::fillWindow(Clock::time_point now) {
  while (inFlight_.size() < static_cast<std::size_t>(flow_.window()) && !ready_.empty()) {
    const Lid lid = ready_.front();
    ready_.pop_front();
    TargetQueue& tq = queues_[lid];
    tq.ready = false;
    if (tq.queue.empty()) continue;
    std::unique_ptr<Slot> owned = std::move(tq.queue.front());
    tq.queue.pop_front();
    --queued_;
    Slot* slot = owned.get();
    if (!admitToWire(slot, now)) {
      markReady(lid);
      continue;
    }
    ++tq.inFlight;
    owned->firstSent = now;
    inFlight_.emplace(slot, std::move(owned));
    sendAttempt(slot, now);
    markReady(lid);
  }
  std::lock_guard lock(statsMu_);
  stats_.maxInFlight = std::max<std::uint64_t>(stats_.maxInFlight, inFlight_.size());
  active_.remove_if([](const ActiveBatch& ab) { return ab.open == 0; });
}

bool MadEngine::admitToWire(Slot* slot, Clock::time_point now) {
  ActiveBatch& ab = *slot->batch;
  const Lid lid = ab.requests[slot->index].to.lid;
  if (ab.downTargets.contains(lid)) {
    finish(slot, MadOutcome::kTargetDown, nullptr, now);
    return false;
  }
  switch (flow_.admit(lid, ab.admittedAt, ab.probed.contains(lid))) {
    case FlowControl::Admission::kSend:
      return true;
    case FlowControl::Admission::kProbe: {
      slot->probe = true;
      ab.probed.insert(lid);
      std::lock_guard lock(statsMu_);
      ++stats_.probes;
      return true;
    }
    case FlowControl::Admission::kRefuse:
      break;
  }
  {
    std::lock_guard lock(statsMu_);
    ++stats_.breakerSkipped;
  }
  finish(slot, MadOutcome::kTargetDown, nullptr, now);
  return false;
}

void MadEngine::markReady(Lid lid) {
  TargetQueue& tq = queues_[lid];
  if (tq.ready || tq.queue.empty()) return;
  const int perTarget = flow_.perTargetWindow(lid);
  if (perTarget > 0 && tq.inFlight >= perTarget) return;
  tq.ready = true;
  ready_.push_back(lid);
}

std::vector<std::unique_ptr<MadEngine::Slot>> MadEngine::takeQueued(const ActiveBatch* batch) {
  std::vector<std::unique_ptr<Slot>> taken;
  for (auto& [lid, tq] : queues_) {
    std::deque<std::unique_ptr<Slot>> keep;
    for (auto& s : tq.queue) {
      if (batch == nullptr || s->batch == batch) {
        taken.push_back(std::move(s));
      } else {
        keep.push_back(std::move(s));
      }
    }
    tq.queue.swap(keep);
  }
  queued_ -= taken.size();
  return taken;
}

void MadEngine::sendAttempt(Slot* slot, Clock::time_point now) {
  const MadRequest& req = slot->batch->requests[slot->index];
  std::uint32_t tid = nextTid_++;
  if (tid == 0) tid = nextTid_++;  // Zero stands out as "unset"; skip it on wrap.
  MadBuffer mad = req.mad;
  setTransactionId(mad, tid);
  if (slot->attempts == 0) flow_.onFirstSend();
  slot->attempts++;
  slot->currentTid = tid;
  slot->sent.push_back({tid, now});
  slot->lastSent = now;
  slot->deadline = now + flow_.attemptTimeout(req.to.lid, slot->probe);
  liveTids_[tid] = slot;
  deadlines_.emplace(slot->deadline, slot);
  const int rc = transport_.send(req.to, mad);
  std::lock_guard lock(statsMu_);
  ++stats_.sent;
  ++stats_.targets[req.to.lid].sent;
  if (rc != 0) {
    // Counted as a lost attempt: it times out like one, which also paces the retries.
    ++stats_.sendErrors;
    slot->lastStatus = rc;
  }
}

void MadEngine::handleStaleReply(const ReceivedMad& rm, std::uint32_t tid, Clock::time_point now) {
  auto old = retired_.find(tid);
  if (old != retired_.end() && rm.umadStatus == 0 && old->second.kind == Retired::Kind::kFailed)
    flow_.onLateAnswer(old->second.lid, now - old->second.sentAt);
  std::lock_guard lock(statsMu_);
  if (old == retired_.end()) {
    ++stats_.unmatched;
  } else if (rm.umadStatus != 0) {
    // The transport's report of a lost attempt that no longer matters.
  } else if (old->second.kind == Retired::Kind::kAnswered) {
    ++stats_.duplicates;
  } else {
    ++stats_.lateReplies;
    publishFlow(old->second.lid);
  }
}

void MadEngine::handleReply(const ReceivedMad& rm, Clock::time_point now) {
  const std::uint32_t tid = lowTransactionId(transactionId(rm.mad));
  auto live = liveTids_.find(tid);
  if (live == liveTids_.end()) {
    handleStaleReply(rm, tid, now);
    return;
  }
  Slot* slot = live->second;
  if (rm.umadStatus != 0) {
    // Lost on the way (umad2sim answers an undeliverable MAD at once with status 110). Only the
    // current attempt matters; an older attempt's report changes nothing.
    slot->lastStatus = rm.umadStatus;
    if (tid != slot->currentTid) return;
    deadlines_.erase({slot->deadline, slot});
    {
      std::lock_guard lock(statsMu_);
      ++stats_.lostReported;
      ++stats_.targets[slot->batch->requests[slot->index].to.lid].timeouts;
    }
    attemptFailed(slot, now);
    return;
  }
  // The TID names the attempt answered: its round trip is exact, and an answer to an attempt
  // older than the last one sent proves the timeout that re-sent it premature.
  const Lid lid = slot->batch->requests[slot->index].to.lid;
  auto answered = std::find_if(slot->sent.begin(), slot->sent.end(),
                               [tid](const Slot::Attempt& a) { return a.tid == tid; });
  const Clock::time_point sentAt = answered != slot->sent.end() ? answered->sentAt : slot->lastSent;
  flow_.onAnswered(lid, now - sentAt, tid != slot->currentTid, slot->cuts);
  {
    std::lock_guard lock(statsMu_);
    ++stats_.received;
    publishFlow(lid);
  }
  finish(slot, MadOutcome::kOk, &rm.mad, now);
}

void MadEngine::finish(Slot* slot, MadOutcome outcome, const MadBuffer* reply,
                       Clock::time_point now) {
  ActiveBatch& ab = *slot->batch;
  const MadRequest& req = ab.requests[slot->index];
  const Lid lid = req.to.lid;

  MadResult result;
  result.outcome = outcome;
  if (reply) result.reply = *reply;
  result.attempts = slot->attempts;
  result.latency = slot->attempts > 0 ? now - slot->firstSent : Clock::duration::zero();
  result.completedAt = now;
  result.lastTransportStatus = slot->lastStatus;

  const bool opened = outcome == MadOutcome::kTimeout && flow_.onRequestFailed(lid, now);
  if (opened) {
    spdlog::info(
        "mad engine: lid {} failed {} requests in a row; breaker open, one probe per batch",
        lid.value(), options_.adaptive.breakerAfter);
  }
  {
    std::lock_guard lock(statsMu_);
    if (opened) ++stats_.breakerOpens;
    publishFlow(lid);
    TargetStats& ts = stats_.targets[lid];
    switch (outcome) {
      case MadOutcome::kOk:
        ++stats_.completedOk;
        ++ts.answered;
        ts.consecutiveFailures = 0;
        break;
      case MadOutcome::kTimeout:
        ++stats_.failed;
        ++ts.failures;
        ++ts.consecutiveFailures;
        break;
      case MadOutcome::kTargetDown:
        ++stats_.targetDown;
        break;
      case MadOutcome::kAborted:
        ++stats_.aborted;
        break;
    }
  }
  if (options_.failFastAfter > 0) {
    // Consecutive failures of one target within this batch.
    int& streak = ab.failureStreak[lid];
    if (outcome == MadOutcome::kOk) {
      streak = 0;
    } else if (outcome == MadOutcome::kTimeout && ++streak >= options_.failFastAfter &&
               ab.downTargets.insert(lid).second) {
      spdlog::info("mad engine: lid {} failed {} requests in a row; skipping the rest of its batch",
                   lid.value(), streak);
    }
  }

  std::unique_ptr<Slot> owned;
  if (auto it = inFlight_.find(slot); it != inFlight_.end()) {
    owned = std::move(it->second);
    inFlight_.erase(it);
    --queues_[lid].inFlight;
    deadlines_.erase({slot->deadline, slot});
    const Retired::Kind kind =
        outcome == MadOutcome::kOk ? Retired::Kind::kAnswered : Retired::Kind::kFailed;
    for (const Slot::Attempt& a : slot->sent) {
      liveTids_.erase(a.tid);
      retire(a.tid, {kind, lid, a.sentAt});
    }
  }
  --ab.open;
  markReady(lid);
  // The callback runs before the batch can finish, so a waiter never sees it still running
  // (unless the waiter abandoned the batch, in which case it is skipped).
  if (req.onComplete && !ab.batch->done()) req.onComplete(result);
  ab.batch->complete(slot->index, result);
}

void MadEngine::publishFlow(Lid lid) {
  stats_.window = flow_.window();
  stats_.windowDecreases = flow_.overallWindow().decreases();
  stats_.targetWindowDecreases = flow_.targetWindowDecreases();
  stats_.spuriousTimeouts = flow_.spuriousTimeouts();
  stats_.windowCutsUndone = flow_.cutsUndone();
  stats_.srtt = flow_.overallRtt().srtt();
  stats_.rttvar = flow_.overallRtt().rttvar();
  stats_.rto = flow_.overallRtt().rto();
  stats_.retryTokens = flow_.retryBudget().tokens();
  stats_.openBreakers = flow_.openBreakers();
  TargetStats& ts = stats_.targets[lid];
  ts.window = flow_.targetWindow(lid);
  ts.rto = flow_.targetRto(lid);
  ts.breakerOpen = flow_.breakerOpen(lid);
}

void MadEngine::retire(std::uint32_t tid, Retired retired) {
  retired_.insert_or_assign(tid, retired);
  retiredOrder_.push_back(tid);
  if (retiredOrder_.size() > kRetiredMemory) {
    retired_.erase(retiredOrder_.front());
    retiredOrder_.pop_front();
  }
}

void MadEngine::abortOpen(Clock::time_point now) {
  std::vector<Slot*> victims;
  for (auto& [ptr, owned] : inFlight_) victims.push_back(ptr);
  for (Slot* v : victims) finish(v, MadOutcome::kAborted, nullptr, now);
  for (auto& q : takeQueued(nullptr)) finish(q.get(), MadOutcome::kAborted, nullptr, now);
  active_.remove_if([](const ActiveBatch& ab) { return ab.open == 0; });
}

void MadEngine::abortEverything(Clock::time_point now) {
  abortOpen(now);
  {
    std::lock_guard lock(mu_);
    for (Submission& s : incoming_) s.batch->waitFor(std::chrono::nanoseconds::zero());
    incoming_.clear();
  }
  active_.clear();
}

}  // namespace ibfabric::mad
