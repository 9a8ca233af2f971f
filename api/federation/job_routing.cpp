#include "api/federation/job_routing.h"

#include <algorithm>

namespace ibfabric::api::federation {
namespace {

using nlohmann::json;

std::optional<double> bestObjective(const json& answer) {
  if (!answer.is_object() || !answer.contains("options") || !answer["options"].is_array() ||
      answer["options"].empty())
    return std::nullopt;
  const json& o = answer["options"][0];
  if (!o.is_object() || !o.contains("score") || !o["score"].is_object()) return std::nullopt;
  const json& v = o["score"].value("objective", json());
  return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
}

std::string messageOf(const SubnetAnswer& a) {
  if (a.body.is_object() && a.body.contains("error") && a.body["error"].is_object())
    return a.body["error"].value("message", "");
  return "";
}

}  // namespace

PlacementRouting routePlacement(const std::vector<SubnetAnswer>& answers, RoutingPolicy policy) {
  PlacementRouting out;
  json subnets = json::array();
  std::optional<double> best;
  std::size_t unsatisfiable = 0, invalid = 0;
  std::string firstInvalid;
  std::string reasons;
  for (std::size_t i = 0; i < answers.size(); ++i) {
    const SubnetAnswer& a = answers[i];
    if (!a.available || a.status == 503 || a.status >= 500) {
      json p =
          a.available
              ? json{{"subnet", a.subnet}, {"available", a.status != 503}, {"error", messageOf(a)}}
              : a.problem;
      p["result"] = "unavailable";
      subnets.push_back(p);
      reasons += (reasons.empty() ? "" : "; ") + a.subnet + ": unavailable";
      continue;
    }
    if (a.status == 200) {
      const auto objective = bestObjective(a.body);
      subnets.push_back({{"subnet", a.subnet},
                         {"result", "ok"},
                         {"objective", objective ? json(*objective) : json()}});
      const bool better = !out.chosen || (policy == RoutingPolicy::kBest && objective &&
                                          (!best || *objective > *best));
      if (better) {
        out.chosen = i;
        best = objective;
      }
      continue;
    }
    const bool isInvalid = a.status == 400;
    (isInvalid ? invalid : unsatisfiable)++;
    if (isInvalid && firstInvalid.empty()) firstInvalid = messageOf(a);
    subnets.push_back({{"subnet", a.subnet},
                       {"result", isInvalid ? "invalid" : "unsatisfiable"},
                       {"status", a.status},
                       {"message", messageOf(a)}});
    reasons += (reasons.empty() ? "" : "; ") + a.subnet + ": " + messageOf(a);
  }
  if (out.chosen) {
    const std::string& subnet = answers[*out.chosen].subnet;
    out.body = answers[*out.chosen].body;
    out.body["subnet"] = subnet;
    if (out.body.contains("options") && out.body["options"].is_array())
      for (auto& o : out.body["options"])
        if (o.is_object()) o["subnet"] = subnet;
    out.body["subnets"] = subnets;
    out.status = 200;
    return out;
  }
  const auto fail = [&](int status, const char* reason, const std::string& message) {
    out.status = status;
    out.body = {{"error", {{"code", status}, {"message", message}, {"reason", reason}}},
                {"subnets", subnets}};
  };
  if (unsatisfiable > 0) {
    fail(422, "unsatisfiable", "no subnet can take the job (jobs never span subnets): " + reasons);
  } else if (invalid > 0) {
    fail(400, "invalid", firstInvalid);
  } else {
    fail(503, "not_ready", "no subnet available: " + reasons);
  }
  return out;
}

std::vector<std::size_t> allocationCandidates(const std::vector<SubnetAnswer>& usage, double gpus,
                                              RoutingPolicy policy) {
  std::vector<std::pair<double, std::size_t>> fits;
  for (std::size_t i = 0; i < usage.size(); ++i) {
    const SubnetAnswer& a = usage[i];
    if (!a.available || a.status != 200 || !a.body.is_object()) continue;
    const json& free = a.body.value("free_gpus", json());
    if (!free.is_number() || free.get<double>() < gpus) continue;
    fits.emplace_back(free.get<double>(), i);
  }
  if (policy == RoutingPolicy::kBest)
    std::stable_sort(fits.begin(), fits.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::size_t> out;
  for (const auto& f : fits) out.push_back(f.second);
  return out;
}

}  // namespace ibfabric::api::federation
