// MadEngine tests on the scripted fake transport and a fake clock: timing is deterministic and
// the tests take no real time (the fake transport advances the clock when the engine would wait).
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <map>
#include <mutex>

#include "telemetry/mad_engine.h"
#include "telemetry/pma_attributes.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_mad_transport.h"

namespace ibfabric::mad {
namespace {

using namespace std::chrono_literals;
using Reply = FakeMadTransport::Reply;

// Requests are told apart by their attribute modifier (the engine rewrites only the TID).
std::uint32_t tag(const MadBuffer& mad) { return decodeHeader(mad).attributeModifier; }

MadRequest request(std::uint16_t lid, std::uint32_t id) {
  MadBuffer mad = buildPortCountersExtendedGet(1);
  MadHeader h = decodeHeader(mad);
  h.attributeModifier = id;
  encodeHeader(mad, h);
  return MadRequest{pmaAddress(Lid(lid)), mad, nullptr};
}

std::vector<MadRequest> requests(int n, int targets = 8) {
  std::vector<MadRequest> out;
  for (int i = 0; i < n; ++i)
    out.push_back(request(static_cast<std::uint16_t>(1 + i % targets), i));
  return out;
}

struct Harness {
  explicit Harness(FakeMadTransport::Responder r, MadEngineOptions o = {})
      : transport(clock, std::move(r)) {
    std::string error;
    transport.open(error);
    engine = std::make_unique<MadEngine>(transport, clock, o);
  }
  FakeClock clock;
  FakeMadTransport transport;
  std::unique_ptr<MadEngine> engine;
};

// The fixed policy: these tests are about the engine's mechanics at exact limits (the adaptive
// policy's tests are at the end of the file).
MadEngineOptions opts(int window, int perTarget, int retries = 2, Clock::duration timeout = 100ms) {
  MadEngineOptions o;
  o.policy = MadPolicy::kFixed;
  o.window = window;
  o.perTargetWindow = perTarget;
  o.retries = retries;
  o.timeout = timeout;
  return o;
}

TEST(MadEngineTest, AllRepliesComplete) {
  Harness h([](const MadAddress&, const MadBuffer&, int) { return std::vector<Reply>{{1ms}}; });
  auto results = h.engine->run(requests(100));
  ASSERT_EQ(results.size(), 100u);
  for (std::size_t i = 0; i < results.size(); ++i) {
    ASSERT_TRUE(results[i].ok()) << i;
    EXPECT_EQ(tag(results[i].reply), i);
    EXPECT_TRUE(isResponse(results[i].reply));
    EXPECT_EQ(transactionId(results[i].reply) >> 32, FakeMadTransport::kAgentId);
    EXPECT_EQ(results[i].attempts, 1);
  }
  MadEngineStats s = h.engine->stats();
  EXPECT_EQ(s.sent, 100u);
  EXPECT_EQ(s.received, 100u);
  EXPECT_EQ(s.completedOk, 100u);
  EXPECT_EQ(s.timeouts + s.retries + s.duplicates + s.unmatched, 0u);
  EXPECT_EQ(s.targets.at(Lid(1)).answered, 13u);
}

TEST(MadEngineTest, EmptyBatchIsDoneAtOnce) {
  Harness h([](const MadAddress&, const MadBuffer&, int) { return std::vector<Reply>{}; });
  EXPECT_TRUE(h.engine->submit({})->done());
}

TEST(MadEngineTest, WindowIsNeverExceeded) {
  for (int window : {1, 4, 16}) {
    // Pseudo-random delays (fixed sequence) so replies overlap and arrive out of order.
    std::uint32_t seed = 12345;
    Harness h(
        [&seed](const MadAddress&, const MadBuffer&, int) {
          seed = seed * 1103515245u + 12345u;
          return std::vector<Reply>{{std::chrono::microseconds(100 + (seed >> 16) % 5000)}};
        },
        opts(window, 0));
    auto results = h.engine->run(requests(500));
    for (const auto& r : results) ASSERT_TRUE(r.ok());
    EXPECT_LE(h.transport.maxUnanswered(), static_cast<std::size_t>(window));
    EXPECT_EQ(h.transport.maxUnanswered(), static_cast<std::size_t>(window));
    EXPECT_EQ(h.engine->stats().maxInFlight, static_cast<std::uint64_t>(window));
  }
}

TEST(MadEngineTest, PerTargetWindowIsRespected) {
  Harness h([](const MadAddress&, const MadBuffer&, int) { return std::vector<Reply>{{2ms}}; },
            opts(16, 2));
  // One target only: the per-target cap is the binding limit.
  auto results = h.engine->run(requests(50, 1));
  for (const auto& r : results) ASSERT_TRUE(r.ok());
  EXPECT_EQ(h.transport.maxUnanswered(), 2u);
}

TEST(MadEngineTest, ReorderedRepliesMatchTheirRequests) {
  // Later requests answer sooner: replies come back in reverse order within each window.
  Harness h([](const MadAddress&, const MadBuffer& req,
               int) { return std::vector<Reply>{{std::chrono::milliseconds(50 - tag(req) % 50)}}; },
            opts(32, 0));
  auto results = h.engine->run(requests(200));
  for (std::size_t i = 0; i < results.size(); ++i) {
    ASSERT_TRUE(results[i].ok());
    EXPECT_EQ(tag(results[i].reply), i);
  }
}

TEST(MadEngineTest, LostAttemptsAreRetried) {
  // The first two attempts of every request vanish.
  std::map<std::uint32_t, int> seen;
  Harness h(
      [&seen](const MadAddress&, const MadBuffer& req, int) {
        if (seen[tag(req)]++ < 2) return std::vector<Reply>{};
        return std::vector<Reply>{{1ms}};
      },
      opts(4, 0, 3, 100ms));
  auto results = h.engine->run(requests(10));
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.attempts, 3);
    EXPECT_EQ(r.latency, 201ms);
  }
  MadEngineStats s = h.engine->stats();
  EXPECT_EQ(s.timeouts, 20u);
  EXPECT_EQ(s.retries, 20u);
  EXPECT_EQ(s.sent, 30u);
  // Every attempt carried a fresh TID.
  std::set<std::uint32_t> tids;
  for (const auto& m : h.transport.sent()) tids.insert(lowTransactionId(transactionId(m.mad)));
  EXPECT_EQ(tids.size(), 30u);
}

TEST(MadEngineTest, RetriesExhaustedIsATimeout) {
  Harness h([](const MadAddress&, const MadBuffer&, int) { return std::vector<Reply>{}; },
            opts(4, 0, 2, 50ms));
  auto results = h.engine->run(requests(3, 1));
  for (const auto& r : results) {
    EXPECT_EQ(r.outcome, MadOutcome::kTimeout);
    EXPECT_EQ(r.attempts, 3);
  }
  MadEngineStats s = h.engine->stats();
  EXPECT_EQ(s.failed, 3u);
  EXPECT_EQ(s.timeouts, 9u);
  EXPECT_EQ(s.retries, 6u);
  EXPECT_EQ(s.targets.at(Lid(1)).failures, 3u);
  EXPECT_EQ(s.targets.at(Lid(1)).consecutiveFailures, 3u);
}

TEST(MadEngineTest, TransportReportedLossRetriesAtOnce) {
  // Like umad2sim with ibsim's "Error" drops: the MAD comes back at once with status 110.
  int calls = 0;
  Harness h(
      [&calls](const MadAddress&, const MadBuffer&, int) {
        if (calls++ % 2 == 0) return std::vector<Reply>{{0ms, std::nullopt, ETIMEDOUT}};
        return std::vector<Reply>{{1ms}};
      },
      opts(1, 0, 3, 1s));
  auto results = h.engine->run(requests(5));
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.attempts, 2);
    EXPECT_EQ(r.latency, 1ms);  // No timer wait.
    EXPECT_EQ(r.lastTransportStatus, ETIMEDOUT);
  }
  EXPECT_EQ(h.engine->stats().lostReported, 5u);
  EXPECT_EQ(h.engine->stats().retries, 5u);
  EXPECT_EQ(h.engine->stats().timeouts, 0u);
}

TEST(MadEngineTest, DuplicateRepliesAreIgnoredAndCounted) {
  Harness h(
      [](const MadAddress& to, const MadBuffer&, int) {
        if (to.lid == Lid(50)) return std::vector<Reply>{{10ms}};
        return std::vector<Reply>{{1ms}, {2ms}, {3ms}};
      },
      opts(8, 0));
  auto results = h.engine->run(requests(20));
  for (const auto& r : results) ASSERT_TRUE(r.ok());
  // The engine stops receiving once idle; a slower second batch pumps the leftovers through.
  h.engine->run({request(50, 99)});
  MadEngineStats s = h.engine->stats();
  EXPECT_EQ(s.received, 21u);
  EXPECT_EQ(s.duplicates, 40u);
  EXPECT_EQ(s.unmatched, 0u);
}

TEST(MadEngineTest, ReplyToAnEarlierAttemptCompletesTheRequest) {
  // Each reply takes 1.5 timeouts: the retry is on the wire when the first answer lands.
  Harness h([](const MadAddress&, const MadBuffer&, int) { return std::vector<Reply>{{150ms}}; },
            opts(1, 0, 3, 100ms));
  const auto start = h.clock.now();
  auto results = h.engine->run(requests(1));
  ASSERT_TRUE(results[0].ok());
  EXPECT_EQ(results[0].attempts, 2);
  EXPECT_EQ(results[0].latency, 150ms);
  EXPECT_EQ(results[0].completedAt, start + 150ms);  // when the reply arrived
  h.engine->run(requests(1));  // Takes 150 ms: the retry's answer arrives meanwhile.
  EXPECT_EQ(h.engine->stats().duplicates, 1u);
}

TEST(MadEngineTest, LateRepliesAfterFailureAreCounted) {
  // LID 1 answers after 1 s, long after its 3 x 100 ms attempts failed; LID 2 answers in 10 ms
  // one at a time, so a 150-request batch keeps the engine receiving for 1.5 s.
  Harness h([](const MadAddress& to, const MadBuffer&,
               int) { return std::vector<Reply>{{to.lid == Lid(1) ? 1000ms : 10ms}}; },
            opts(8, 1, 2, 100ms));
  auto first = h.engine->run({request(1, 0)});
  EXPECT_EQ(first[0].outcome, MadOutcome::kTimeout);
  std::vector<MadRequest> pump;
  for (int i = 0; i < 150; ++i) pump.push_back(request(2, i));
  for (const auto& r : h.engine->run(std::move(pump))) ASSERT_TRUE(r.ok());
  MadEngineStats s = h.engine->stats();
  EXPECT_EQ(s.lateReplies, 3u);  // One per attempt.
  EXPECT_EQ(s.failed, 1u);
}

TEST(MadEngineTest, UnknownTidIsUnmatched) {
  MadBuffer stranger = FakeMadTransport::responseTo(request(1, 9).mad);
  setTransactionId(stranger, 0xabcdef01);
  Harness h(
      [&stranger](const MadAddress&, const MadBuffer&, int) {
        return std::vector<Reply>{{1ms, stranger}, {2ms}};
      },
      opts(1, 0));
  auto results = h.engine->run(requests(1));
  ASSERT_TRUE(results[0].ok());
  EXPECT_EQ(h.engine->stats().unmatched, 1u);
}

TEST(MadEngineTest, DeadTargetDoesNotBlockOthers) {
  // LID 99 never answers; LIDs 1..8 answer in 1 ms. The dead target's 20 requests are queued
  // first and would block everything in a FIFO engine.
  std::mutex mu;
  std::vector<std::pair<std::uint16_t, Clock::time_point>> done;
  Harness h(
      [](const MadAddress& to, const MadBuffer&, int) {
        if (to.lid == Lid(99)) return std::vector<Reply>{};
        return std::vector<Reply>{{1ms}};
      },
      opts(8, 2, 2, 100ms));
  const auto start = h.clock.now();
  std::vector<MadRequest> reqs;
  for (int i = 0; i < 20; ++i) reqs.push_back(request(99, 1000 + i));
  auto live = requests(400);
  reqs.insert(reqs.end(), live.begin(), live.end());
  for (auto& r : reqs) {
    r.onComplete = [&, lid = r.to.lid.value()](const MadResult&) {
      std::lock_guard lock(mu);
      done.emplace_back(lid, h.clock.now());
    };
  }
  auto results = h.engine->run(std::move(reqs));
  Clock::time_point lastLive = start;
  for (auto& [lid, at] : done) {
    if (lid != 99) lastLive = std::max(lastLive, at);
  }
  // 400 live requests through 6 free slots at 1 ms each: about 67 ms, well before the first
  // dead request gives up (3 x 100 ms), and the dead ones only ever held 2 slots.
  EXPECT_LT(lastLive - start, 100ms);
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].ok(), i >= 20) << i;
  }
  MadEngineStats s = h.engine->stats();
  EXPECT_EQ(s.targets.at(Lid(99)).failures, 20u);
  EXPECT_EQ(s.targets.at(Lid(1)).failures, 0u);
  EXPECT_EQ(s.completedOk, 400u);
}

TEST(MadEngineTest, FailFastSkipsADeadTargetsRemainingRequests) {
  MadEngineOptions o = opts(8, 2, 1, 100ms);
  o.failFastAfter = 2;
  Harness h(
      [](const MadAddress& to, const MadBuffer&, int) {
        if (to.lid == Lid(99)) return std::vector<Reply>{};
        return std::vector<Reply>{{1ms}};
      },
      o);
  std::vector<MadRequest> reqs;
  for (int i = 0; i < 30; ++i) reqs.push_back(request(99, i));
  reqs.push_back(request(1, 100));
  auto results = h.engine->run(std::move(reqs));
  int timeouts = 0, down = 0;
  for (int i = 0; i < 30; ++i) {
    timeouts += results[i].outcome == MadOutcome::kTimeout;
    down += results[i].outcome == MadOutcome::kTargetDown;
  }
  EXPECT_EQ(timeouts, 2);  // The two that were in flight together.
  EXPECT_EQ(down, 28);
  EXPECT_TRUE(results[30].ok());
  EXPECT_EQ(h.engine->stats().targetDown, 28u);
}

TEST(MadEngineTest, SendErrorsCountAsLostAttempts) {
  Harness h([](const MadAddress&, const MadBuffer&, int) { return std::vector<Reply>{{1ms}}; },
            opts(1, 0, 3, 100ms));
  h.transport.failNextSends(2, EIO);
  auto results = h.engine->run(requests(1));
  ASSERT_TRUE(results[0].ok());
  EXPECT_EQ(results[0].attempts, 3);
  EXPECT_EQ(results[0].lastTransportStatus, EIO);
  EXPECT_EQ(h.engine->stats().sendErrors, 2u);
}

TEST(MadEngineTest, BatchWatchdogAbortsAndTheBatchEnds) {
  MadEngineOptions o = opts(2, 0, 100, 1s);
  o.batchWatchdog = 5s;
  Harness h([](const MadAddress&, const MadBuffer&, int) { return std::vector<Reply>{}; }, o);
  const auto start = h.clock.now();
  auto results = h.engine->run(requests(4));
  for (const auto& r : results) EXPECT_EQ(r.outcome, MadOutcome::kAborted);
  EXPECT_EQ(h.engine->stats().watchdogFired, 1u);
  EXPECT_EQ(h.engine->stats().aborted, 4u);
  EXPECT_LE(h.clock.now() - start, 5s + o.idlePoll);
  // The engine is still usable afterwards.
  EXPECT_EQ(h.engine->run({}).size(), 0u);
}

TEST(MadEngineTest, ADeadTransportFailsWhatIsOpenAtOnce) {
  // Replies after 1 ms; the transport dies at the 6th send (a MAD proxy that exited): every
  // receive fails at once from then. What is open fails then, not over timeouts and retries.
  Harness h([](const MadAddress&, const MadBuffer&, int) { return std::vector<Reply>{{1ms}}; },
            opts(4, 0, 3, 1s));
  h.transport.dieAtSend(5, "mad proxy exited");
  const auto start = h.clock.now();
  auto results = h.engine->run(requests(40));
  std::size_t ok = 0, aborted = 0;
  for (const auto& r : results) {
    ok += r.ok();
    aborted += r.outcome == MadOutcome::kAborted;
  }
  EXPECT_GE(ok, 1u);
  EXPECT_EQ(ok + aborted, results.size());
  EXPECT_LT(h.clock.now() - start, 1s);           // no request waited out a timeout
  EXPECT_EQ(h.engine->stats().aborted, aborted);  // failed by the engine, not abandoned by run()
  EXPECT_EQ(h.engine->stats().watchdogFired, 0u);
  // Later batches fail at once too, until the owner reopens the transport.
  const auto later = h.clock.now();
  for (const auto& r : h.engine->run(requests(3))) EXPECT_EQ(r.outcome, MadOutcome::kAborted);
  EXPECT_LT(h.clock.now() - later, 1s);
}

TEST(MadEngineTest, StoppingAbortsOpenRequests) {
  FakeClock clock;
  // A responder that never answers and a long timeout: the batch is open when the engine dies.
  FakeMadTransport transport(
      clock, [](const MadAddress&, const MadBuffer&, int) { return std::vector<Reply>{}; });
  std::string error;
  transport.open(error);
  MadBatchPtr batch;
  {
    MadEngine engine(transport, clock, opts(2, 0, 0, std::chrono::hours(1)));
    batch = engine.submit(requests(10));
  }
  ASSERT_TRUE(batch->done());
  for (const auto& r : batch->results()) EXPECT_EQ(r.outcome, MadOutcome::kAborted);
}

TEST(MadEngineTest, WaitForAbandonsWhenWallTimeRunsOut) {
  // A transport that never returns control would hang a plain wait(): waitFor() does not.
  FakeClock clock;
  MadBatch batch(3);
  EXPECT_FALSE(batch.waitFor(1ms));
  EXPECT_TRUE(batch.done());
  for (const auto& r : batch.results()) EXPECT_EQ(r.outcome, MadOutcome::kAborted);
}

// ---- The adaptive policy (telemetry/mad_policy/flow_control.h) --------------------------------

MadEngineOptions adaptive(int window, int perTarget, int retries = 3,
                          Clock::duration timeout = 200ms) {
  MadEngineOptions o = opts(window, perTarget, retries, timeout);
  o.policy = MadPolicy::kAdaptive;
  // These tests are about the mechanics at fake-clock scale: the RTO may fall below the default
  // floor (the fixed 200 ms, see TheDefaultTimeoutFloorIsTheFixedTimeout).
  o.adaptive.timeoutMin = 20ms;
  return o;
}

// One request to each of LIDs 1..n.
std::vector<MadRequest> spread(int n) {
  std::vector<MadRequest> out;
  for (int i = 0; i < n; ++i) out.push_back(request(static_cast<std::uint16_t>(1 + i), i));
  return out;
}

std::size_t sendsTo(const FakeMadTransport& t, Lid lid) {
  std::size_t n = 0;
  for (const auto& m : t.sent()) n += m.to.lid == lid;
  return n;
}

// Adaptive, with the fixed timeout as its RTO floor, kept every 10,240-HCA sweep whole beside an
// ibqueryerrors loop on ibsim (docs/mad-engine.md, docs/BENCHMARKS.md).
TEST(MadEngineAdaptive, AdaptiveIsTheDefault) {
  EXPECT_EQ(MadEngineOptions{}.policy, MadPolicy::kAdaptive);
}

TEST(MadEngineAdaptive, TheDefaultTimeoutFloorIsTheFixedTimeout) {
  // Below it, queueing delay on a shared plane passed for loss (docs/mad-engine.md).
  EXPECT_EQ(MadEngineOptions{}.adaptive.timeoutMin, MadEngineOptions{}.timeout);
}

TEST(MadEngineAdaptive, WindowGrowsWhileAnswersComeBack) {
  MadEngineOptions o = adaptive(64, 0);
  o.adaptive.initialWindow = 4;
  o.adaptive.minWindow = 2;
  Harness h([](const MadAddress&, const MadBuffer&, int) { return std::vector<Reply>{{1ms}}; }, o);
  EXPECT_EQ(h.engine->stats().window, 4);
  for (const auto& r : h.engine->run(requests(1000))) ASSERT_TRUE(r.ok());
  const auto sent = h.transport.sent();
  EXPECT_EQ(sent[3].at, sent[0].at);  // Four went out at once...
  EXPECT_GT(sent[4].at, sent[0].at);  // ...the fifth waited for an answer.
  MadEngineStats s = h.engine->stats();
  EXPECT_EQ(s.window, 64);  // Grown to its bound, not past it.
  EXPECT_EQ(s.maxInFlight, 64u);
  EXPECT_LE(h.transport.maxUnanswered(), 64u);
  EXPECT_EQ(s.windowDecreases, 0u);
}

TEST(MadEngineAdaptive, OneBurstOfTimeoutsCutsTheWindowOnce) {
  MadEngineOptions o = adaptive(64, 0, 3, 200ms);
  o.adaptive.initialWindow = 64;
  o.adaptive.breakerAfter = 0;
  std::set<std::uint32_t> seen;  // The responder runs on the engine's I/O thread only.
  Harness h(
      [&seen](const MadAddress&, const MadBuffer& req, int) {
        if (seen.insert(tag(req)).second) return std::vector<Reply>{};  // First attempts lost.
        return std::vector<Reply>{{1ms}};
      },
      o);
  for (const auto& r : h.engine->run(spread(64))) {
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.attempts, 2);
  }
  MadEngineStats s = h.engine->stats();
  EXPECT_EQ(s.windowDecreases, 1u);  // 64 timeouts of one episode: halved once, not to 1.
  EXPECT_GE(s.window, 32);
  EXPECT_LT(s.window, 64);
}

TEST(MadEngineAdaptive, SustainedLossShrinksTheWindowToItsFloorAndAnswersGrowItBack) {
  MadEngineOptions o = adaptive(64, 0, 0, 100ms);
  o.adaptive.initialWindow = 64;
  o.adaptive.minWindow = 4;
  o.adaptive.breakerAfter = 0;
  bool answering = false;  // Read and written while the engine is idle between batches.
  Harness h(
      [&answering](const MadAddress&, const MadBuffer&, int) {
        return answering ? std::vector<Reply>{{1ms}} : std::vector<Reply>{};
      },
      o);
  for (const auto& r : h.engine->run(spread(400))) ASSERT_EQ(r.outcome, MadOutcome::kTimeout);
  MadEngineStats s = h.engine->stats();
  EXPECT_EQ(s.window, 4);  // 64 -> 32 -> 16 -> 8 -> 4, one cut per round of timeouts.
  EXPECT_EQ(s.windowDecreases, 4u);
  const auto sent = h.transport.sent();
  std::map<Clock::time_point, int> sendsAt;
  for (const auto& m : sent) ++sendsAt[m.at];
  EXPECT_EQ(sendsAt.begin()->second, 64);
  EXPECT_EQ(sendsAt.rbegin()->second, 4);  // At the end four at a time.

  answering = true;
  for (const auto& r : h.engine->run(spread(400))) ASSERT_TRUE(r.ok());
  s = h.engine->stats();
  EXPECT_GT(s.window, 16);  // Additive increase: about one per window of answers.
  EXPECT_LE(s.window, 64);
}

TEST(MadEngineAdaptive, TimeoutFollowsTheMeasuredRoundTrip) {
  Harness h([](const MadAddress&, const MadBuffer&, int) { return std::vector<Reply>{{30ms}}; },
            adaptive(1, 1, 3, 200ms));
  for (const auto& r : h.engine->run(requests(50, 1))) {
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.attempts, 1);
  }
  MadEngineStats s = h.engine->stats();
  EXPECT_EQ(s.srtt, 30ms);
  EXPECT_EQ(s.retries, 0u);
  // RTO = SRTT + max(G, 4 RTTVAR): from the initial 200 ms down towards 31 ms.
  EXPECT_GT(s.targets.at(Lid(1)).rto, 30ms);
  EXPECT_LT(s.targets.at(Lid(1)).rto, 40ms);
  EXPECT_EQ(s.rto, s.targets.at(Lid(1)).rto);
}

TEST(MadEngineAdaptive, SlowResponderGetsALongerTimeoutNotPrematureRetries) {
  // 300 ms answers against an initial RTO of 200 ms.
  auto slow = [](const MadAddress&, const MadBuffer&, int) { return std::vector<Reply>{{300ms}}; };
  Harness h(slow, adaptive(1, 1, 3, 200ms));
  auto first = h.engine->run(requests(1, 1));
  ASSERT_TRUE(first[0].ok());
  EXPECT_EQ(first[0].attempts, 2);  // The timer fired once; the first attempt's answer won.
  MadEngineStats s = h.engine->stats();
  // The TID says the first attempt was answered: an exact 300 ms sample (no Karn ambiguity),
  // and the timeout is known to have been premature.
  EXPECT_EQ(s.srtt, 300ms);
  EXPECT_GT(s.targets.at(Lid(1)).rto, 300ms);
  EXPECT_EQ(s.spuriousTimeouts, 1u);
  for (const auto& r : h.engine->run(requests(20, 1))) {
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.attempts, 1);
  }
  s = h.engine->stats();
  EXPECT_EQ(s.retries, 1u);
  EXPECT_EQ(s.srtt, 300ms);
  EXPECT_GT(s.targets.at(Lid(1)).rto, 300ms);

  // The fixed 200 ms timer re-sends every one of them.
  MadEngineOptions fixed = adaptive(1, 1, 3, 200ms);
  fixed.policy = MadPolicy::kFixed;
  Harness f(slow, fixed);
  for (const auto& r : f.engine->run(requests(20, 1))) EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(f.engine->stats().retries, 20u);
}

TEST(MadEngineAdaptive, QueueingDelayCostsOneReSendAndNoLastingWindowCut) {
  // A burst of 64 requests whose answers (to the first attempts and to the re-sends) queue for
  // 250 ms behind someone else's MADs (the initial RTO is 200 ms), then a prompt plane.
  MadEngineOptions o = adaptive(64, 4, 3, 200ms);
  o.adaptive.initialWindow = 64;
  int sends = 0;  // The responder runs on the engine's I/O thread only.
  Harness h([&sends](const MadAddress&, const MadBuffer&,
                     int) { return std::vector<Reply>{{++sends <= 128 ? 250ms : 1ms}}; },
            o);
  for (const auto& r : h.engine->run(spread(64))) {
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.attempts, 2);  // The re-send went out at 200 ms...
  }
  MadEngineStats s = h.engine->stats();
  // ...but the 250 ms answers were to the first attempts: every timeout was spurious, and the
  // overall cut and the per-LID cuts they made are undone.
  EXPECT_EQ(s.spuriousTimeouts, 64u);
  EXPECT_EQ(s.windowDecreases, 1u);
  EXPECT_GE(s.windowCutsUndone, 65u);
  EXPECT_EQ(s.window, 64);
  for (int lid = 1; lid <= 64; ++lid) EXPECT_EQ(s.targets.at(Lid(lid)).window, 4);
  EXPECT_GT(s.rto, 250ms);  // The samples raised the timer: the next burst waits for them.

  for (const auto& r : h.engine->run(spread(64))) EXPECT_TRUE(r.ok());
  EXPECT_EQ(h.engine->stats().retries, 64u);  // None more.
}

TEST(MadEngineAdaptive, ALateReplyAfterFailureIsASampleAndClosesTheBreaker) {
  // LID 99 answers after 3 s, beyond the 2 s cap of its timer: its requests fail, then the
  // late replies come.
  MadEngineOptions o = adaptive(16, 1, 0, 100ms);
  o.adaptive.breakerAfter = 2;
  o.adaptive.timeoutMax = 2s;
  Harness h([](const MadAddress& to, const MadBuffer&,
               int) { return std::vector<Reply>{{to.lid == Lid(99) ? 3s : 100ms}}; },
            o);
  std::vector<MadRequest> reqs{request(99, 0), request(99, 1)};
  for (const auto& r : h.engine->run(std::move(reqs))) EXPECT_EQ(r.outcome, MadOutcome::kTimeout);
  ASSERT_TRUE(h.engine->stats().targets.at(Lid(99)).breakerOpen);
  // Another LID's batch (40 requests, one at a time, 100 ms each) runs while they arrive.
  std::vector<MadRequest> other;
  for (int i = 0; i < 40; ++i) other.push_back(request(1, 10 + i));
  for (const auto& r : h.engine->run(std::move(other))) EXPECT_TRUE(r.ok());
  MadEngineStats s = h.engine->stats();
  EXPECT_EQ(s.lateReplies, 2u);
  EXPECT_EQ(s.spuriousTimeouts, 2u);
  EXPECT_FALSE(s.targets.at(Lid(99)).breakerOpen);  // It answers: no longer treated as down.
  EXPECT_EQ(s.openBreakers, 0u);
  EXPECT_EQ(s.targets.at(Lid(99)).rto, 2s);  // Its samples (3 s) take its timer to the cap.
}

TEST(MadEngineAdaptive, RetryBudgetCapsRetriesUnderTotalLoss) {
  MadEngineOptions o = adaptive(64, 4, 3, 50ms);
  o.adaptive.retryBudget = 0.1;
  o.adaptive.retryBurst = 10;
  o.adaptive.breakerAfter = 0;
  o.batchWatchdog = std::chrono::hours(1);
  Harness h([](const MadAddress&, const MadBuffer&, int) { return std::vector<Reply>{}; }, o);
  for (const auto& r : h.engine->run(spread(1000))) ASSERT_EQ(r.outcome, MadOutcome::kTimeout);
  MadEngineStats s = h.engine->stats();
  // The burst plus one retry per ten requests, not three per request (4,000 sends).
  EXPECT_LE(s.retries, 110u);
  EXPECT_GE(s.retries, 100u);
  EXPECT_EQ(s.sent, 1000u + s.retries);
  EXPECT_GE(s.retries + s.retriesRefused, 1000u);  // Every request asked at least once.
  EXPECT_EQ(s.failed, 1000u);
  EXPECT_LT(s.retryTokens, 1.0);
}

TEST(MadEngineAdaptive, BreakerCostsADeadTargetOneProbePerBatchUntilItAnswers) {
  std::atomic<bool> back{false};
  MadEngineOptions o = adaptive(16, 4, 1, 100ms);
  o.adaptive.breakerAfter = 3;
  Harness h(
      [&back](const MadAddress& to, const MadBuffer&, int) {
        if (to.lid == Lid(99) && !back) return std::vector<Reply>{};
        return std::vector<Reply>{{1ms}};
      },
      o);
  auto batch = [] {
    std::vector<MadRequest> reqs;
    for (int i = 0; i < 10; ++i) reqs.push_back(request(99, i));
    for (int i = 0; i < 10; ++i) reqs.push_back(request(1, 100 + i));
    return reqs;
  };
  auto outcomes = [](const std::vector<MadResult>& rs, MadOutcome want) {
    int n = 0;
    for (int i = 0; i < 10; ++i) n += rs[i].outcome == want;
    return n;
  };

  // 1: the four in flight fail (two attempts each), the breaker opens, the other six are not sent.
  auto r1 = h.engine->run(batch());
  EXPECT_EQ(outcomes(r1, MadOutcome::kTimeout), 4);
  EXPECT_EQ(outcomes(r1, MadOutcome::kTargetDown), 6);
  for (int i = 10; i < 20; ++i) EXPECT_TRUE(r1[i].ok());
  EXPECT_EQ(sendsTo(h.transport, Lid(99)), 8u);
  MadEngineStats s = h.engine->stats();
  EXPECT_EQ(s.breakerOpens, 1u);
  EXPECT_EQ(s.openBreakers, 1u);
  EXPECT_TRUE(s.targets.at(Lid(99)).breakerOpen);

  // 2: one probe of one attempt on the fabric's timeout; the batch does not wait on the dead LID.
  const auto start = h.clock.now();
  auto r2 = h.engine->run(batch());
  EXPECT_LT(h.clock.now() - start, 100ms);
  EXPECT_EQ(sendsTo(h.transport, Lid(99)), 9u);
  EXPECT_EQ(outcomes(r2, MadOutcome::kTimeout), 1);
  EXPECT_EQ(outcomes(r2, MadOutcome::kTargetDown), 9);
  for (int i = 10; i < 20; ++i) EXPECT_TRUE(r2[i].ok());
  EXPECT_EQ(h.engine->stats().probes, 1u);

  // 3: the target is back: the probe's answer closes the breaker and the rest of the batch goes.
  back = true;
  auto r3 = h.engine->run(batch());
  for (const auto& r : r3) EXPECT_TRUE(r.ok());
  s = h.engine->stats();
  EXPECT_EQ(s.openBreakers, 0u);
  EXPECT_FALSE(s.targets.at(Lid(99)).breakerOpen);
  EXPECT_EQ(s.probes, 2u);
  EXPECT_EQ(s.breakerOpens, 1u);
}

TEST(MadEngineAdaptive, FixedPolicyHasNoBudgetNoBreakerAndFixedLimits) {
  Harness h(
      [](const MadAddress& to, const MadBuffer&, int) {
        if (to.lid == Lid(99)) return std::vector<Reply>{};
        return std::vector<Reply>{{1ms}};
      },
      opts(16, 4, 3, 100ms));
  for (int round = 0; round < 3; ++round) {
    std::vector<MadRequest> reqs;
    for (int i = 0; i < 10; ++i) reqs.push_back(request(99, i));
    for (const auto& r : h.engine->run(std::move(reqs))) {
      EXPECT_EQ(r.outcome, MadOutcome::kTimeout);
      EXPECT_EQ(r.attempts, 4);
      EXPECT_EQ(r.latency, 400ms);
    }
  }
  MadEngineStats s = h.engine->stats();
  EXPECT_EQ(s.policy, MadPolicy::kFixed);
  EXPECT_EQ(s.sent, 120u);
  EXPECT_EQ(s.targetDown + s.retriesRefused + s.breakerOpens + s.windowDecreases, 0u);
  EXPECT_EQ(s.window, 16);
  EXPECT_EQ(s.targets.at(Lid(99)).window, 4);
}

}  // namespace
}  // namespace ibfabric::mad
