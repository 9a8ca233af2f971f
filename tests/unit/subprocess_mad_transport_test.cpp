// SubprocessMadTransport against real child processes (forked, running the real proxy loop of
// telemetry/mad_proxy.h over a scripted in-child transport): MADs and failures are forwarded,
// the child's open error and early death become one-line open() errors, a child that dies
// mid-stream turns receive() into kError and sends into EPIPE, and reopening starts afresh.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include "telemetry/clock.h"
#include "telemetry/mad_engine.h"
#include "telemetry/mad_proxy.h"
#include "telemetry/pma_attributes.h"
#include "telemetry/subprocess_mad_transport.h"
#include "tests/fakes/fake_mad_transport.h"

namespace ibfabric::mad {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/// Runs in the child: answers every request at once with its GetResponse (real time, blocking
/// receive). `dieAfter` > 0: the process exits with status 7 on that send. `sendError` != 0:
/// every send fails with it. `openError` non-empty: open() fails with it.
class EchoTransport final : public MadTransport {
 public:
  int dieAfter = 0;
  int sendError = 0;
  std::string openError;

  bool open(std::string& error) override {
    error = openError;
    return openError.empty();
  }
  int send(const MadAddress& to, const MadBuffer& mad) override {
    if (dieAfter > 0 && ++sends_ == dieAfter) ::_exit(7);
    if (sendError != 0) return sendError;
    std::lock_guard lock(mu_);
    ReceivedMad r;
    r.mad = FakeMadTransport::responseTo(mad);
    r.sourceLid = to.lid;
    queue_.push_back(r);
    cv_.notify_one();
    return 0;
  }
  ReceiveResult receive(std::chrono::nanoseconds timeout) override {
    std::unique_lock lock(mu_);
    ReceiveResult out;
    if (!cv_.wait_for(lock, timeout, [&] { return !queue_.empty(); })) return out;
    out.status = ReceiveStatus::kMad;
    out.mad = queue_.front();
    queue_.pop_front();
    return out;
  }
  void close() override {}

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<ReceivedMad> queue_;
  int sends_ = 0;
};

SubprocessMadTransport::Options childRunning(std::function<void(EchoTransport&)> setup) {
  SubprocessMadTransport::Options o;
  o.childMain = [setup](int fd) {
    EchoTransport t;
    if (setup) setup(t);
    return proxy::runMadProxy(t, fd, [] { return std::string("echo transport"); });
  };
  o.openTimeout = 5s;
  o.exitGrace = 500ms;
  return o;
}

MadBuffer requestWithTid(std::uint64_t tid) {
  MadBuffer mad = buildPortCountersExtendedGet(1);
  setTransactionId(mad, tid);
  return mad;
}

/// Receives until `n` MADs arrived, an error, or 5 s passed.
std::vector<ReceiveResult> receiveUpTo(MadTransport& t, std::size_t n) {
  std::vector<ReceiveResult> out;
  const auto deadline = Clock::now() + 5s;
  while (out.size() < n && Clock::now() < deadline) {
    ReceiveResult r = t.receive(50ms);
    if (r.status == ReceiveStatus::kTimeout) continue;
    out.push_back(r);
    if (r.status == ReceiveStatus::kError) break;
  }
  return out;
}

TEST(SubprocessMadTransportTest, ForwardsMadsBothWaysInBatches) {
  SubprocessMadTransport t(childRunning(nullptr));
  std::string error;
  ASSERT_TRUE(t.open(error)) << error;
  EXPECT_EQ(t.childDescription(), "echo transport");
  EXPECT_GT(t.childPid(), 0);
  EXPECT_TRUE(t.fatalError().empty());
  constexpr int kCount = 300;  // more than one packet (64 records) each way
  for (int i = 0; i < kCount; ++i)
    ASSERT_EQ(t.send(pmaAddress(Lid(static_cast<std::uint16_t>(1 + i % 7))),
                     requestWithTid(1000 + static_cast<std::uint64_t>(i))),
              0);
  const auto replies = receiveUpTo(t, kCount);
  ASSERT_EQ(replies.size(), static_cast<std::size_t>(kCount));
  std::set<std::uint64_t> tids;
  for (const auto& r : replies) {
    ASSERT_EQ(r.status, ReceiveStatus::kMad) << r.error;
    EXPECT_EQ(r.mad.umadStatus, 0);
    const auto tid = transactionId(r.mad.mad) & 0xffffffffu;
    tids.insert(tid);
    EXPECT_EQ(r.mad.sourceLid.value(), 1 + (tid - 1000) % 7);
    EXPECT_TRUE(decodeHeader(r.mad.mad).method & 0x80) << "a response";
  }
  EXPECT_EQ(tids.size(), static_cast<std::size_t>(kCount));
  EXPECT_EQ(t.receive(20ms).status, ReceiveStatus::kTimeout);
  t.close();
  EXPECT_EQ(t.childPid(), -1);
}

TEST(SubprocessMadTransportTest, AMadEngineRunsOverTheProxy) {
  SubprocessMadTransport t(childRunning(nullptr));
  std::string error;
  ASSERT_TRUE(t.open(error)) << error;
  SteadyClock clock;
  MadEngineOptions o;
  o.window = 32;
  o.timeout = 1s;
  {
    MadEngine engine(t, clock, o);
    std::vector<MadRequest> requests;
    for (int i = 0; i < 500; ++i)
      requests.push_back({pmaAddress(Lid(static_cast<std::uint16_t>(1 + i % 16))),
                          buildPortCountersExtendedGet(1),
                          {}});
    const auto results = engine.run(std::move(requests));
    int ok = 0;
    for (const auto& r : results) ok += r.ok() ? 1 : 0;
    EXPECT_EQ(ok, 500);
    EXPECT_EQ(engine.stats().timeouts, 0u);
  }
  t.close();
}

TEST(SubprocessMadTransportTest, SendFailuresComeBackAsLostRequests) {
  // EIO: the request is reported lost and the proxy keeps running.
  SubprocessMadTransport t(childRunning([](EchoTransport& e) { e.sendError = EIO; }));
  std::string error;
  ASSERT_TRUE(t.open(error)) << error;
  ASSERT_EQ(t.send(pmaAddress(Lid(3)), requestWithTid(42)), 0);
  const auto r = receiveUpTo(t, 1);
  ASSERT_EQ(r.size(), 1u);
  ASSERT_EQ(r[0].status, ReceiveStatus::kMad);
  EXPECT_EQ(r[0].mad.umadStatus, EIO);
  EXPECT_EQ(transactionId(r[0].mad.mad), 42u);  // the request itself
  EXPECT_TRUE(t.fatalError().empty());
}

TEST(SubprocessMadTransportTest, ALostConnectionEndsTheProxy) {
  // ECONNREFUSED from the fabric (ibsim gone): reported, then the child exits, the parent knows.
  SubprocessMadTransport t(childRunning([](EchoTransport& e) { e.sendError = ECONNREFUSED; }));
  std::string error;
  ASSERT_TRUE(t.open(error)) << error;
  ASSERT_EQ(t.send(pmaAddress(Lid(3)), requestWithTid(43)), 0);
  const auto r = receiveUpTo(t, 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].status, ReceiveStatus::kMad);
  EXPECT_EQ(r[0].mad.umadStatus, ECONNREFUSED);
  ASSERT_EQ(r[1].status, ReceiveStatus::kError);
  EXPECT_NE(r[1].error.find("exited"), std::string::npos) << r[1].error;
  EXPECT_NE(r[1].error.find("fabric connection is gone"), std::string::npos) << r[1].error;
  EXPECT_EQ(t.fatalError(), r[1].error);
}

TEST(SubprocessMadTransportTest, OpenReportsTheChildsOpenError) {
  SubprocessMadTransport t(childRunning(
      [](EchoTransport& e) { e.openError = "umad_get_port(mlx5_9, 0): No such device"; }));
  std::string error;
  EXPECT_FALSE(t.open(error));
  EXPECT_EQ(error, "umad_get_port(mlx5_9, 0): No such device");
  EXPECT_EQ(t.childPid(), -1);  // reaped
  EXPECT_EQ(t.receive(0ns).status, ReceiveStatus::kError);
  EXPECT_EQ(t.send(pmaAddress(Lid(1)), requestWithTid(1)), EBADF);
}

TEST(SubprocessMadTransportTest, AChildThatDiesBeforeItsHelloIsAOneLineError) {
  SubprocessMadTransport::Options o;
  o.childMain = [](int) {
    std::fprintf(stderr, "sim_connect: connect failed\nERR: cannot init umad2sim. Exit.\n");
    return 255;
  };
  SubprocessMadTransport t(o);
  std::string error;
  EXPECT_FALSE(t.open(error));
  EXPECT_EQ(error,
            "mad proxy exited with status 255 before opening the port: ERR: cannot init "
            "umad2sim. Exit.");
}

TEST(SubprocessMadTransportTest, ASilentChildTimesOutAndIsKilled) {
  SubprocessMadTransport::Options o;
  o.childMain = [](int) {
    std::this_thread::sleep_for(30s);
    return 0;
  };
  o.openTimeout = 200ms;
  o.exitGrace = 100ms;
  SubprocessMadTransport t(o);
  std::string error;
  const auto t0 = Clock::now();
  EXPECT_FALSE(t.open(error));
  EXPECT_LT(Clock::now() - t0, 3s);
  EXPECT_EQ(error, "mad proxy did not open the port within 200 ms");
  EXPECT_EQ(t.childPid(), -1);
}

TEST(SubprocessMadTransportTest, AChildThatDiesMidStreamIsReportedAndReopeningRecovers) {
  SubprocessMadTransport t(childRunning([](EchoTransport& e) { e.dieAfter = 6; }));
  std::string error;
  ASSERT_TRUE(t.open(error)) << error;
  const pid_t first = t.childPid();
  for (int i = 0; i < 10; ++i) ASSERT_EQ(t.send(pmaAddress(Lid(2)), requestWithTid(100 + i)), 0);
  const auto r = receiveUpTo(t, 11);
  // Up to five answers (those written before the exit), then the error.
  ASSERT_FALSE(r.empty());
  ASSERT_LE(r.size(), 6u);
  for (std::size_t i = 0; i + 1 < r.size(); ++i) EXPECT_EQ(r[i].status, ReceiveStatus::kMad);
  ASSERT_EQ(r.back().status, ReceiveStatus::kError);
  EXPECT_NE(r.back().error.find("exited with status 7"), std::string::npos) << r.back().error;
  EXPECT_FALSE(t.fatalError().empty());
  EXPECT_EQ(t.send(pmaAddress(Lid(2)), requestWithTid(200)), EPIPE);
  // A receive on a dead child is paced by its timeout, not a busy error loop.
  const auto t0 = Clock::now();
  EXPECT_EQ(t.receive(30ms).status, ReceiveStatus::kError);
  EXPECT_GE(Clock::now() - t0, 25ms);

  t.close();
  EXPECT_TRUE(t.fatalError().empty());
  ASSERT_TRUE(t.open(error)) << error;
  EXPECT_NE(t.childPid(), first);
  ASSERT_EQ(t.send(pmaAddress(Lid(2)), requestWithTid(300)), 0);
  const auto again = receiveUpTo(t, 1);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].status, ReceiveStatus::kMad);
  EXPECT_EQ(transactionId(again[0].mad.mad) & 0xffffffffu, 300u);
}

TEST(SubprocessMadTransportTest, ACommandThatCannotStartIsAnError) {
  SubprocessMadTransport::Options o;
  o.argv = {"/nonexistent/ibfabricd", "--mad-proxy"};
  SubprocessMadTransport t(o);
  std::string error;
  EXPECT_FALSE(t.open(error));
  EXPECT_NE(error.find("/nonexistent/ibfabricd"), std::string::npos) << error;
}

}  // namespace
}  // namespace ibfabric::mad
