#include "api/http/placement_endpoint.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <array>
#include <chrono>
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

std::string_view resultOf(Kind kind) {
  switch (kind) {
    case Kind::kInvalidRequest:
      return "invalid";
    case Kind::kUnsatisfiable:
      return "unsatisfiable";
    case Kind::kNotReady:
      return "not_ready";
  }
  return "error";
}

// Process-wide metrics: a counter per result and one histogram.
constexpr std::array<double, 12> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                             0.05,   0.1,   0.25,   0.5,   1.0,  2.5};
constexpr std::array<std::string_view, 5> kResults = {"ok", "invalid", "unsatisfiable", "not_ready",
                                                      "error"};
struct Metrics {
  std::mutex mu;
  std::array<std::uint64_t, kResults.size()> requests{};
  std::array<std::uint64_t, kBuckets.size()> buckets{};
  std::uint64_t count = 0;
  double sum = 0.0;
};
Metrics& metrics() {
  static Metrics m;
  return m;
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

PlacementService::PlacementService(FabricService& service) : service_(service) {}

std::shared_ptr<const routing::PlacementEngine> PlacementService::engine() {
  ServiceStatePtr state = service_.state();
  std::lock_guard lock(mu_);
  if (engine_ && state_.lock() == state) return engine_;
  if (!state->topology) throw PlacementError(Kind::kNotReady, "no topology yet (first crawl)");
  if (!state->counters) throw PlacementError(Kind::kNotReady, "no counter sweep yet");
  if (!state->forwarding) throw PlacementError(Kind::kNotReady, "no forwarding tables yet");
  TopologyPtr topology =
      state->forwarding->topology() ? state->forwarding->topology() : state->topology;
  if (!index_ || index_->topologyPtr() != topology || index_->tablesPtr() != state->forwarding) {
    index_ = std::make_shared<const routing::PlacementIndex>(topology, state->forwarding);
    load_.reset();
  }
  if (!load_ || loadCounters_ != state->counters) {
    // One more sweep folded into the moving average (the previous model is matched by port, so
    // it carries over a new topology snapshot too).
    load_ = std::make_shared<const routing::LinkLoadModel>(routing::LinkLoadModel::fromSweep(
        topology, state->rates.get(), state->health.get(), load_.get()));
    loadCounters_ = state->counters;
  }
  engine_ = std::make_shared<const routing::PlacementEngine>(index_, load_);
  state_ = state;
  return engine_;
}

routing::PlacementAnswer PlacementService::place(const routing::PlacementRequest& request) {
  return engine()->place(request);
}

void recordPlacementRequest(std::string_view result, double seconds) {
  Metrics& m = metrics();
  std::lock_guard lock(m.mu);
  for (std::size_t i = 0; i < kResults.size(); ++i) {
    if (kResults[i] == result) ++m.requests[i];
  }
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++m.buckets[i];
  }
  ++m.count;
  m.sum += seconds;
}

std::string renderPlacementMetrics() {
  Metrics& m = metrics();
  std::lock_guard lock(m.mu);
  std::string out =
      "# HELP ibfabric_placement_requests_total Placement requests by result (ok, invalid, "
      "unsatisfiable, not_ready, error)\n# TYPE ibfabric_placement_requests_total counter\n";
  for (std::size_t i = 0; i < kResults.size(); ++i) {
    out += "ibfabric_placement_requests_total{result=\"" + std::string(kResults[i]) + "\"} " +
           std::to_string(m.requests[i]) + "\n";
  }
  out +=
      "# HELP ibfabric_placement_duration_seconds Time to answer a placement request\n"
      "# TYPE ibfabric_placement_duration_seconds histogram\n";
  char line[160];
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    std::snprintf(line, sizeof line, "ibfabric_placement_duration_seconds_bucket{le=\"%g\"} %llu\n",
                  kBuckets[i], static_cast<unsigned long long>(m.buckets[i]));
    out += line;
  }
  std::snprintf(line, sizeof line,
                "ibfabric_placement_duration_seconds_bucket{le=\"+Inf\"} %llu\n"
                "ibfabric_placement_duration_seconds_sum %.9g\n"
                "ibfabric_placement_duration_seconds_count %llu\n",
                static_cast<unsigned long long>(m.count), m.sum,
                static_cast<unsigned long long>(m.count));
  out += line;
  return out;
}

void registerPlacementRoutes(httplib::Server& server, FabricService& service) {
  auto placer = std::make_shared<PlacementService>(service);
  server.Post("/api/v1/placement", [placer](const httplib::Request& req, httplib::Response& res) {
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    auto fail = [&](int status, std::string_view result, const std::string& message) {
      recordPlacementRequest(result, elapsed());
      res.status = status;
      json body = {{"error", {{"code", status}, {"message", message}}}};
      if (result != "error") body["error"]["reason"] = std::string(result);
      res.set_content(body.dump() + "\n", "application/json");
    };
    json body;
    try {
      body = json::parse(req.body);
    } catch (const json::exception& e) {
      return fail(400, "invalid", std::string("bad JSON: ") + e.what());
    }
    try {
      routing::PlacementRequest request = placementRequestFromJson(body);
      routing::PlacementAnswer answer = placer->place(request);
      json out = placementAnswerToJson(answer);
      out["request"] = placementRequestToJson(request);
      out["duration_seconds"] = elapsed();
      recordPlacementRequest("ok", elapsed());
      res.status = 200;
      res.set_content(out.dump() + "\n", "application/json");
    } catch (const PlacementError& e) {
      switch (e.kind()) {
        case Kind::kInvalidRequest:
          return fail(400, resultOf(e.kind()), e.what());
        case Kind::kUnsatisfiable:
          return fail(422, resultOf(e.kind()), e.what());
        case Kind::kNotReady:
          return fail(503, resultOf(e.kind()), std::string("not ready: ") + e.what());
      }
    } catch (const std::exception& e) {
      spdlog::error("placement: {}", e.what());
      return fail(500, "error", std::string("internal error: ") + e.what());
    }
  });
}

}  // namespace ibfabric::api
