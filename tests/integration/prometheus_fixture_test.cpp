// The Prometheus test fixture itself: a real Prometheus scrapes a tiny HTTP server of the test
// (fixed metrics), its targets come up, PromQL answers with the served values, alerts from a
// rule file fire, and stop() ends the process.
#include "tests/support/prometheus_fixture.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <thread>

#include "tests/support/scope_exit.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using namespace std::chrono_literals;

TEST(PrometheusFixture, ScrapesQueriesAndEvaluatesRules) {
  if (!PrometheusFixture::available()) GTEST_SKIP() << "prometheus is not installed";
  httplib::Server server;
  server.Get("/metrics", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("# TYPE fixture_value gauge\nfixture_value{kind=\"a\"} 42\n",
                    "text/plain; version=0.0.4");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&] { server.listen_after_bind(); });
  const ScopeExit stopServing([&] {  // also when an ASSERT below returns early
    server.stop();
    if (serving.joinable()) serving.join();
  });

  auto rules = writeScratchFile("fixture-rules.yml",
                                "groups:\n  - name: fixture\n    rules:\n"
                                "      - alert: FixtureHigh\n        expr: fixture_value > 40\n");
  PrometheusFixture prom;
  const std::string url =
      prom.start(PrometheusFixture::scrapeConfig("127.0.0.1:" + std::to_string(port)), {rules});
  EXPECT_EQ(url, "http://127.0.0.1:" + std::to_string(prom.port()));
  ASSERT_TRUE(prom.waitForTargets(1, 30s)) << prom.targets().dump() << prom.log();

  nlohmann::json value;
  ASSERT_TRUE(waitFor(
      [&] {
        value = prom.query("fixture_value{kind=\"a\"}");
        return !value["result"].empty();
      },
      30s, 200ms));
  EXPECT_EQ(value["resultType"], "vector");
  EXPECT_EQ(value["result"][0]["value"][1], "42");
  EXPECT_EQ(value["result"][0]["metric"]["job"], "ibfabric");

  ASSERT_TRUE(waitFor(
      [&] {
        const auto alerts = prom.alerts();
        for (const auto& a : alerts["alerts"])
          if (a["labels"]["alertname"] == "FixtureHigh" && a["state"] == "firing") return true;
        return false;
      },
      30s, 200ms))
      << prom.alerts().dump();
  EXPECT_THROW(prom.query("sum("), std::runtime_error);

  prom.stop();
  EXPECT_THROW(prom.query("up"), std::runtime_error);
}

}  // namespace
}  // namespace ibfabric::testing
