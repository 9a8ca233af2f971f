// The Grafana dashboards of dashboards/*.json as data for tests: every panel query (with the
// dashboard's Grafana variables expanded into plain PromQL) and a structural lint.
//
//   for (const auto& q : panelQueries(dashboardFiles())) ... q.promql ...
//
// Free functions over files; thread-safe.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace ibfabric::testing {

struct PanelQuery {
  std::string dashboard;  ///< uid
  std::string panel;      ///< title
  std::string refId;
  std::string expr;    ///< as written, with Grafana variables
  std::string promql;  ///< variables expanded (see expandGrafanaVariables)

  /// "<uid> / <panel title> [<refId>]" for messages.
  std::string name() const;
};

/// dashboards/*.json of the source tree, sorted.
std::vector<std::filesystem::path> dashboardFiles();

/// Replaces Grafana's built-in interval variables ($__rate_interval, $__interval, $__range) and
/// the dashboards' own variables (${name} and $name) by `values` (defaults: every variable
/// ".*", the intervals "1m"). Longer names are replaced first.
std::string expandGrafanaVariables(std::string expr,
                                   const std::map<std::string, std::string>& values = {});

/// Every target of every panel of `files`; throws std::runtime_error naming the file when one
/// is not valid JSON or has no panels.
std::vector<PanelQuery> panelQueries(const std::vector<std::filesystem::path>& files,
                                     const std::map<std::string, std::string>& values = {});

/// Structural problems of one dashboard file, one line each ("" prefix-free): not JSON, no uid,
/// schemaVersion below 39, no DS_PROMETHEUS input, a panel or target or query variable whose
/// datasource is not ${DS_PROMETHEUS}, a target without expr, duplicate panel ids.
std::vector<std::string> lintDashboard(const std::filesystem::path& file);

/// A Prometheus rule file with one recording rule per query (group "<name>"), for
/// `promtool check rules` to parse every expression.
std::string queriesAsRuleFile(const std::vector<PanelQuery>& queries);

}  // namespace ibfabric::testing
