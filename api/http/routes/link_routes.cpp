// Links (filtered by state and level, sorted by utilization, congestion or errors) and one port
// with its counters, rates and history.
#include <httplib.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "api/http/http_json.h"
#include "api/http/json_views.h"
#include "api/http/request_params.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"
#include "api/http/state_guards.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using Request = httplib::Request;
using Response = httplib::Response;

/// The value a link is sorted by (the larger first): the busiest side's utilization or
/// congestion, or the number of health reasons.
double sortMetric(const json& l, const std::string& sort) {
  double v = 0;
  for (const char* side : {"a", "b"}) {
    const json& r = l[side]["rates"];
    if (r.is_null()) continue;
    if (sort == "utilization") {
      for (const char* k : {"tx_utilization", "rx_utilization"})
        if (r[k].is_number()) v = std::max(v, r[k].get<double>());
    } else if (sort == "congestion" && r["congestion"].is_number()) {
      v = std::max(v, r["congestion"].get<double>());
    }
  }
  if (sort == "errors" && l["health"].is_object()) v = double(l["health"]["reasons"].size());
  return v;
}

bool keepLink(const json& l, const std::string& state, std::optional<int> level) {
  if (level && l["level"].get<int>() != *level) return false;
  if (state == "active" && l["port_state"] != "active") return false;
  if (state == "down" && l["port_state"] != "down") return false;
  if ((state == "degraded" || state == "ok" || state == "faulty") && l["state"] != state)
    return false;
  return true;
}

void links(FabricService& service, const Request& req, Response& res) {
  auto s = requireTopology(service, res);
  if (!s) return;
  std::string state = paramOr(req, "state", "");
  if (!state.empty() && state != "active" && state != "down" && state != "degraded" &&
      state != "ok" && state != "faulty")
    return sendError(res, 400, "bad state (active|down|degraded|faulty|ok): " + state);
  std::optional<int> level;
  if (req.has_param("level")) {
    level = parseLevel(req.get_param_value("level"));
    if (!level) return sendError(res, 400, "bad level: " + req.get_param_value("level"));
  }
  std::string sort = paramOr(req, "sort", "");
  if (!sort.empty() && sort != "utilization" && sort != "congestion" && sort != "errors")
    return sendError(res, 400, "bad sort (utilization|congestion|errors): " + sort);
  auto limit = limitParam(req, res, std::numeric_limits<std::uint64_t>::max());
  if (!limit) return;
  const Topology& t = *s->topology;
  std::vector<json> out;
  for (std::uint32_t i = 0; i < t.links().size(); ++i) {
    json l = linkJson(t, i, *s);
    if (keepLink(l, state, level)) out.push_back(std::move(l));
  }
  if (!sort.empty())
    std::stable_sort(out.begin(), out.end(), [&](const json& x, const json& y) {
      return sortMetric(x, sort) > sortMetric(y, sort);
    });
  if (out.size() > *limit) out.resize(*limit);
  sendJson(res, {{"count", out.size()}, {"links", out}});
}

}  // namespace

void addLinkRoutes(Router& r) {
  FabricService& service = r.fabric();
  r.get("/api/v1/links",
        [&service](const Request& req, Response& res) { links(service, req, res); });
  r.get(R"(/api/v1/ports/([^/]+)/([^/]+))", [&service](const Request& req, Response& res) {
    auto s = requireTopology(service, res);
    if (!s) return;
    auto p = portFromPath(*s->topology, req, res);
    if (!p) return;
    sendJson(res, portJson(*s->topology, p->ref, *s, service.history()));
  });
}

}  // namespace ibfabric::api
