#include "api/federation/merged_views.h"

#include <algorithm>

namespace ibfabric::api::federation {
namespace {

using nlohmann::json;

void addNumber(json& total, const std::string& key, const json& value) {
  if (!value.is_number()) return;
  if (!total.contains(key) || !total[key].is_number()) total[key] = 0;
  if (value.is_number_float() || total[key].is_number_float()) {
    total[key] = total[key].get<double>() + value.get<double>();
  } else {
    total[key] = total[key].get<std::int64_t>() + value.get<std::int64_t>();
  }
}

void addMap(json& total, const std::string& key, const json& value) {
  if (!value.is_object()) return;
  if (!total.contains(key)) total[key] = json::object();
  for (const auto& [k, v] : value.items()) addNumber(total[key], k, v);
}

void maxOf(json& total, const std::string& key, const json& value) {
  if (!value.is_number()) return;
  if (!total.contains(key) || !total[key].is_number() ||
      total[key].get<double>() < value.get<double>())
    total[key] = value;
}

double numberAt(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

}  // namespace

json tagged(json items, const std::string& subnet) {
  if (!items.is_array()) return json::array();
  for (auto& item : items)
    if (item.is_object()) item["subnet"] = subnet;
  return items;
}

json unavailableOf(const std::vector<SubnetAnswer>& answers) {
  json out = json::array();
  for (const auto& a : answers)
    if (!a.available) out.push_back(a.problem);
  return out;
}

json mergedHealth(const std::vector<SubnetAnswer>& health, const std::vector<json>& members) {
  json subnets = json::array();
  std::size_t available = 0, ready = 0;
  for (std::size_t i = 0; i < health.size(); ++i) {
    const SubnetAnswer& a = health[i];
    json s = i < members.size() ? members[i] : json::object();
    s["subnet"] = a.subnet;
    // A member that answers /health (200 ready or 503 starting) is reachable.
    const bool reached = a.status > 0 && a.body.is_object() && a.body.contains("status");
    s["available"] = reached;
    if (reached) {
      ++available;
      s["status"] = a.body["status"];
      s["ready"] = a.body.value("ready", false);
      if (s["ready"].get<bool>()) ++ready;
      if (a.body.contains("role")) s["role"] = a.body["role"];
      if (a.body.contains("uptime_seconds")) s["uptime_seconds"] = a.body["uptime_seconds"];
      s.erase("last_error");
      s.erase("last_error_at");
    } else {
      s["error"] = a.problem.is_object() ? a.problem.value("error", "unavailable") : "unavailable";
    }
    subnets.push_back(std::move(s));
  }
  const char* status = available == 0                                       ? "unavailable"
                       : (available == health.size() && ready == available) ? "ok"
                                                                            : "degraded";
  return {{"status", status},
          {"subnets", subnets},
          {"available", available},
          {"ready", ready},
          {"total", health.size()}};
}

json mergedFabric(const std::vector<SubnetAnswer>& summaries) {
  json subnets = json::array();
  json totals = json::object();
  std::size_t available = 0;
  for (const SubnetAnswer& a : summaries) {
    if (!a.available) {
      subnets.push_back(a.problem);
      continue;
    }
    ++available;
    subnets.push_back({{"subnet", a.subnet}, {"available", true}, {"summary", a.body}});
    for (const char* key :
         {"switches", "cas", "routers", "links", "hosts", "rails", "groups", "links_below_enabled"})
      if (a.body.contains(key)) addNumber(totals, key, a.body[key]);
    for (const char* key : {"missing", "switches_per_level", "links_by_state"})
      if (a.body.contains(key)) addMap(totals, key, a.body[key]);
    for (const char* key : {"max_level", "age_seconds"})
      if (a.body.contains(key)) maxOf(totals, key, a.body[key]);
  }
  totals["subnets"] = summaries.size();
  totals["subnets_available"] = available;
  return {{"subnets", subnets},
          {"totals", totals},
          {"available", available},
          {"total", summaries.size()}};
}

json mergedPoolUsage(const std::vector<SubnetAnswer>& usage) {
  json subnets = json::array();
  json totals = {{"total_gpus", 0.0},
                 {"usable_gpus", 0.0},
                 {"used_gpus", 0.0},
                 {"free_gpus", 0.0},
                 {"preemptions", 0}};
  for (const SubnetAnswer& a : usage) {
    if (!a.available) {
      subnets.push_back(a.problem);
      continue;
    }
    if (a.status == 404) {
      subnets.push_back({{"subnet", a.subnet}, {"available", true}, {"pool", nullptr}});
      continue;
    }
    subnets.push_back({{"subnet", a.subnet}, {"available", true}, {"pool", a.body}});
    for (const char* key : {"total_gpus", "usable_gpus", "used_gpus", "free_gpus"})
      totals[key] = totals[key].get<double>() + numberAt(a.body, key);
    addNumber(totals, "preemptions", a.body.value("preemptions", json(0)));
  }
  return {{"subnets", subnets}, {"totals", totals}, {"unavailable", unavailableOf(usage)}};
}

double linkSortMetric(const json& link, const std::string& sort) {
  if (!link.is_object()) return 0;
  if (sort == "errors") {
    const json& h = link.value("health", json());
    return h.is_object() && h.contains("reasons") && h["reasons"].is_array()
               ? double(h["reasons"].size())
               : 0.0;
  }
  double v = 0;
  for (const char* end : {"a", "b"}) {
    if (!link.contains(end) || !link[end].is_object()) continue;
    const json& r = link[end].value("rates", json());
    if (!r.is_object()) continue;
    if (sort == "utilization") {
      v = std::max({v, numberAt(r, "tx_utilization"), numberAt(r, "rx_utilization")});
    } else {
      v = std::max(v, numberAt(r, "congestion"));
    }
  }
  return v;
}

}  // namespace ibfabric::api::federation
