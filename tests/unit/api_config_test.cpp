// ibfabricd's configuration: YAML keys over defaults, validation, listen addresses.
#include <gtest/gtest.h>

#include "api/daemon/service_config.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;

TEST(ApiConfig, DefaultsAreValidAndLoopback) {
  ServiceConfig c;
  EXPECT_NO_THROW(c.validate());
  EXPECT_EQ(c.listen.host, "127.0.0.1");
  EXPECT_EQ(c.listen.port, 9464);
  EXPECT_TRUE(c.apiToken.empty());
}

TEST(ApiConfig, YamlOverridesOnlyTheKeysGiven) {
  auto c = loadConfigText(R"(
listen: "0.0.0.0:0"
crawl_interval: 30
sweep_interval: 2.5
ca: mlx5_1
ca_port: 2
log_level: debug
api_token: s3cret
mad: {window: 16, retries: 1}
)");
  EXPECT_EQ(c.listen.host, "0.0.0.0");
  EXPECT_EQ(c.listen.port, 0);
  EXPECT_EQ(c.crawlInterval, 30s);
  EXPECT_EQ(c.sweepInterval, 2500ms);
  EXPECT_EQ(c.ca, "mlx5_1");
  EXPECT_EQ(c.caPort, 2);
  EXPECT_EQ(c.logLevel, "debug");
  EXPECT_EQ(c.apiToken, "s3cret");
  EXPECT_EQ(c.madWindow, 16);
  EXPECT_EQ(c.madRetries, 1);
  EXPECT_EQ(c.madTimeoutMs, 200);  // untouched
  EXPECT_EQ(c.historyDepth, 64u);
}

TEST(ApiConfig, EmptyDocumentKeepsTheBase) {
  ServiceConfig base;
  base.caPort = 3;
  EXPECT_EQ(loadConfigText("", base).caPort, 3);
  EXPECT_EQ(loadConfigText("# only a comment\n", base).caPort, 3);
}

TEST(ApiConfig, RejectsWhatItDoesNotUnderstand) {
  EXPECT_THROW(loadConfigText("sweep_intervall: 3\n"), ConfigError);
  EXPECT_THROW(loadConfigText("mad: {windows: 3}\n"), ConfigError);
  EXPECT_THROW(loadConfigText("sweep_interval: 0\n"), ConfigError);
  EXPECT_THROW(loadConfigText("sweep_interval: -1\n"), ConfigError);
  EXPECT_THROW(loadConfigText("sweep_interval: soon\n"), ConfigError);
  EXPECT_THROW(loadConfigText("listen: localhost\n"), ConfigError);
  EXPECT_THROW(loadConfigText("log_level: loud\n"), ConfigError);
  EXPECT_THROW(loadConfigText("ca_port: 300\n"), ConfigError);
  EXPECT_THROW(loadConfigText("[1, 2]\n"), ConfigError);
  EXPECT_THROW(loadConfigText("listen: [\n"), ConfigError);
  EXPECT_THROW(loadConfigFile("/nonexistent/ibfabricd.yaml"), ConfigError);
  EXPECT_THROW(loadConfigText("node_name_map: /nonexistent/map\n"), ConfigError);
  try {
    loadConfigText("sweep_intervall: 3\n");
    FAIL() << "an unknown key was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sweep_intervall"), std::string::npos) << e.what();
  }
}

TEST(ApiConfig, ListenAddresses) {
  auto a = parseListenAddress("127.0.0.1:0");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 0);
  auto b = parseListenAddress("[::1]:9464");
  EXPECT_EQ(b.host, "::1");
  EXPECT_EQ(b.port, 9464);
  EXPECT_THROW(parseListenAddress(":80"), ConfigError);
  EXPECT_THROW(parseListenAddress("host:"), ConfigError);
  EXPECT_THROW(parseListenAddress("host:65536"), ConfigError);
  EXPECT_THROW(parseListenAddress("host:8x"), ConfigError);
}

TEST(ApiConfig, SubnetWaitProxyBackoffAndCrawlCheck) {
  const ServiceConfig d;
  EXPECT_TRUE(d.waitForSubnet);
  EXPECT_EQ(d.madProxyRestartCap, std::chrono::seconds(30));
  EXPECT_TRUE(d.crawlCheckEnabled);
  EXPECT_DOUBLE_EQ(d.crawlCheckMaxLoss, 0.10);
  EXPECT_EQ(d.crawlCheckRemovalAfter, 3u);
  auto c = loadConfigText(
      "wait_for_subnet: false\nmad_proxy_restart_cap: 5\n"
      "crawl_check: {enabled: false, max_loss: 0.25, removal_after: 7}\n");
  EXPECT_FALSE(c.waitForSubnet);
  EXPECT_EQ(c.madProxyRestartCap, std::chrono::seconds(5));
  EXPECT_FALSE(c.crawlCheckEnabled);
  EXPECT_DOUBLE_EQ(c.crawlCheckMaxLoss, 0.25);
  EXPECT_EQ(c.crawlCheckRemovalAfter, 7u);
  EXPECT_THROW(loadConfigText("crawl_check: {max_loss: 1.5}\n"), ConfigError);
  EXPECT_THROW(loadConfigText("crawl_check: {removal_after: 0}\n"), ConfigError);
  EXPECT_THROW(loadConfigText("crawl_check: {limit: 3}\n"), ConfigError);
  EXPECT_THROW(loadConfigText("crawl_check: 3\n"), ConfigError);
  EXPECT_THROW(loadConfigText("mad_proxy_restart_cap: 0\n"), ConfigError);
  // The SM trap subscription: off unless turned on; a non-boolean is a clear error.
  EXPECT_FALSE(d.smTraps);
  EXPECT_TRUE(loadConfigText("sm_traps: true\n").smTraps);
  EXPECT_THROW(loadConfigText("sm_traps: sometimes\n"), ConfigError);
}

TEST(ApiConfig, StateDirectoryAndRetention) {
  const ServiceConfig d;
  EXPECT_TRUE(d.stateDir.empty());  // nothing kept across restarts unless asked
  EXPECT_DOUBLE_EQ(d.stateEventMaxAgeDays, 30);
  EXPECT_EQ(d.stateEventMaxCount, 100000u);
  EXPECT_EQ(d.stateMaxSizeMb, 1024u);
  auto c = loadConfigText(
      "state: {dir: /var/lib/ibfabric, event_max_age_days: 7, event_max_count: 500, "
      "max_size_mb: 64}\n");
  EXPECT_EQ(c.stateDir, "/var/lib/ibfabric");
  EXPECT_DOUBLE_EQ(c.stateEventMaxAgeDays, 7);
  EXPECT_EQ(c.stateEventMaxCount, 500u);
  EXPECT_EQ(c.stateMaxSizeMb, 64u);
  EXPECT_THROW(loadConfigText("state: {dir: /x, keep: 3}\n"), ConfigError);
  EXPECT_THROW(loadConfigText("state: /var/lib/ibfabric\n"), ConfigError);
  EXPECT_THROW(loadConfigText("state: {event_max_age_days: -1}\n"), ConfigError);
  EXPECT_THROW(loadConfigText("state: {event_max_count: [1]}\n"), ConfigError);
  EXPECT_THROW(loadConfigText("state: {max_size_mb: 99999999}\n"), ConfigError);
}

TEST(ApiConfig, ShippedExampleIsValid) {
  auto c = loadConfigFile(std::string(IBFABRIC_SOURCE_DIR) + "/packaging/ibfabricd.yaml");
  EXPECT_EQ(c.listen.host, "127.0.0.1");
}

}  // namespace
}  // namespace ibfabric::api

namespace ibfabric::api {
namespace {

TEST(ApiConfig, MetricsDefaultsAreSwitchPortsAndTheAlertingCounterSets) {
  const ServiceConfig c = loadConfigText("");
  EXPECT_EQ(c.metrics.ports, PortScope::kSwitch);
  for (CounterSet s : {CounterSet::kTraffic, CounterSet::kErrors, CounterSet::kCongestion})
    EXPECT_TRUE(c.metrics.exports(s)) << counterSetName(s);
  for (CounterSet s : {CounterSet::kPackets, CounterSet::kPhysicalErrors, CounterSet::kFilterErrors,
                       CounterSet::kUtilization, CounterSet::kLink, CounterSet::kXmitWait})
    EXPECT_FALSE(c.metrics.exports(s)) << counterSetName(s);
  EXPECT_TRUE(c.metrics.disabledCollectors.empty());
  EXPECT_TRUE(c.metricsPortLabels.empty());
}

TEST(ApiConfig, MetricsPortsCountersAndCollectors) {
  auto c = loadConfigText(R"(
metrics:
  ports: all
  counters: [traffic, utilization]
  collectors: {links: false, routing: false, ports: true}
)");
  EXPECT_EQ(c.metrics.ports, PortScope::kAll);
  EXPECT_EQ(c.metrics.counterSets, MetricsOptions::bit(CounterSet::kTraffic) |
                                       MetricsOptions::bit(CounterSet::kUtilization));
  EXPECT_EQ(c.metrics.disabledCollectors, (std::vector<std::string>{"links", "routing"}));
  EXPECT_FALSE(c.metrics.runs("links"));
  EXPECT_TRUE(c.metrics.runs("ports"));
  EXPECT_EQ(loadConfigText("metrics: {counters: all}\n").metrics.counterSets,
            MetricsOptions::allCounterSets());
  EXPECT_EQ(loadConfigText("metrics: {counters: []}\n").metrics.counterSets, 0u);
  EXPECT_EQ(loadConfigText("metrics: {ports: switch}\n").metrics.ports, PortScope::kSwitch);
  // Every set by its name.
  for (std::size_t i = 0; i < kCounterSetCount; ++i) {
    const auto set = static_cast<CounterSet>(i);
    const auto one =
        loadConfigText("metrics: {counters: [" + std::string(counterSetName(set)) + "]}\n");
    EXPECT_EQ(one.metrics.counterSets, MetricsOptions::bit(set)) << counterSetName(set);
  }
}

TEST(ApiConfig, MetricsUnknownValuesAreErrors) {
  for (const char* bad : {
           "metrics: {ports: hcas}\n",
           "metrics: {ports: [switch]}\n",
           "metrics: {counters: [traffic, rates]}\n",
           "metrics: {counters: some}\n",
           "metrics: {counters: {traffic: true}}\n",
           "metrics: {collectors: {linkz: false}}\n",
           "metrics: {collectors: {daemon: false}}\n",
           "metrics: {collectors: {links: maybe}}\n",
           "metrics: {collectors: [links]}\n",
           "metrics: {shards: 2}\n",
           "metrics: {port_labels: some}\n",
       })
    EXPECT_THROW(loadConfigText(bad), ConfigError) << bad;
  try {
    loadConfigText("metrics: {counters: [rates]}\n");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown counter set \"rates\""), std::string::npos)
        << e.what();
  }
}

TEST(ApiConfig, DeprecatedPortLabelsStillLoad) {
  // A configuration written for the labelled page loads; the key changes nothing (the daemon
  // logs that it is ignored).
  for (const char* v : {"full", "minimal"}) {
    const auto c = loadConfigText(std::string("metrics: {port_labels: ") + v + "}\n");
    EXPECT_EQ(c.metricsPortLabels, v);
    EXPECT_EQ(c.metrics.ports, PortScope::kSwitch);
    EXPECT_EQ(c.metrics.counterSets, MetricsOptions::defaultCounterSets());
  }
}

}  // namespace
}  // namespace ibfabric::api
