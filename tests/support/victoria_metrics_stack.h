// VictoriaMetrics for end-to-end tests: Debian's single-node `victoria-metrics` (storage and the
// Prometheus query API; Prometheus remote-writes into it) and `vmalert` evaluating Prometheus
// rule files against it (recording rules written back into it, firing alerts posted to a
// notifier URL, as to an Alertmanager), each on a free loopback port with a private directory.
//
//   VictoriaMetricsStack vm;
//   vm.start({rulesFile}, "http://127.0.0.1:" + std::to_string(notifierPort), 1s);
//   ... Prometheus with remote_write to vm.remoteWriteUrl() ...
//   nlohmann::json r = vm.query("sum(ibfabric_fabric_links)");  // the "data" object
//   nlohmann::json a = vm.alerts();                             // vmalert's {"alerts": [...]}
//
// start() throws std::runtime_error with the logs when a server does not come up within 60 s;
// query()/alerts()/ruleGroups() throw when the call fails. stop() and the destructor stop both
// (SIGTERM, then SIGKILL to the group). Not thread-safe: one owner thread.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/background_process.h"

namespace ibfabric::testing {

class VictoriaMetricsStack {
 public:
  VictoriaMetricsStack() = default;
  ~VictoriaMetricsStack();
  VictoriaMetricsStack(const VictoriaMetricsStack&) = delete;
  VictoriaMetricsStack& operator=(const VictoriaMetricsStack&) = delete;

  /// True when victoria-metrics and vmalert are installed (Debian package victoria-metrics).
  static bool available();

  void start(const std::vector<std::filesystem::path>& rulesFiles, const std::string& notifierUrl,
             std::chrono::seconds evaluationInterval);
  void stop();

  /// Where Prometheus's remote_write sends samples.
  std::string remoteWriteUrl() const;
  /// Instant query on VictoriaMetrics' /api/v1/query; the "data" object.
  nlohmann::json query(const std::string& promql) const;
  /// The "data" object of vmalert's /api/v1/alerts ({"alerts": [...]}).
  nlohmann::json alerts() const;
  /// data.groups of vmalert's /api/v1/rules.
  nlohmann::json ruleGroups() const;
  /// Both servers' logs so far.
  std::string logs() const;

 private:
  std::unique_ptr<BackgroundProcess> startServer(const std::string& name,
                                                 std::vector<std::string> argv, int& port);

  std::filesystem::path dir_;
  std::unique_ptr<BackgroundProcess> vm_, vmalert_;
  int vmPort_ = -1, vmalertPort_ = -1;
};

}  // namespace ibfabric::testing
