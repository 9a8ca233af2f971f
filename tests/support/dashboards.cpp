#include "tests/support/dashboards.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "tests/support/test_paths.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;

constexpr const char* kDatasource = "${DS_PROMETHEUS}";

json readJson(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": cannot open");
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw std::runtime_error(file.string() + ": not a JSON object");
  return j;
}

/// Panels in order, rows' nested panels included.
void collectPanels(const json& panels, std::vector<const json*>& out) {
  if (!panels.is_array()) return;
  for (const auto& p : panels) {
    out.push_back(&p);
    if (p.contains("panels")) collectPanels(p["panels"], out);
  }
}

/// The dashboard's top-level panels, by reference (collectPanels keeps pointers into them).
const json& topPanels(const json& d) {
  static const json kNone = json::array();
  return d.is_object() && d.contains("panels") ? d["panels"] : kNone;
}

bool isRow(const json& p) { return p.value("type", "") == "row"; }

std::string datasourceUid(const json& owner) {
  if (!owner.contains("datasource")) return "";
  const json& ds = owner["datasource"];
  if (ds.is_string()) return ds.get<std::string>();
  if (ds.is_object()) return ds.value("uid", "");
  return "";
}

std::string yamlQuote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string PanelQuery::name() const { return dashboard + " / " + panel + " [" + refId + "]"; }

std::vector<std::filesystem::path> dashboardFiles() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(sourceDir() / "dashboards")) {
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string expandGrafanaVariables(std::string expr,
                                   const std::map<std::string, std::string>& values) {
  std::map<std::string, std::string> v = {
      {"__rate_interval", "1m"}, {"__interval", "1m"}, {"__range", "1h"}};
  for (const auto& [k, val] : values) v[k] = val;
  auto replaceAll = [&](const std::string& from, const std::string& to) {
    for (std::size_t at = expr.find(from); at != std::string::npos;
         at = expr.find(from, at + to.size()))
      expr.replace(at, from.size(), to);
  };
  std::vector<std::string> names;
  for (const auto& [k, _] : v) names.push_back(k);
  std::sort(names.begin(), names.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const auto& k : names) {
    replaceAll("${" + k + "}", v[k]);
    replaceAll("$" + k, v[k]);
  }
  // Variables without a value match anything; label_replace's "$1" references stay.
  std::string out;
  for (std::size_t i = 0; i < expr.size(); ++i) {
    if (expr[i] == '$' && i + 1 < expr.size() &&
        (std::isalpha(static_cast<unsigned char>(expr[i + 1])) || expr[i + 1] == '_' ||
         expr[i + 1] == '{')) {
      std::size_t j = i + 1;
      if (expr[j] == '{') {
        j = expr.find('}', j);
        if (j == std::string::npos) break;
        ++j;
      } else {
        while (j < expr.size() &&
               (std::isalnum(static_cast<unsigned char>(expr[j])) || expr[j] == '_'))
          ++j;
      }
      out += ".*";
      i = j - 1;
      continue;
    }
    out += expr[i];
  }
  return out;
}

std::vector<PanelQuery> panelQueries(const std::vector<std::filesystem::path>& files,
                                     const std::map<std::string, std::string>& values) {
  std::vector<PanelQuery> queries;
  for (const auto& file : files) {
    const json d = readJson(file);
    std::vector<const json*> panels;
    collectPanels(topPanels(d), panels);
    if (panels.empty()) throw std::runtime_error(file.string() + ": no panels");
    for (const json* p : panels) {
      if (isRow(*p) || !p->contains("targets")) continue;
      for (const auto& t : (*p)["targets"]) {
        PanelQuery q;
        q.dashboard = d.value("uid", file.filename().string());
        q.panel = p->value("title", "(untitled)");
        q.refId = t.value("refId", "?");
        q.expr = t.value("expr", "");
        q.promql = expandGrafanaVariables(q.expr, values);
        queries.push_back(std::move(q));
      }
    }
  }
  return queries;
}

std::vector<std::string> lintDashboard(const std::filesystem::path& file) {
  std::vector<std::string> problems;
  json d;
  try {
    d = readJson(file);
  } catch (const std::exception& e) {
    return {e.what()};
  }
  if (d.value("uid", "").empty()) problems.push_back("no uid");
  if (d.value("title", "").empty()) problems.push_back("no title");
  if (!d.contains("schemaVersion") || !d["schemaVersion"].is_number() ||
      d["schemaVersion"].get<int>() < 39)
    problems.push_back("schemaVersion missing or below 39");
  bool input = false;
  for (const auto& i : d.value("__inputs", json::array()))
    input =
        input || (i.value("name", "") == "DS_PROMETHEUS" && i.value("type", "") == "datasource" &&
                  i.value("pluginId", "") == "prometheus");
  if (!input) problems.push_back("no __inputs entry DS_PROMETHEUS (datasource, prometheus)");

  std::vector<const json*> panels;
  collectPanels(topPanels(d), panels);
  if (panels.empty()) problems.push_back("no panels");
  std::set<int> ids;
  for (const json* p : panels) {
    const std::string title = p->value("title", "(untitled)");
    if (!p->contains("id") || !(*p)["id"].is_number_integer()) {
      problems.push_back("panel '" + title + "': no id");
    } else if (!ids.insert((*p)["id"].get<int>()).second) {
      problems.push_back("panel '" + title + "': duplicate id " + (*p)["id"].dump());
    }
    if (!p->contains("gridPos")) problems.push_back("panel '" + title + "': no gridPos");
    if (isRow(*p)) continue;
    if (datasourceUid(*p) != kDatasource)
      problems.push_back("panel '" + title + "': datasource is not " + std::string(kDatasource));
    const json targets = p->value("targets", json::array());
    if (targets.empty()) problems.push_back("panel '" + title + "': no targets");
    for (const auto& t : targets) {
      const std::string ref = t.value("refId", "?");
      if (datasourceUid(t) != kDatasource)
        problems.push_back("panel '" + title + "' [" + ref + "]: datasource is not " +
                           std::string(kDatasource));
      if (t.value("expr", "").empty())
        problems.push_back("panel '" + title + "' [" + ref + "]: no expr");
    }
  }
  const json vars = d.value("templating", json::object()).value("list", json::array());
  for (const auto& v : vars) {
    if (v.value("type", "") == "query" && datasourceUid(v) != kDatasource)
      problems.push_back("variable '" + v.value("name", "?") + "': datasource is not " +
                         std::string(kDatasource));
  }
  return problems;
}

std::string queriesAsRuleFile(const std::vector<PanelQuery>& queries) {
  std::ostringstream out;
  out << "groups:\n";
  int n = 0;
  for (const auto& q : queries) {
    ++n;
    out << "  - name: " << yamlQuote(q.name() + " #" + std::to_string(n)) << "\n"
        << "    rules:\n"
        << "      - record: dashboard_query_" << n << "\n"
        << "        expr: " << yamlQuote(q.promql) << "\n";
  }
  return out.str();
}

}  // namespace ibfabric::testing
