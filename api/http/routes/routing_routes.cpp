// Routes through the forwarding tables of the last read: one route between two endpoints, the
// validation of every pair, and the up-port balance of the leaves.
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "api/http/http_json.h"
#include "api/http/json_views.h"
#include "api/http/request_params.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"
#include "api/http/routing_json.h"
#include "api/http/state_guards.h"
#include "routing/route_query.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using Request = httplib::Request;
using Response = httplib::Response;

void routes(FabricService& service, const Request& req, Response& res) {
  if (!req.has_param("src") || !req.has_param("dst")) {
    return sendError(res, 400, "give src and dst (a host, an HCA, a GUID or a LID)");
  }
  auto s = requireTables(service, res);
  if (!s) return;
  const Topology& t = *s->forwarding->topology();
  std::vector<routing::RouteEndpoint> src, dst;
  try {
    src = routing::resolveEndpoint(t, req.get_param_value("src"));
    dst = routing::resolveEndpoint(t, req.get_param_value("dst"));
  } catch (const routing::EndpointError& e) {
    return sendError(res, 404, e.what());
  }
  json routes = json::array();
  for (const auto& [a, b] : routing::pairEndpoints(src, dst)) {
    auto r = routing::traceRoute(t, *s->forwarding, a.port, b.lid);
    routes.push_back(routeJson(t, a.port, r, s.get()));
  }
  sendJson(res, {{"source", s->forwarding->source()}, {"routes", routes}});
}

}  // namespace

void addRoutingRoutes(Router& r) {
  FabricService& service = r.fabric();
  r.get("/api/v1/routes",
        [&service](const Request& req, Response& res) { routes(service, req, res); });
  r.get("/api/v1/routing/validation", [&service](const Request& req, Response& res) {
    auto limit = limitParam(req, res, 100);
    if (!limit) return;
    auto s = requireTables(service, res);
    if (!s) return;
    json j = validationJson(*s->forwarding->topology(), *s->forwarding,
                            s->routeAnalysis->validation, *limit);
    j["analysis_seconds"] = std::chrono::duration<double>(s->routeAnalysis->analysisTime).count();
    j["read_seconds"] = std::chrono::duration<double>(s->forwarding->readTime).count();
    j["tables_read_at"] = epochSeconds(s->routeAnalysis->tablesReadAt);
    sendJson(res, j);
  });
  r.get("/api/v1/routing/balance", [&service](const Request&, Response& res) {
    auto s = requireTables(service, res);
    if (!s) return;
    json j = balanceJson(*s->forwarding->topology(), s->routeAnalysis->balance);
    j["source"] = s->forwarding->source();
    sendJson(res, j);
  });
}

}  // namespace ibfabric::api
