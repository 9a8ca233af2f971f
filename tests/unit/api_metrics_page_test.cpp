// MetricsPage and the collectors' contract: a collector that throws loses what it wrote and
// reports ibfabric_collector_success 0, the rest of the page still renders; every collector has
// a success and a duration sample; the gzip body is the plain body compressed (two members).
#include "api/metrics/metrics_page.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "api/metrics/collectors.h"
#include "api/metrics/metrics.h"
#include "tests/fakes/fake_sources.h"
#include "tests/support/gzip.h"

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

std::string body(const MetricsBody& b) {
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

  const MetricsBody plainBody = page.body(false);
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

  const MetricsBody gzBody = page.body(true);
  EXPECT_TRUE(gzBody.gzip());
  const std::string unzipped = testing::gunzip(body(gzBody));
  // Equal up to the durations of this scrape's collectors (the last family).
  const auto cut = plain.find("# HELP ibfabric_collector_duration_seconds");
  ASSERT_NE(cut, std::string::npos);
  EXPECT_EQ(unzipped.substr(0, cut), plain.substr(0, cut));
  page.stop();
}

}  // namespace
}  // namespace ibfabric::api
