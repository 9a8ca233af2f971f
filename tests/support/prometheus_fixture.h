// A real Prometheus server for end-to-end tests: Debian's `prometheus` binary started on
// loopback with a generated configuration, a private storage directory and a free port.
//
//   PrometheusFixture prom;
//   std::string url = prom.start(PrometheusFixture::scrapeConfig("127.0.0.1:9464"), {rules});
//   prom.waitForTargets(1, 30s);                       // every target "up"
//   nlohmann::json r = prom.query("sum(ibfabric_fabric_links)");   // the "data" object
//   nlohmann::json a = prom.alerts();                  // the "data" object of /api/v1/alerts
//   prom.stop();                                       // also done by the destructor
//
// start() throws std::runtime_error (with Prometheus's log) when the server does not come up;
// query()/alerts() throw when the HTTP call fails or Prometheus answers with an error.
// The server runs in its own process group and is killed (SIGTERM, then SIGKILL after 10 s) by
// stop() or the destructor. Not thread-safe: use one fixture from one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ibfabric::testing {

class PrometheusFixture {
 public:
  PrometheusFixture() = default;
  ~PrometheusFixture();
  PrometheusFixture(const PrometheusFixture&) = delete;
  PrometheusFixture& operator=(const PrometheusFixture&) = delete;

  /// True when the prometheus binary is installed (tests GTEST_SKIP otherwise).
  static bool available();

  /// A minimal prometheus.yml: one job "ibfabric" scraping `target` ("HOST:PORT", path
  /// /metrics) every `interval`; rules evaluated at the same interval.
  static std::string scrapeConfig(const std::string& target,
                                  std::chrono::seconds interval = std::chrono::seconds(1));

  /// Writes `configYaml` (a full prometheus.yml without `rule_files`; the given rule files are
  /// appended as a `rule_files:` list of absolute paths), starts Prometheus on 127.0.0.1 with a
  /// free port and waits (≤ 60 s) until /-/ready answers. Returns the base URL
  /// ("http://127.0.0.1:PORT").
  std::string start(const std::string& configYaml,
                    const std::vector<std::filesystem::path>& rulesFiles = {});

  /// Instant query through /api/v1/query; returns the response's "data" object
  /// ({"resultType": ..., "result": [...]}).
  nlohmann::json query(const std::string& promql) const;
  /// The "data" object of /api/v1/alerts ({"alerts": [...]}).
  nlohmann::json alerts() const;
  /// The "data" object of /api/v1/targets ({"activeTargets": [...], ...}).
  nlohmann::json targets() const;
  /// Waits until at least `count` active targets report health "up"; false after `timeout`.
  bool waitForTargets(std::size_t count, std::chrono::milliseconds timeout) const;

  /// Stops the server (idempotent).
  void stop();

  const std::string& url() const { return url_; }
  int port() const { return port_; }
  /// Prometheus's own stdout+stderr so far (for assertion messages).
  std::string log() const;

 private:
  nlohmann::json getData(const std::string& pathAndQuery) const;

  pid_t pid_ = -1;
  int port_ = -1;
  std::string url_;
  std::filesystem::path dir_;
};

}  // namespace ibfabric::testing
