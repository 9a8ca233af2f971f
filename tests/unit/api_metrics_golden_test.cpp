// The whole /metrics text of a small generated fabric, compared with a golden file: fake
// counters (two sweeps one second apart), fixed times, an expected topology with one host that
// is not cabled in. Checked with `promtool check metrics` when promtool is installed.
//
// After an intended change: IBFABRIC_UPDATE_GOLDEN=1 ./build/tests/unit_tests
//   --gtest_filter='ApiMetricsGolden.*' rewrites tests/data/metrics/small-fabric.prom.
#include <gtest/gtest.h>
#include <unistd.h>

#include "api/metrics/metrics.h"
#include "api/service/expected_topology.h"
#include "discovery/net_topology.h"
#include "discovery/netfile.h"
#include "telemetry/link_health_eval.h"
#include "tests/fakes/fake_sources.h"
#include "tests/support/golden.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;

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
  auto rates = std::make_shared<std::map<telemetry::PortKey, telemetry::PortRates>>();
  for (auto& r : telemetry::computeRates(*first, *second)) rates->emplace(r.key, r);
  s.rates = rates;
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
  testing::expectGolden("metrics/small-fabric.prom", text);

  if (::access("/usr/bin/promtool", X_OK) == 0) {
    auto file = testing::writeScratchFile("golden.prom", text);
    auto r = testing::runProcess({"sh", "-c", "promtool check metrics < " + file.string()});
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    EXPECT_EQ(r.out + r.err, "") << "promtool lint findings";
  }
}

TEST(ApiMetricsGolden, MinimalPortLabelsMoveDescriptionsToPortInfo) {
  const auto s = goldenState();
  telemetry::EventLog log;
  MetricsOptions minimal;
  minimal.fullPortLabels = false;
  const std::string full = renderMetrics(s, log);
  const std::string small = renderMetrics(s, log, minimal);
  EXPECT_LT(small.size(), full.size());
  EXPECT_NE(small.find("ibfabric_port_transmit_bytes_total{guid=\"0x0000000000100000\","
                       "level=\"ca\",port=\"1\"} 8000"),
            std::string::npos)
      << small;
  EXPECT_NE(small.find("ibfabric_port_info{guid=\"0x0000000000100000\",host=\"0x0000000000100000\","
                       "level=\"ca\",node=\"ghost1-1\",port=\"1\""),
            std::string::npos)
      << small;
}

}  // namespace
}  // namespace ibfabric::api
