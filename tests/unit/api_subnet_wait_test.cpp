// FabricService before the subnet is usable: it waits (state.subnet, with the reason) on the
// local port's PortInfo read through the counter source, crawls nothing meanwhile, starts once
// the port is Active with a LID and an SM LID; a counter source that keeps failing is
// re-created with exponential backoff, one at a time.
#include <gtest/gtest.h>

#include <algorithm>

#include "api/service/fabric_service.h"
#include "tests/fakes/fake_sources.h"
#include "tests/support/fabrics.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;
using testing::waitFor;

/// What the local port says, and how many sources exist.
struct LocalPort {
  std::atomic<std::uint8_t> state{2};  // Initialize
  std::atomic<std::uint16_t> lid{0};
  std::atomic<std::uint16_t> smLid{0};
  std::atomic<int> reads{0};
  std::atomic<int> created{0};
  std::atomic<int> alive{0};
  std::atomic<int> maxAlive{0};
  std::atomic<bool> failCreation{false};
};

/// A FakeCounterSource that also reads the local port.
class PortReadingSource final : public CounterSource {
 public:
  PortReadingSource(std::shared_ptr<FakeCounterControl> control, LocalPort& port)
      : inner_(std::move(control)), port_(port) {
    const int now = ++port_.alive;
    int seen = port_.maxAlive;
    while (now > seen && !port_.maxAlive.compare_exchange_weak(seen, now)) {
    }
  }
  ~PortReadingSource() override { --port_.alive; }
  void setTopology(TopologyPtr t) override { inner_.setTopology(std::move(t)); }
  telemetry::CounterSnapshotPtr sweep() override { return inner_.sweep(); }
  std::string describe() const override { return "port-reading fake"; }
  bool readsLocalPort() const override { return true; }
  std::optional<mad::PortInfo> localPortInfo() override {
    ++port_.reads;
    mad::PortInfo info;
    info.portState = port_.state;
    info.lid = port_.lid;
    info.masterSmLid = port_.smLid;
    return info;
  }

 private:
  FakeCounterSource inner_;
  LocalPort& port_;
};

testing::InProcessDaemon::Options options(LocalPort& port, std::chrono::milliseconds poll) {
  testing::InProcessDaemon::Options o;
  o.service.waitForSubnet = true;
  o.service.subnetPoll = poll;
  o.service.crawlInterval = 1h;
  o.service.sweepInterval = 30ms;
  o.service.retryBase = 20ms;
  o.service.sourceRestartCap = 80ms;
  o.counterSources = [&port, control = o.counters]() -> CounterSourcePtr {
    ++port.created;
    if (port.failCreation) throw SweepError("cannot open umad: mad proxy: no port");
    return std::make_unique<PortReadingSource>(control, port);
  };
  return o;
}

TEST(SubnetWait, WaitsWithTheReasonAndStartsOnceThePortIsActiveWithAnSm) {
  LocalPort port;
  testing::InProcessDaemon d(options(port, 10ms));
  d.topology().push(testing::fatTreeTopology("", 2, 2, 2));
  d.service().start();
  ASSERT_TRUE(
      waitFor([&] { return d.service().state()->subnet.reason == "port state Initialize"; }, 5s));
  EXPECT_TRUE(d.service().state()->subnet.waiting);
  EXPECT_EQ(d.service().state()->subnet.portState, "Initialize");
  port.lid = 7;
  port.state = 4;
  ASSERT_TRUE(waitFor([&] { return d.service().state()->subnet.reason == "no SM LID"; }, 5s));
  EXPECT_GE(port.reads.load(), 3);
  EXPECT_EQ(d.topology().calls(), 0);  // nothing crawled while waiting
  EXPECT_FALSE(d.service().state()->topology);
  port.smLid = 1;
  ASSERT_TRUE(waitFor([&] { return d.service().state()->ready(); }, 5s));
  const auto s = d.service().state();
  EXPECT_FALSE(s->subnet.waiting);
  EXPECT_EQ(s->subnet.localLid, 7);
  EXPECT_EQ(s->subnet.smLid, 1);
  EXPECT_TRUE(s->subnet.readySince);
  EXPECT_EQ(port.created.load(), 1);  // the waiting source is the one that sweeps
  EXPECT_EQ(s->counterSourceStarts, 1u);
  EXPECT_EQ(s->counterSourceRestarts, 0u);
  d.service().stop();
}

TEST(SubnetWait, AFailingSourceIsRecreatedWithBackoffOneAtATime) {
  LocalPort port;
  port.failCreation = true;
  testing::InProcessDaemon d(options(port, 5ms));  // polls far faster than the backoff allows
  d.topology().push(testing::fatTreeTopology("", 2, 2, 2));
  d.service().start();
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(waitFor([&] { return port.created >= 6; }, 5s));
  const auto took = std::chrono::steady_clock::now() - t0;
  // 20 + 40 + 80 + 80 + 80 ms between the six creations at least.
  EXPECT_GE(took, 280ms);
  auto s = d.service().state();
  EXPECT_TRUE(s->subnet.waiting);
  EXPECT_NE(s->subnet.reason.find("cannot open umad"), std::string::npos) << s->subnet.reason;
  port.failCreation = false;
  port.state = 4;
  port.lid = 3;
  port.smLid = 1;
  ASSERT_TRUE(waitFor([&] { return d.service().state()->ready(); }, 5s));
  s = d.service().state();
  EXPECT_EQ(s->counterSourceStarts, static_cast<std::uint64_t>(port.created.load()));
  EXPECT_EQ(s->counterSourceRestarts, s->counterSourceStarts - 1);
  EXPECT_EQ(port.maxAlive.load(), 1);
  d.service().stop();
}

TEST(SubnetWait, SourcesThatCannotReadThePortAreNotWaitedOn) {
  testing::InProcessDaemon::Options o;
  o.service.waitForSubnet = true;
  testing::InProcessDaemon d(o);
  d.topology().push(testing::fatTreeTopology("", 2, 2, 2));
  ASSERT_TRUE(d.startAndWaitReady());
  EXPECT_FALSE(d.service().state()->subnet.waiting);
}

}  // namespace
}  // namespace ibfabric::api
