// /metrics compared with golden files, checked with `promtool check metrics`:
//  - the state page of a small generated fabric: fake counters (two sweeps one second apart),
//    fixed times, an expected topology with one host that is not cabled in; at the default
//    options and with every port and every counter set;
//  - the page as served over HTTP by an in-process RestServer with a placement service (one
//    request answered) and a GPU pool: every collector, live ones included; the gzip form
//    decompressed is the plain one.
// Only what varies from run to run is normalised: durations, timestamps and the process's own
// figures (memory, CPU, threads, descriptors, heap).
//
// After an intended change: IBFABRIC_UPDATE_GOLDEN=1 ./build/tests/unit_tests
//   --gtest_filter='ApiMetricsGolden*' rewrites tests/data/metrics/*.prom.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "api/daemon/service_config.h"
#include "api/http/rest_server.h"
#include "api/metrics/metrics.h"
#include "api/service/expected_topology.h"
#include "api/service/pool_service.h"
#include "discovery/net_topology.h"
#include "discovery/netfile.h"
#include "discovery/topogen.h"
#include "routing/synthetic_tables.h"
#include "telemetry/link_health_eval.h"
#include "tests/fakes/fake_sources.h"
#include "tests/support/fabrics.h"
#include "tests/support/golden.h"
#include "tests/support/gzip.h"
#include "tests/support/in_process_daemon.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;

/// What varies between runs of a fixed state: the collectors' own durations.
const std::regex kCollectorDurations(R"(^(ibfabric_collector_duration_seconds\{[^}]*\}) \S+$)");
/// What varies between runs of a live daemon: every duration (gauges, histogram sums and
/// buckets; a histogram's _count stays) and timestamp, and the compressed size of the page (its
/// text has timestamps).
const std::regex kDurationsAndTimestamps(
    R"(^(ibfabric_\w*(_duration_seconds|_duration_seconds_sum|_duration_seconds_bucket|)"
    R"(_timestamp_seconds)(\{[^}]*\})?|ibfabric_metrics_page_bytes\{[^}]*\}|)"
    R"(ibfabric_heap_bytes\{[^}]*\}|process_\w+) \S+$)");

/// The page with the values `varies` matches replaced by "<varies>".
std::string normalised(const std::string& page, const std::regex& varies) {
  std::istringstream in(page);
  std::string out, line;
  while (std::getline(in, line)) out += std::regex_replace(line, varies, "$1 <varies>") + "\n";
  return out;
}

/// `promtool check metrics` findings on `page` (empty: none); nullopt without promtool.
std::optional<std::string> promtoolFindings(const std::string& page, const std::string& name) {
  if (testing::runProcess({"sh", "-c", "command -v promtool"}).exitCode != 0) return std::nullopt;
  auto file = testing::writeScratchFile(name, page);
  auto r = testing::runProcess({"sh", "-c", "promtool check metrics < " + file.string()}, 60s);
  EXPECT_EQ(r.exitCode, 0) << r.describe();
  return r.out + r.err;
}

ServiceState goldenState() {
  const auto t0 = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
  ServiceState s;
  s.started = t0;
  const std::string net = testing::fatTreeText("g", 2, 2, 2);
  s.topology = topologyAsCrawled(parseNetText(net, "golden"));
  auto control = std::make_shared<FakeCounterControl>();
  FakeCounterSource source(control);
  source.setTopology(s.topology);
  auto first = source.sweep();
  auto second = std::make_shared<telemetry::CounterSnapshot>(*source.sweep());
  for (std::size_t i = 0; i < second->ports.size(); ++i)
    second->ports[i].at = first->ports[i].at + 1s;  // exactly one second apart
  s.counters = second;
  s.rates = std::make_shared<const telemetry::RatesTable>(telemetry::computeRates(*first, *second));
  s.health = std::make_shared<std::vector<telemetry::LinkHealthReport>>(
      telemetry::evaluateLinkHealth(*s.topology, [](telemetry::PortKey) { return nullptr; }));
  s.crawl.runs = 1;
  s.crawl.lastSuccess = t0 + 1s;
  s.crawl.lastDuration = 250ms;
  s.sweep.runs = 2;
  s.sweep.lastSuccess = t0 + 3s;
  s.sweep.lastDuration = 5ms;
  mad::MadEngineStats engine;
  engine.sent = 40;
  engine.timeouts = 2;
  engine.retries = 2;
  s.engine = engine;
  s.eventsByType = {{"link_down", 1}, {"counters_cleared", 1}};
  // Expected: the same fabric plus one host that is not there.
  ExpectedTopology expected;
  expected.path = "expected.net";
  expected.fabric = parseNetText(net + "\nHca 1 \"gextra\"\n", "expected.net");
  s.comparison = compareWithExpected(expected, *s.topology);
  return s;
}

TEST(ApiMetricsGolden, SmallFabricMatchesTheGoldenFile) {
  const auto s = goldenState();
  telemetry::EventLog log;
  const std::string text = renderMetrics(s, log);
  testing::expectGolden("metrics/small-fabric.prom", normalised(text, kCollectorDurations));
  if (auto findings = promtoolFindings(text, "golden.prom")) {
    EXPECT_EQ(*findings, "") << "promtool lint findings";
  }
}

TEST(ApiMetricsGolden, EveryPortAndCounterSetMatchesTheGoldenFile) {
  const auto s = goldenState();
  telemetry::EventLog log;
  MetricsOptions all;
  all.ports = PortScope::kAll;
  all.counterSets = MetricsOptions::allCounterSets();
  const std::string text = renderMetrics(s, log, all);
  EXPECT_GT(text.size(), renderMetrics(s, log).size());
  testing::expectGolden("metrics/small-fabric-all.prom", normalised(text, kCollectorDurations));
  if (auto findings = promtoolFindings(text, "golden-all.prom")) {
    EXPECT_EQ(*findings, "") << "promtool lint findings";
  }
}

/// The daemon's HTTP side in process: a two-level fabric behind fake sources (counters and
/// forwarding tables), the placement service and a GPU pool, RestServer on loopback.
class ApiMetricsGoldenServed : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_.topology().push(testing::routableTopology(testing::twoLevel(2, 2, 2)));
    PoolConfig pc;
    pc.enabled = true;
    pc.inventory =
        testing::writeScratchFile("metrics-golden-pool.json",
                                  R"({"hosts": [{"name": "dgx[0001-0004]", "gpu_count": 8}]})")
            .string();
    pool_ = std::make_unique<PoolService>(daemon_.service(), daemon_.placement(), pc);
    ASSERT_GT(daemon_.serve({}, pool_.get()), 0);
    daemon_.client().set_decompress(false);
    pool_->start();
    ASSERT_TRUE(daemon_.startAndWaitReady(1, [&](const ServiceState& s) {
      return s.forwarding != nullptr && pool_->pool().usage().totalGpus == 32;
    }));
    auto placed = daemon_.client().Post("/api/v1/placement", R"({"hosts": 2})", "application/json");
    ASSERT_TRUE(placed);
    ASSERT_EQ(placed->status, 200) << placed->body;
  }
  void TearDown() override {
    daemon_.stopServing();  // the server's pool routes go before the pool
    if (pool_) pool_->stop();
  }
  static testing::InProcessDaemon::Options daemonOptions() {
    testing::InProcessDaemon::Options o;
    o.service.sweepInterval = 1h;  // one sweep: the page stays put
    o.counters->serveTables = true;
    return o;
  }
  httplib::Result get(bool gzip) {
    return gzip ? daemon_.client().Get("/metrics", {{"Accept-Encoding", "gzip"}})
                : daemon_.client().Get("/metrics");
  }
  /// The served plain page once it has the final state (two scrapes in a row agree).
  std::string settledPage() {
    std::string last;
    std::string page;
    EXPECT_TRUE(testing::waitFor(
        [&] {
          auto r = get(false);
          if (!r || r->status != 200) return false;
          page = r->body;
          const std::string now = normalised(page, kDurationsAndTimestamps);
          const bool same = now == last;
          last = now;
          return same;
        },
        10s, 100ms));
    return page;
  }

  testing::InProcessDaemon daemon_{daemonOptions()};
  std::unique_ptr<PoolService> pool_;  // after daemon_: destroyed first, the service outlives it
};

TEST_F(ApiMetricsGoldenServed, ServedPageMatchesTheGoldenFile) {
  const std::string plain = settledPage();
  for (const char* family :
       {"# TYPE ibfabric_port_transmit_bytes_total counter", "# TYPE ibfabric_route_pairs gauge",
        "ibfabric_placement_requests_total{result=\"ok\"} 1",
        "ibfabric_placement_duration_seconds_count 1", "# TYPE ibfabric_pool_gpus gauge",
        "ibfabric_collector_success{collector=\"pool\"} 1"})
    EXPECT_NE(plain.find(family), std::string::npos) << family;
  testing::expectGolden("metrics/served-page.prom", normalised(plain, kDurationsAndTimestamps));

  auto gz = get(true);
  ASSERT_TRUE(gz);
  EXPECT_EQ(gz->get_header_value("Content-Encoding"), "gzip");
  EXPECT_EQ(normalised(testing::gunzip(gz->body), kDurationsAndTimestamps),
            normalised(plain, kDurationsAndTimestamps))
      << "the gzip page decompressed is the plain page";
}

TEST_F(ApiMetricsGoldenServed, ServedPagePassesPromtool) {
  const std::string plain = settledPage();
  auto findings = promtoolFindings(plain, "served.prom");
  if (!findings) GTEST_SKIP() << "promtool not installed";
  EXPECT_EQ(*findings, "") << "promtool lint findings";
}

}  // namespace
}  // namespace ibfabric::api
