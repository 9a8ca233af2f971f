#include "api/http/placement_json.h"

#include <cstdio>
#include <set>

#include "discovery/hostlist.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using routing::PlacementError;
using Kind = routing::PlacementError::Kind;

[[noreturn]] void invalid(const std::string& message) {
  throw PlacementError(Kind::kInvalidRequest, message);
}

int intField(const json& body, const char* name, int min, int max) {
  const json& v = body.at(name);
  if (!v.is_number_integer()) invalid(std::string(name) + ": must be an integer");
  auto x = v.get<std::int64_t>();
  if (x < min || x > max) {
    invalid(std::string(name) + ": must be in " + std::to_string(min) + ".." + std::to_string(max));
  }
  return static_cast<int>(x);
}

std::vector<std::string> namesField(const json& body, const char* name) {
  const json& v = body.at(name);
  if (v.is_string()) {
    try {
      return expandHostlist(v.get<std::string>(), 100'000);
    } catch (const std::exception& e) {
      invalid(std::string(name) + ": " + e.what());
    }
  }
  if (!v.is_array()) invalid(std::string(name) + ": must be an array of host names or a host list");
  std::vector<std::string> out;
  for (const auto& item : v) {
    if (!item.is_string() || item.get<std::string>().empty()) {
      invalid(std::string(name) + ": every entry must be a non-empty string");
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

json linkJson(const routing::LinkLoad& l) {
  char guidA[24], guidB[24];
  std::snprintf(guidA, sizeof guidA, "0x%016llx", static_cast<unsigned long long>(l.fromGuid));
  std::snprintf(guidB, sizeof guidB, "0x%016llx", static_cast<unsigned long long>(l.toGuid));
  return {{"from", {{"node", l.fromNode}, {"guid", guidA}, {"port", l.fromPort}}},
          {"to", {{"node", l.toNode}, {"guid", guidB}, {"port", l.toPort}}},
          {"utilization", l.utilization},
          {"congestion", l.congestion},
          {"residual_bytes_per_second", l.residualBytesPerSecond},
          {"job_flows", l.jobFlows}};
}

}  // namespace

routing::PlacementRequest placementRequestFromJson(const json& body) {
  if (!body.is_object()) invalid("the body must be a JSON object");
  static const std::set<std::string> known = {"hosts",          "gpus",        "gpus_per_host",
                                              "pattern",        "candidates",  "exclude",
                                              "allow_degraded", "alternatives"};
  for (const auto& [key, value] : body.items()) {
    if (!known.count(key)) invalid("unknown field '" + key + "'");
  }
  routing::PlacementRequest r;
  if (body.contains("hosts")) r.hosts = intField(body, "hosts", 0, 1'000'000);
  if (body.contains("gpus")) r.gpus = intField(body, "gpus", 0, 8'000'000);
  if (body.contains("gpus_per_host")) r.gpusPerHost = intField(body, "gpus_per_host", 0, 64);
  if (body.contains("alternatives")) r.alternatives = intField(body, "alternatives", 1, 16);
  if (body.contains("pattern")) {
    if (!body["pattern"].is_string()) invalid("pattern: must be a string");
    auto p = routing::parseCommPattern(body["pattern"].get<std::string>());
    if (!p) invalid("pattern: must be one of none, ring_allreduce, alltoall");
    r.pattern = *p;
  }
  if (body.contains("candidates")) r.candidates = namesField(body, "candidates");
  if (body.contains("exclude")) r.exclude = namesField(body, "exclude");
  if (body.contains("allow_degraded")) {
    if (!body["allow_degraded"].is_boolean()) invalid("allow_degraded: must be true or false");
    r.allowDegraded = body["allow_degraded"].get<bool>();
  }
  if (r.hosts == 0 && r.gpus == 0) invalid("hosts or gpus: one must be > 0");
  if (r.hosts == 0 && r.gpusPerHost == 0) invalid("gpus_per_host: required with gpus");
  return r;
}

json placementRequestToJson(const routing::PlacementRequest& r) {
  json out = {{"pattern", std::string(routing::toString(r.pattern))},
              {"alternatives", r.alternatives},
              {"allow_degraded", r.allowDegraded}};
  if (r.hosts > 0) out["hosts"] = r.hosts;
  if (r.gpus > 0) out["gpus"] = r.gpus;
  if (r.gpusPerHost > 0) out["gpus_per_host"] = r.gpusPerHost;
  if (!r.candidates.empty()) out["candidates"] = r.candidates;
  if (!r.exclude.empty()) out["exclude"] = r.exclude;
  return out;
}

json placementAnswerToJson(const routing::PlacementAnswer& a) {
  json options = json::array();
  for (const auto& o : a.options) {
    json hot = json::array();
    for (const auto& l : o.score.hottestLinks) hot.push_back(linkJson(l));
    options.push_back({{"hosts", o.hosts},
                       {"hostlist", compressHostlist(o.hosts)},
                       {"score",
                        {{"leaf_switches", o.score.leafSwitches},
                         {"max_hops", o.score.maxHops},
                         {"bottleneck_bytes_per_second", o.score.bottleneckBytesPerSecond},
                         {"objective", o.score.objective},
                         {"hottest_links", hot},
                         {"explanation", o.score.explanation}}}});
  }
  return {{"options", options}, {"warnings", a.warnings}};
}

routing::PlacementAnswer placementAnswerFromJson(const json& body) {
  try {
    routing::PlacementAnswer a;
    for (const auto& o : body.at("options")) {
      routing::PlacementOption opt;
      opt.hosts = o.at("hosts").get<std::vector<std::string>>();
      const json& s = o.at("score");
      opt.score.leafSwitches = s.at("leaf_switches").get<int>();
      opt.score.maxHops = s.at("max_hops").get<int>();
      opt.score.bottleneckBytesPerSecond = s.at("bottleneck_bytes_per_second").get<double>();
      opt.score.objective = s.at("objective").get<double>();
      opt.score.explanation = s.at("explanation").get<std::string>();
      for (const auto& l : s.at("hottest_links")) {
        routing::LinkLoad link;
        link.fromNode = l.at("from").at("node").get<std::string>();
        link.fromGuid = std::stoull(l.at("from").at("guid").get<std::string>(), nullptr, 16);
        link.fromPort = l.at("from").at("port").get<int>();
        link.toNode = l.at("to").at("node").get<std::string>();
        link.toGuid = std::stoull(l.at("to").at("guid").get<std::string>(), nullptr, 16);
        link.toPort = l.at("to").at("port").get<int>();
        link.utilization = l.at("utilization").get<double>();
        link.congestion = l.at("congestion").get<double>();
        link.residualBytesPerSecond = l.at("residual_bytes_per_second").get<double>();
        link.jobFlows = l.at("job_flows").get<int>();
        opt.score.hottestLinks.push_back(std::move(link));
      }
      a.options.push_back(std::move(opt));
    }
    a.warnings = body.at("warnings").get<std::vector<std::string>>();
    return a;
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("not a placement answer: ") + e.what());
  } catch (const std::logic_error& e) {
    throw std::invalid_argument(std::string("not a placement answer: ") + e.what());
  }
}

}  // namespace ibfabric::api
