// MetricsPage and the collectors' contract: a collector that throws loses what it wrote and
// reports ibfabric_collector_success 0, the rest of the page still renders; every collector has
// a success and a duration sample; the gzip body is the plain body compressed (one member per
// collector, then the tail). Shard variants: each rendered for its shard, re-rendered on a new
// state while scraped, dropped when not, capped; bad parameters answer 400 over HTTP. A scrape of
// a rendered page never waits for a rendering under way.
#include "api/metrics/metrics_page.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <condition_variable>
#include <future>
#include <mutex>
#include <stdexcept>

#include "api/metrics/collectors.h"
#include "api/metrics/metrics.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_sources.h"
#include "tests/support/fabrics.h"
#include "tests/support/gzip.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

/// Writes half a family, then throws.
class ThrowingCollector final : public Collector {
 public:
  std::string_view name() const override { return "broken"; }
  void collect(const CollectContext&, MetricWriter& out) const override {
    out.family("ibfabric_broken_thing", "Never on the page", "gauge");
    out.sampleU("ibfabric_broken_thing", "", 1);
    throw std::runtime_error("source went away");
  }
};

/// One gauge with a fixed value.
class FixedCollector final : public Collector {
 public:
  std::string_view name() const override { return "fixed"; }
  void collect(const CollectContext&, MetricWriter& out) const override {
    out.family("ibfabric_fixed_thing", "Always 7", "gauge");
    out.sampleU("ibfabric_fixed_thing", "", 7);
  }
};

std::vector<CollectorPtr> brokenThenFixed() {
  std::vector<CollectorPtr> c;
  c.push_back(std::make_unique<ThrowingCollector>());
  c.push_back(std::make_unique<FixedCollector>());
  return c;
}

std::string body(MetricsBody& b) {
  std::string out;
  for (std::size_t at = 0; at < b.size();) {
    const auto part = b.chunk(at, 1000);  // small chunks: the head/tail boundary is crossed
    EXPECT_FALSE(part.empty());
    out.append(part);
    at += part.size();
  }
  return out;
}

TEST(ApiMetricsCollectors, AThrowingCollectorReportsFailureAndThePageStillRenders) {
  ServiceState s;
  telemetry::EventLog events;
  StateRendering r = renderState(brokenThenFixed(), s, events, MetricsOptions{});
  EXPECT_EQ(r.text.find("ibfabric_broken_thing"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("ibfabric_fixed_thing 7\n"), std::string::npos) << r.text;
  ASSERT_EQ(r.collectors.size(), 2u);
  EXPECT_FALSE(r.collectors[0].success);
  EXPECT_TRUE(r.collectors[1].success);
  std::string status;
  MetricWriter out(status);
  writeCollectorStatus(out, r.fabricReads, r.collectors);
  EXPECT_NE(status.find("ibfabric_collector_success{collector=\"broken\"} 0\n"), std::string::npos)
      << status;
  EXPECT_NE(status.find("ibfabric_collector_success{collector=\"fixed\"} 1\n"), std::string::npos);
  EXPECT_NE(status.find("ibfabric_collector_success{collector=\"crawl\"} 0\n"), std::string::npos)
      << "the fabric reads stay in the family";
  EXPECT_NE(status.find("ibfabric_collector_duration_seconds{collector=\"broken\"} "),
            std::string::npos);
  EXPECT_EQ(status.find("ibfabric_collector_duration_seconds{collector=\"crawl\"}"),
            std::string::npos)
      << "a fabric read is not a collector of the page";
}

TEST(ApiMetricsCollectors, EveryStateCollectorReportsSuccessAndDuration) {
  ServiceState s;
  telemetry::EventLog events;
  const std::string page = renderMetrics(s, events);
  for (const auto& c : stateCollectors()) {
    const std::string label = "{collector=\"" + std::string(c->name()) + "\"} ";
    EXPECT_NE(page.find("ibfabric_collector_success" + label + "1\n"), std::string::npos)
        << c->name() << "\n"
        << page;
    EXPECT_NE(page.find("ibfabric_collector_duration_seconds" + label), std::string::npos)
        << c->name();
  }
}

TEST(ApiMetricsPage, LiveCollectorsFollowTheStateFamiliesPlainOrGzip) {
  auto source = std::make_unique<ScriptedTopologySource>();
  source->pushFailure("no fabric");
  FabricService service(std::move(source), [] { return CounterSourcePtr(); });
  std::vector<CollectorPtr> state;
  state.push_back(daemonCollector());
  MetricsPage page(service, MetricsOptions{}, std::move(state), brokenThenFixed());

  MetricsBody plainBody = page.body(false);
  EXPECT_FALSE(plainBody.gzip());
  const std::string plain = body(plainBody);
  const auto ready = plain.find("# TYPE ibfabric_ready gauge");
  const auto fixed = plain.find("ibfabric_fixed_thing 7\n");
  const auto status = plain.find("# TYPE ibfabric_collector_success gauge");
  ASSERT_NE(ready, std::string::npos) << plain;
  ASSERT_NE(fixed, std::string::npos) << plain;
  ASSERT_NE(status, std::string::npos) << plain;
  EXPECT_LT(ready, fixed);
  EXPECT_LT(fixed, status);
  EXPECT_EQ(plain.find("ibfabric_broken_thing"), std::string::npos);
  EXPECT_NE(plain.find("ibfabric_collector_success{collector=\"broken\"} 0\n"), std::string::npos);
  EXPECT_NE(plain.find("ibfabric_collector_success{collector=\"daemon\"} 1\n"), std::string::npos);

  MetricsBody gzBody = page.body(true);
  EXPECT_TRUE(gzBody.gzip());
  const std::string unzipped = testing::gunzip(body(gzBody));
  // Equal up to the durations of this scrape's collectors (the last family).
  const auto cut = plain.find("# HELP ibfabric_collector_duration_seconds");
  ASSERT_NE(cut, std::string::npos);
  EXPECT_EQ(unzipped.substr(0, cut), plain.substr(0, cut));
  page.stop();
}

using namespace std::chrono_literals;

/// Per-switch series of switches 1..16 that the context's shard keeps, valued with the event
/// log's last id (so a new event is a new rendering).
class ShardCollector final : public Collector {
 public:
  std::string_view name() const override { return "switches"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    out.family("ibfabric_test_switch", "One per switch of the shard", "gauge");
    for (std::uint64_t g = 1; g <= 16; ++g)
      if (c.shard.keeps(Guid(g)))
        out.sampleU("ibfabric_test_switch", Labels("guid", std::to_string(g)), c.events.lastId());
  }
};

/// A collector that, once armed, blocks its whole-page renderings until released.
class GatedCollector final : public Collector {
 public:
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool armed = false;
    bool entered = false;
    bool released = false;
  };
  explicit GatedCollector(std::shared_ptr<Gate> gate) : gate_(std::move(gate)) {}
  std::string_view name() const override { return "gated"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    if (c.shard.whole()) {
      std::unique_lock lock(gate_->mu);
      if (gate_->armed) {
        gate_->entered = true;
        gate_->cv.notify_all();
        gate_->cv.wait(lock, [&] { return gate_->released; });
      }
    }
    out.family("ibfabric_test_event", "The event log's last id when rendered", "gauge");
    out.sampleU("ibfabric_test_event", "", c.events.lastId());
  }

 private:
  std::shared_ptr<Gate> gate_;
};

std::unique_ptr<FabricService> idleService() {
  auto source = std::make_unique<ScriptedTopologySource>();
  source->pushFailure("no fabric");
  return std::make_unique<FabricService>(std::move(source), [] { return CounterSourcePtr(); });
}

std::vector<CollectorPtr> one(CollectorPtr c) {
  std::vector<CollectorPtr> v;
  v.push_back(std::move(c));
  return v;
}

std::uint64_t appendEvent(FabricService& service) {
  return service.events().append(telemetry::EventType::kLinkDown, {Guid(1), "sw1", PortNum(1)},
                                 std::nullopt, "test");
}

std::string plainBody(MetricsPage& page, MetricsShard shard) {
  std::string error;
  auto b = page.body(false, shard, error);
  EXPECT_TRUE(b) << error;
  return b ? body(*b) : std::string();
}

TEST(ApiMetricsPage, AShardVariantHasOnlyItsSwitchesAndFollowsNewStates) {
  auto service = idleService();
  MetricsPage page(*service, MetricsOptions{}, one(std::make_unique<ShardCollector>()), {},
                   MetricsPageLimits{.poll = 10ms});
  EXPECT_NE(plainBody(page, {}).find("guid=\"16\"}"), std::string::npos) << "the whole page";
  std::size_t total = 0;
  for (unsigned i = 0; i < 3; ++i) {
    const std::string part = plainBody(page, {i, 3});
    for (std::uint64_t g = 1; g <= 16; ++g) {
      const bool here = part.find("guid=\"" + std::to_string(g) + "\"}") != std::string::npos;
      EXPECT_EQ(here, (MetricsShard{i, 3}.keeps(Guid(g)))) << i << " " << g;
      total += here;
    }
    EXPECT_NE(part.find("ibfabric_collector_success{collector=\"switches\"} 1"), std::string::npos)
        << "fabric-wide families are in every shard";
  }
  EXPECT_EQ(total, 16u) << "every switch is in exactly one shard";
  std::string error;
  EXPECT_EQ(page.latest({0, 1}, error), page.latest()) << "shards=1 is the whole page";
  EXPECT_EQ(page.renderings(), 4u);

  // A new state: every variant scraped recently is rendered again by the page's thread.
  const std::uint64_t id = appendEvent(*service);
  const std::string now = "} " + std::to_string(id) + "\n";
  EXPECT_TRUE(testing::waitFor(
      [&] {
        for (unsigned i = 0; i < 3; ++i) {
          const auto r = page.latest({i, 3}, error);
          if (!r || r->lastEventId != id) return false;
        }
        return page.latest()->lastEventId == id;
      },
      10s, 5ms));
  EXPECT_NE(plainBody(page, {1, 3}).find(now), std::string::npos);
  EXPECT_NE(plainBody(page, {}).find(now), std::string::npos);
  std::size_t held = page.latest()->page.bytes;
  for (unsigned i = 0; i < 3; ++i) held += page.latest({i, 3}, error)->page.bytes;
  EXPECT_EQ(page.heldBytes(), held);
}

TEST(ApiMetricsPage, VariantsNotScrapedForAWhileAreDroppedAndTheirNumberIsCapped) {
  auto service = idleService();
  mad::FakeClock clock;
  MetricsPage page(
      *service, MetricsOptions{}, one(std::make_unique<ShardCollector>()), {},
      MetricsPageLimits{.maxShardVariants = 2, .keepFor = 1min, .poll = 5ms, .clock = &clock});
  std::string error;
  ASSERT_TRUE(page.latest({0, 4}, error));
  ASSERT_TRUE(page.latest({1, 4}, error));
  EXPECT_FALSE(page.latest({2, 4}, error)) << "a third shard variant is one too many";
  EXPECT_NE(error.find("too many shard variants"), std::string::npos) << error;
  EXPECT_FALSE(page.body(true, {2, 4}, error));
  EXPECT_TRUE(page.latest()) << "the whole page is always served";
  EXPECT_EQ(page.renderings(), 3u);

  clock.advance(30s);
  ASSERT_TRUE(page.latest({1, 4}, error));  // still scraped
  clock.advance(45s);  // {0,4} and the whole page: 75 s without a scrape; {1,4}: 45 s
  EXPECT_TRUE(testing::waitFor([&] { return page.renderings() == 1; }, 10s, 5ms));
  EXPECT_EQ(page.heldBytes(), page.latest({1, 4}, error)->page.bytes);
  EXPECT_TRUE(page.latest({2, 4}, error)) << "room again: " << error;
}

TEST(ApiMetricsPage, AScrapeOfARenderedPageDoesNotWaitForARenderingUnderWay) {
  auto service = idleService();
  auto gate = std::make_shared<GatedCollector::Gate>();
  MetricsPage page(*service, MetricsOptions{}, one(std::make_unique<GatedCollector>(gate)), {},
                   MetricsPageLimits{.poll = 5ms});
  const std::uint64_t before = page.latest()->lastEventId;
  {
    std::lock_guard lock(gate->mu);
    gate->armed = true;
  }
  appendEvent(*service);  // a new state: the thread renders the whole page again, and blocks
  {
    std::unique_lock lock(gate->mu);
    ASSERT_TRUE(gate->cv.wait_for(lock, 10s, [&] { return gate->entered; }));
  }
  auto release = [&] {
    std::lock_guard lock(gate->mu);
    gate->released = true;
    gate->cv.notify_all();
  };
  // While that rendering is stuck: the whole page scrapes (its last rendering), and a shard
  // scraped for the first time renders on its own thread.
  auto scrape = std::async(std::launch::async, [&] {
    MetricsBody whole = page.body(false);
    std::string error;
    auto shard = page.body(true, {0, 2}, error);
    return std::make_pair(body(whole), shard ? testing::gunzip(body(*shard)) : error);
  });
  const bool done = scrape.wait_for(30s) == std::future_status::ready;  // a hang guard only
  bool stillRendering = false;
  {
    std::lock_guard lock(gate->mu);
    stillRendering = !gate->released;
  }
  release();
  ASSERT_TRUE(done) << "the scrape waited for the rendering";
  EXPECT_TRUE(stillRendering);
  const auto [whole, shard] = scrape.get();
  EXPECT_NE(whole.find("ibfabric_test_event " + std::to_string(before) + "\n"), std::string::npos)
      << whole;
  EXPECT_NE(shard.find("ibfabric_test_event " + std::to_string(service->events().lastId())),
            std::string::npos)
      << shard;
  EXPECT_TRUE(testing::waitFor(
      [&] { return page.latest()->lastEventId == service->events().lastId(); }, 10s, 5ms));
}

TEST(ApiMetricsShardsServed, BadShardParametersAnswer400AndShardsServePlainOrGzip) {
  testing::InProcessDaemon::Options o;
  o.service.sweepInterval = 1h;  // one sweep: every scrape below sees the same state
  testing::InProcessDaemon d(o);
  d.topology().push(testing::fatTreeTopology("", 2, 2, 2));
  ASSERT_GT(d.serve(), 0);
  ASSERT_TRUE(d.startAndWaitReady(1));
  for (const char* bad :
       {"/metrics?shard=2&shards=2", "/metrics?shard=1", "/metrics?shards=2",
        "/metrics?shard=x&shards=2", "/metrics?shard=0&shards=0", "/metrics?shard=0&shards=1025"}) {
    auto r = d.client().Get(bad);
    ASSERT_TRUE(r) << bad;
    EXPECT_EQ(r->status, 400) << bad;
    EXPECT_NE(r->body.find("\"message\":\"bad shard: "), std::string::npos) << r->body;
  }
  d.client().set_decompress(false);
  auto plain = d.client().Get("/metrics?shard=1&shards=2");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 200);
  EXPECT_NE(plain->body.find("ibfabric_collector_success{collector=\"ports\"} 1"),
            std::string::npos);
  auto gz = d.client().Get("/metrics?shard=1&shards=2", {{"Accept-Encoding", "gzip"}});
  ASSERT_TRUE(gz);
  EXPECT_EQ(gz->status, 200);
  EXPECT_EQ(gz->get_header_value("Content-Encoding"), "gzip");
  const std::string unzipped = testing::gunzip(gz->body);
  // The state families are the same rendering; the live ones (the process's own figures first)
  // are rendered per scrape.
  const auto cut = std::min(unzipped.find("# HELP process_"),
                            unzipped.find("# HELP ibfabric_metrics_page_bytes"));
  ASSERT_NE(cut, std::string::npos);
  EXPECT_EQ(unzipped.substr(0, cut), plain->body.substr(0, cut));

  // Up to 64 shard variants (shard=1&shards=2 above is one); one more is refused, the whole
  // page is not.
  for (unsigned i = 0; i < 63; ++i) {
    auto r = d.client().Get("/metrics?shard=" + std::to_string(i) + "&shards=65");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << i << " " << r->body;
  }
  auto refused = d.client().Get("/metrics?shard=63&shards=65");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_NE(refused->body.find("too many shard variants"), std::string::npos) << refused->body;
  auto whole = d.client().Get("/metrics");
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->status, 200);
}

}  // namespace
}  // namespace ibfabric::api
