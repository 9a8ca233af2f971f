// The Grafana dashboards in dashboards/: valid JSON, unique fixed uids, current schema, every
// panel and query on the ${DS_PROMETHEUS} input, and every PromQL expression parses (through
// `promtool check rules` on a generated rule file). The lint itself is checked on a broken
// dashboard.
#include "tests/support/dashboards.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <set>

#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"

namespace ibfabric::testing {
namespace {

TEST(Dashboards, ThreeDashboardsWithUniqueUids) {
  const auto files = dashboardFiles();
  ASSERT_EQ(files.size(), 3u);
  std::set<std::string> uids;
  for (const auto& f : files) {
    auto queries = panelQueries({f});
    ASSERT_FALSE(queries.empty()) << f;
    EXPECT_TRUE(uids.insert(queries.front().dashboard).second) << "duplicate uid in " << f;
  }
  EXPECT_EQ(uids, (std::set<std::string>{"ibfabric-overview", "ibfabric-switch-port",
                                         "ibfabric-gpu-pool"}));
}

TEST(Dashboards, LintClean) {
  for (const auto& f : dashboardFiles()) {
    const auto problems = lintDashboard(f);
    std::string all;
    for (const auto& p : problems) all += "  " + p + "\n";
    EXPECT_TRUE(problems.empty()) << f << ":\n" << all;
  }
}

TEST(Dashboards, LintFindsProblems) {
  auto bad = writeScratchFile("bad-dashboard.json", R"({
    "uid": "x", "title": "x", "schemaVersion": 30,
    "panels": [
      {"id": 1, "type": "stat", "title": "no ds", "gridPos": {},
       "targets": [{"refId": "A", "expr": "up"}]},
      {"id": 1, "type": "stat", "title": "dup", "gridPos": {},
       "datasource": {"uid": "${DS_PROMETHEUS}"},
       "targets": [{"refId": "A", "datasource": {"uid": "${DS_PROMETHEUS}"}}]}
    ]})");
  const auto problems = lintDashboard(bad);
  auto has = [&](const std::string& text) {
    for (const auto& p : problems)
      if (p.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has("schemaVersion")) << ::testing::PrintToString(problems);
  EXPECT_TRUE(has("DS_PROMETHEUS (datasource")) << ::testing::PrintToString(problems);
  EXPECT_TRUE(has("panel 'no ds': datasource")) << ::testing::PrintToString(problems);
  EXPECT_TRUE(has("duplicate id 1")) << ::testing::PrintToString(problems);
  EXPECT_TRUE(has("panel 'dup' [A]: no expr")) << ::testing::PrintToString(problems);
  auto notJson = writeScratchFile("not-json.json", "{\"uid\": ");
  ASSERT_EQ(lintDashboard(notJson).size(), 1u);
  EXPECT_NE(lintDashboard(notJson)[0].find("not a JSON object"), std::string::npos);
  EXPECT_THROW(panelQueries({notJson}), std::runtime_error);
}

TEST(Dashboards, VariablesExpand) {
  EXPECT_EQ(expandGrafanaVariables(R"(rate(x{node="$switch",port=~"${port}"}[$__rate_interval]))",
                                   {{"switch", "leaf-1"}}),
            R"(rate(x{node="leaf-1",port=~".*"}[1m]))");
  // label_replace references are not variables.
  EXPECT_EQ(expandGrafanaVariables(R"q(label_replace(x, "a", "$1", "b", "(.*)"))q"),
            R"q(label_replace(x, "a", "$1", "b", "(.*)"))q");
}

TEST(Dashboards, EveryPanelExpressionParses) {
  ASSERT_EQ(::access("/usr/bin/promtool", X_OK), 0) << "promtool (Debian package prometheus)";
  const auto queries = panelQueries(dashboardFiles());
  ASSERT_GT(queries.size(), 40u);
  auto rules = writeScratchFile("dashboard-queries.yml", queriesAsRuleFile(queries));
  auto r = runProcess({"promtool", "check", "rules", rules.string()}, std::chrono::seconds(60));
  EXPECT_EQ(r.exitCode, 0) << r.describe();

  // The check does catch a broken expression, and names its panel.
  auto broken = queries;
  broken.push_back({"x", "Broken panel", "A", "sum(", "sum("});
  rules = writeScratchFile("dashboard-broken.yml", queriesAsRuleFile(broken));
  r = runProcess({"promtool", "check", "rules", rules.string()}, std::chrono::seconds(60));
  EXPECT_NE(r.exitCode, 0) << r.describe();
  EXPECT_NE((r.out + r.err).find("Broken panel"), std::string::npos) << r.describe();
}

}  // namespace
}  // namespace ibfabric::testing
