// FabricService with scripted seams: readiness, rates from consecutive sweeps, topology deltas
// as events, failures reported with backoff while the last snapshot keeps being served,
// on-demand crawls, prompt stop.
#include "api/service/fabric_service.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_sources.h"
#include "tests/support/fabrics.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;
using testing::waitFor;

TopologyPtr fatTree(int hostsPerLeaf) { return testing::fatTreeTopology("", 2, 2, hostsPerLeaf); }

/// The service on the fakes, not served, with a counter-source factory that can be made to fail.
struct Harness {
  std::atomic<bool> factoryFails{false};
  testing::InProcessDaemon daemon;
  ScriptedTopologySource* topo = &daemon.topology();
  std::shared_ptr<FakeCounterControl> counters = daemon.counters();
  FabricService* service = &daemon.service();

  explicit Harness(FabricServiceOptions options = fastOptions())
      : daemon(daemonOptions(options, factoryFails)) {}
  static FabricServiceOptions fastOptions() {
    FabricServiceOptions o;
    o.crawlInterval = 50ms;
    o.sweepInterval = 20ms;
    o.retryBase = 10ms;
    return o;
  }
  static testing::InProcessDaemon::Options daemonOptions(FabricServiceOptions service,
                                                         std::atomic<bool>& fails) {
    testing::InProcessDaemon::Options o;
    o.service = service;
    o.counterSources = [&fails, control = o.counters]() -> CounterSourcePtr {
      if (fails) throw SweepError("umad: no device");
      return std::make_unique<FakeCounterSource>(control);
    };
    return o;
  }
};

TEST(ApiService, BecomesReadyAndComputesRates) {
  Harness h;
  auto t = fatTree(2);
  h.topo->push(t);
  EXPECT_FALSE(h.service->state()->ready());
  h.service->start();
  ASSERT_TRUE(waitFor([&] { return h.service->state()->sweep.runs >= 3; }, 10s));
  auto s = h.service->state();
  EXPECT_TRUE(s->ready());
  EXPECT_EQ(s->topology, t);
  ASSERT_TRUE(s->rates);
  EXPECT_EQ(s->rates->size(), s->counters->ports.size());
  const telemetry::PortRates r = *s->rates->begin();
  ASSERT_TRUE(r.txBytesPerSecond.has_value());
  EXPECT_GT(*r.txBytesPerSecond, 0.0);
  ASSERT_TRUE(s->health);
  EXPECT_EQ(s->health->size(), t->links().size());
  EXPECT_TRUE(s->crawl.lastError.empty());
  EXPECT_GT(s->crawl.runs, 0u);
  EXPECT_EQ(h.service->events().lastId(), 0u);  // the first crawl is no change
}

TEST(ApiService, TopologyChangesBecomeEvents) {
  Harness h;
  h.topo->push(fatTree(2));
  h.service->start();
  ASSERT_TRUE(waitFor([&] { return h.service->state()->ready(); }, 10s));
  // One host per leaf fewer: two host cables gone (and the spine cables move to lower leaf
  // ports: removed at the old port, added at the new one).
  h.topo->push(fatTree(1));
  // Waited for by type: under load the sweep's port_gone events may come first.
  telemetry::EventQuery q;
  q.types = {telemetry::EventType::kLinkDown};
  auto nodeGone = [&] {
    const auto down = h.service->events().query(q);
    return std::count_if(down.begin(), down.end(), [](const auto& e) {
      return e.message.find("node gone") != std::string::npos;
    });
  };
  ASSERT_TRUE(waitFor([&] { return nodeGone() >= 2; }, 10s));
  EXPECT_EQ(nodeGone(), 2);
  ASSERT_TRUE(waitFor(
      [&] {
        auto s = h.service->state();
        return s->counters && s->counters->topology == s->topology;
      },
      10s));
}

TEST(ApiService, CrawlFailuresKeepTheLastSnapshotAndBackOff) {
  Harness h;
  auto t = fatTree(1);
  h.topo->push(t);
  h.topo->pushFailure("ibsim gone");
  h.service->start();
  ASSERT_TRUE(waitFor([&] { return h.service->state()->crawl.consecutiveFailures >= 3; }, 10s));
  auto s = h.service->state();
  EXPECT_EQ(s->topology, t);  // still served
  EXPECT_EQ(s->crawl.lastError, "ibsim gone");
  ASSERT_TRUE(s->crawl.lastSuccess.has_value());
  EXPECT_TRUE(s->ready());
  // Recovers by itself.
  h.topo->push(t);
  ASSERT_TRUE(waitFor([&] { return h.service->state()->crawl.consecutiveFailures == 0; }, 10s));
  EXPECT_TRUE(h.service->state()->crawl.lastError.empty());
}

TEST(ApiService, SweepFailuresAreReportedAndRetried) {
  Harness h;
  h.factoryFails = true;
  h.topo->push(fatTree(1));
  h.service->start();
  ASSERT_TRUE(waitFor([&] { return h.service->state()->sweep.consecutiveFailures >= 2; }, 10s));
  EXPECT_FALSE(h.service->state()->ready());
  EXPECT_EQ(h.service->state()->sweep.lastError, "umad: no device");
  h.factoryFails = false;
  ASSERT_TRUE(waitFor([&] { return h.service->state()->ready(); }, 10s));
  // A source that starts throwing is re-created after the failure.
  h.counters->failSweeps = true;
  ASSERT_TRUE(waitFor([&] { return h.service->state()->sweep.consecutiveFailures >= 1; }, 10s));
  auto s = h.service->state();
  EXPECT_TRUE(s->ready());  // the last sweep is still served
  h.counters->failSweeps = false;
  ASSERT_TRUE(waitFor([&] { return h.service->state()->sweep.consecutiveFailures == 0; }, 10s));
}

TEST(ApiService, OnDemandCrawlAndPromptStop) {
  auto options = Harness::fastOptions();
  options.crawlInterval = 1h;
  options.sweepInterval = 1h;
  Harness h(options);
  h.topo->push(fatTree(1));
  h.service->start();
  ASSERT_TRUE(waitFor([&] { return h.service->state()->ready(); }, 10s));
  EXPECT_EQ(h.topo->calls(), 1);
  h.service->requestCrawl();
  ASSERT_TRUE(waitFor([&] { return h.topo->calls() == 2; }, 10s));
  const auto t0 = std::chrono::steady_clock::now();
  h.service->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
}

TEST(ApiService, StateSnapshotsAreImmutable) {
  Harness h;
  h.topo->push(fatTree(1));
  h.service->start();
  ASSERT_TRUE(waitFor([&] { return h.service->state()->ready(); }, 10s));
  auto old = h.service->state();
  const auto seq = old->counters->sequence;
  ASSERT_TRUE(waitFor([&] { return h.service->state()->counters->sequence > seq + 2; }, 10s));
  EXPECT_EQ(old->counters->sequence, seq);
  EXPECT_NE(h.service->state(), old);
}

}  // namespace
}  // namespace ibfabric::api
