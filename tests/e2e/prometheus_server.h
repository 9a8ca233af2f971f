// A real Prometheus (Debian package `prometheus`) for end-to-end tests: scrapes the given
// targets as job "ibfabric" every second, evaluates the given rule files every second (copies in
// which every `for:` is rewritten to 0s, so alerts fire on their first evaluation), on a free
// loopback port, with its data in a scratch directory. Stopped (SIGTERM) in the destructor.
//
//   PrometheusServer prom({.targets = {"127.0.0.1:" + std::to_string(port)},
//                          .ruleFiles = {alerts, rules}});
//   auto r = prom.query("ibfabric_ready");          // data.result, or throws
//   auto a = prom.alerts();                         // /api/v1/alerts data.alerts
//
// Not thread-safe: one owner thread.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/background_process.h"

namespace ibfabric::testing {

struct PrometheusOptions {
  std::vector<std::string> targets;  ///< HOST:PORT of each ibfabricd
  std::vector<std::filesystem::path> ruleFiles;
  std::string scrapeInterval = "1s";
  bool zeroForDurations = true;  ///< rewrite `for:` to 0s in the loaded copies
  std::chrono::seconds startTimeout{60};
};

struct QueryResult {
  bool ok = false;
  std::string error;    ///< errorType: error, when !ok
  nlohmann::json data;  ///< data.result when ok
};

class PrometheusServer {
 public:
  /// Writes the configuration, starts Prometheus and waits for /-/ready; throws
  /// std::runtime_error (with the log's tail) when it does not come up.
  explicit PrometheusServer(const PrometheusOptions& options);
  ~PrometheusServer();
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::filesystem::path& dir() const { return dir_; }

  /// Instant query at now.
  QueryResult tryQuery(const std::string& expr) const;
  /// data.result of an instant query; throws std::runtime_error with Prometheus's error.
  nlohmann::json query(const std::string& expr) const;
  /// data.alerts of /api/v1/alerts (pending and firing).
  nlohmann::json alerts() const;
  /// data.groups of /api/v1/rules.
  nlohmann::json ruleGroups() const;
  std::string log() const;

 private:
  nlohmann::json get(const std::string& path) const;

  std::filesystem::path dir_;
  int port_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
};

/// A copy of a Prometheus rule file's text with every `for: <duration>` set to `for: 0s`.
std::string zeroForDurations(const std::string& ruleFileText);

}  // namespace ibfabric::testing
