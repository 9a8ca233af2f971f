// /metrics rendering from a hand-built ServiceState: names, labels, bytes (not 4-octet units),
// per-type event counts, and `promtool check metrics` when promtool is installed.
#include "api/metrics/metrics.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/fakes/fake_sources.h"
#include "tests/support/fabrics.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;

ServiceState twoSweeps() {
  ServiceState s;
  s.started = std::chrono::system_clock::now();
  s.topology = testing::fatTreeTopology("", 1, 1, 1);
  auto control = std::make_shared<FakeCounterControl>();
  FakeCounterSource source(control);
  source.setTopology(s.topology);
  auto first = source.sweep();
  std::this_thread::sleep_for(2ms);  // a non-zero interval for the rates
  auto second = source.sweep();
  s.counters = second;
  s.rates = std::make_shared<const telemetry::RatesTable>(telemetry::computeRates(*first, *second));
  s.crawl.runs = 1;
  s.crawl.lastSuccess = s.started;
  s.crawl.lastDuration = 25ms;
  s.sweep.runs = 2;
  s.sweep.lastSuccess = s.started;
  s.sweep.lastDuration = 5ms;
  s.eventsByType = {{"link_down", 3}, {"link_up", 1}};
  return s;
}

TEST(ApiMetrics, PortCountersInBytesWithLabels) {
  auto s = twoSweeps();
  telemetry::EventLog log;
  MetricsOptions all;  // CA ports and every counter set
  all.ports = PortScope::kAll;
  all.counterSets = MetricsOptions::allCounterSets();
  const std::string text = renderMetrics(s, log, all);
  // The CA's port: the fake counts 2 x 1000 4-octet units after two sweeps; its identity on the
  // counter, its names on ibfabric_port_info.
  EXPECT_NE(text.find("ibfabric_port_transmit_bytes_total{guid=\"0x0000000000100000\",port=\"1\"} "
                      "8000\n"),
            std::string::npos)
      << text;
  const std::string prefix = "ibfabric_port_info{guid=\"0x0000000000100000\",port=\"1\",";
  const auto at = text.find(prefix);
  ASSERT_NE(at, std::string::npos) << text;
  const std::string port = text.substr(at, text.find('\n', at) - at);
  for (const char* part : {"level=\"ca\"", "port=\"1\"", "rail=\"0\"",
                           "remote_guid=\"0x0000000000200000\"", "remote_port=\"1\"", "} 1"})
    EXPECT_NE(port.find(part), std::string::npos) << part << " in " << port;
  for (const char* line :
       {"ibfabric_collector_success{collector=\"crawl\"} 1",
        "ibfabric_collector_success{collector=\"sweep\"} 1", "ibfabric_ready 1",
        "ibfabric_crawl_duration_seconds 0.025", "ibfabric_sweep_duration_seconds 0.005",
        "ibfabric_events_total{type=\"link_down\"} 3",
        "ibfabric_fabric_switches{state=\"active\"} 2", "ibfabric_fabric_links{state=\"active\"} 2",
        "# TYPE ibfabric_port_symbol_errors_total counter", "# TYPE ibfabric_port_state_id gauge"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
}

TEST(ApiMetrics, PromtoolIsHappy) {
  if (::access("/usr/bin/promtool", X_OK) != 0) GTEST_SKIP() << "promtool not installed";
  auto s = twoSweeps();
  telemetry::EventLog log;
  auto file = testing::writeScratchFile("api-metrics.txt", renderMetrics(s, log));
  auto r = testing::runProcess({"sh", "-c", "promtool check metrics < " + file.string()});
  EXPECT_EQ(r.exitCode, 0) << r.describe();
}

TEST(ApiMetrics, EmptyStateRendersServiceHealthOnly) {
  ServiceState s;
  telemetry::EventLog log;
  const std::string text = renderMetrics(s, log);
  EXPECT_NE(text.find("ibfabric_ready 0"), std::string::npos) << text;
  EXPECT_NE(text.find("ibfabric_collector_success{collector=\"crawl\"} 0"), std::string::npos);
  EXPECT_EQ(text.find("ibfabric_port_"), std::string::npos);
}

}  // namespace
}  // namespace ibfabric::api
