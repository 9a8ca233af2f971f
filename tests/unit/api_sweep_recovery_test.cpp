// FabricService's sweep failure rules with a scripted counter source: a sweep in which nothing
// answered counts as failed (also when no port was read because every request failed) and the
// source is re-created after 3 of them; a fabric that answers in part is a successful sweep with
// per-port statuses; a re-created source continues the sweep sequence numbers; a source that
// throws (a MAD proxy child that died) is re-created at the next attempt.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>

#include "api/service/fabric_service.h"
#include "tests/support/fabrics.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;

enum class Mode { kAll, kNothing, kNoPortRead, kHalf, kThrow };

struct Control {
  std::atomic<Mode> mode{Mode::kAll};
  std::atomic<int> created{0};
  std::atomic<std::uint64_t> continuedAfter{0};
};

/// Every linked port of the topology, answering as `mode` says; sequences 1, 2, ... per source.
class ScriptedSource final : public CounterSource {
 public:
  explicit ScriptedSource(std::shared_ptr<Control> c) : c_(std::move(c)) {}
  void setTopology(TopologyPtr t) override { topology_ = std::move(t); }
  void continueAfter(const telemetry::CounterSnapshot& previous) override {
    c_->continuedAfter = previous.sequence;
    sequence_ = std::max(sequence_, previous.sequence);
  }
  std::string describe() const override { return "scripted"; }
  telemetry::CounterSnapshotPtr sweep() override {
    const Mode mode = c_->mode;
    if (mode == Mode::kThrow) throw SweepError("mad proxy (pid 1) exited");
    auto snap = std::make_shared<telemetry::CounterSnapshot>();
    snap->sequence = ++sequence_;
    snap->topology = topology_;
    snap->wallTime = std::chrono::system_clock::now();
    snap->started = snap->finished = mad::SteadyClock().now();
    std::size_t i = 0;
    if (mode != Mode::kNoPortRead) {
      for (const Node& n : topology_->nodes()) {
        for (const auto& p : n.ports) {
          if (!p || !p->remote) continue;
          telemetry::PortSample s;
          s.key = {n.guid, p->num};
          const bool ok = mode == Mode::kAll || (mode == Mode::kHalf && i++ % 2 == 0);
          s.status = ok ? telemetry::PortStatus::kOk : telemetry::PortStatus::kTimeout;
          snap->ports.push_back(s);
        }
      }
    }
    std::sort(snap->ports.begin(), snap->ports.end(),
              [](const auto& a, const auto& b) { return a.key < b.key; });
    snap->stats.ports = snap->ports.size();
    for (const auto& s : snap->ports)
      snap->stats.portsOk += s.status == telemetry::PortStatus::kOk ? 1 : 0;
    // kNoPortRead: the capability reads (ClassPortInfo) all failed, so no port was polled.
    snap->stats.requests = mode == Mode::kNoPortRead ? 6 : snap->ports.size() * 2;
    snap->stats.failedRequests = mode == Mode::kNoPortRead ? 6
                                 : mode == Mode::kNothing
                                     ? snap->stats.requests
                                     : (snap->stats.ports - snap->stats.portsOk) * 2;
    return snap;
  }

 private:
  std::shared_ptr<Control> c_;
  TopologyPtr topology_;
  std::uint64_t sequence_ = 0;
};

class SweepRecovery : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::InProcessDaemon::Options o;
    o.service.sweepInterval = 30ms;
    o.service.retryBase = 5ms;
    o.counterSources = [c = control_] {
      ++c->created;
      return std::make_unique<ScriptedSource>(c);
    };
    daemon_ = std::make_unique<testing::InProcessDaemon>(o);
    daemon_->topology().push(testing::crawledFatTreeTopology("", 2, 2, 2));
    service_ = &daemon_->service();
    service_->start();
    ASSERT_TRUE(testing::waitFor([&] { return service_->state()->sweep.runs >= 2; }, 10s));
  }
  /// Waits until `n` more sweep attempts (successes or failures) have been made.
  void waitAttempts(int n) {
    const auto s = service_->state();
    const auto target = s->sweep.runs + s->sweep.failures + static_cast<std::uint64_t>(n);
    ASSERT_TRUE(testing::waitFor(
        [&] {
          const auto t = service_->state();
          return t->sweep.runs + t->sweep.failures >= target;
        },
        10s));
  }

  std::shared_ptr<Control> control_ = std::make_shared<Control>();
  std::unique_ptr<testing::InProcessDaemon> daemon_;
  FabricService* service_ = nullptr;
};

TEST_F(SweepRecovery, ASweepWithoutAnyAnswerFailsAndTheSourceIsRecreated) {
  const std::uint64_t seq = service_->state()->counters->sequence;
  control_->mode = Mode::kNothing;
  ASSERT_TRUE(testing::waitFor([&] { return control_->created >= 2; }, 10s));
  const auto s = service_->state();
  EXPECT_GE(s->sweep.consecutiveFailures, 3u);
  EXPECT_NE(s->sweep.lastError.find("no port answered"), std::string::npos) << s->sweep.lastError;
  EXPECT_EQ(s->counters->sequence, seq) << "the last good snapshot is kept";

  control_->mode = Mode::kAll;
  ASSERT_TRUE(
      testing::waitFor([&] { return service_->state()->sweep.consecutiveFailures == 0; }, 10s));
  // The new source numbered on from the last served sweep.
  EXPECT_GE(control_->continuedAfter.load(), seq);
  EXPECT_GT(service_->state()->counters->sequence, seq);
}

TEST_F(SweepRecovery, NoPortReadBecauseEveryRequestFailedIsAFailedSweep) {
  control_->mode = Mode::kNoPortRead;
  ASSERT_TRUE(testing::waitFor([&] { return control_->created >= 2; }, 10s));
  EXPECT_GE(service_->state()->sweep.consecutiveFailures, 3u);
}

TEST_F(SweepRecovery, APartlyAnsweringFabricIsASuccessWithPortStatuses) {
  control_->mode = Mode::kHalf;
  waitAttempts(5);
  const auto s = service_->state();
  EXPECT_EQ(s->sweep.consecutiveFailures, 0u);
  EXPECT_EQ(control_->created, 1) << "never re-created";
  ASSERT_TRUE(s->counters);
  EXPECT_EQ(s->counters->stats.portsOk * 2, s->counters->stats.ports);
  std::size_t timeouts = 0;
  for (const auto& p : s->counters->ports)
    timeouts += p.status == telemetry::PortStatus::kTimeout ? 1 : 0;
  EXPECT_EQ(timeouts, s->counters->stats.ports / 2);
}

TEST_F(SweepRecovery, ASourceThatThrowsIsRecreatedAtTheNextAttempt) {
  control_->mode = Mode::kThrow;
  ASSERT_TRUE(testing::waitFor([&] { return control_->created >= 2; }, 10s));
  EXPECT_NE(service_->state()->sweep.lastError.find("mad proxy"), std::string::npos);
  control_->mode = Mode::kAll;
  ASSERT_TRUE(
      testing::waitFor([&] { return service_->state()->sweep.consecutiveFailures == 0; }, 10s));
}

}  // namespace
}  // namespace ibfabric::api
