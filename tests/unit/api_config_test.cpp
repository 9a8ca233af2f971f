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

TEST(ApiConfig, ShippedExampleIsValid) {
  auto c = loadConfigFile(std::string(IBFABRIC_SOURCE_DIR) + "/packaging/ibfabricd.yaml");
  EXPECT_EQ(c.listen.host, "127.0.0.1");
}

}  // namespace
}  // namespace ibfabric::api
