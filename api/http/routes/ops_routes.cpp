// Operator writes (both need the token): start a crawl now, and clear one port's counters
// through the sweep thread.
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "api/http/http_json.h"
#include "api/http/request_params.h"
#include "api/http/rest_server.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"
#include "api/http/state_guards.h"

namespace ibfabric::api {
namespace {

using Request = httplib::Request;
using Response = httplib::Response;

int httpStatus(ClearCountersResult::Status s) {
  using Status = ClearCountersResult::Status;
  switch (s) {
    case Status::kOk:
      return 200;
    case Status::kTimeout:
      return 504;
    case Status::kRejected:
      return 502;
    case Status::kUnsupported:
      return 501;
    case Status::kNotReady:
      return 503;
    case Status::kUnknownPort:
      return 404;
  }
  return 500;
}

void clearCounters(FabricService& service, std::chrono::milliseconds timeout, const Request& req,
                   Response& res) {
  auto s = requireTopology(service, res, CrawlError::kHide);
  if (!s) return;
  auto p = portFromPath(*s->topology, req, res);
  if (!p) return;
  const std::string g = req.matches[1], portText = req.matches[2];
  if (!p->port->remote)
    return sendError(res, 404, "port " + portText + " of " + g + " has no link");
  if (!s->counters) return sendError(res, 503, "not ready: no counter sweep has completed yet");
  const telemetry::PortKey key{p->node->guid, p->port->num};
  const auto result = service.clearCounters(key, timeout);
  const int status = httpStatus(result.status);
  if (status != 200) return sendError(res, status, result.message);
  sendJson(res,
           {{"status", "cleared"},
            {"guid", toString(p->node->guid)},
            {"port", p->ref.port.value()},
            {"extended", result.extended},
            {"last_event_id", service.events().lastId()}},
           200);
}

}  // namespace

void addOpsRoutes(Router& r) {
  FabricService& service = r.fabric();
  const auto timeout = r.options().clearTimeout;
  r.post("/api/v1/discover", Access::kToken, [&service](const Request&, Response& res) {
    service.requestCrawl();
    sendJson(res, {{"status", "accepted"}}, 202);
  });
  r.post(R"(/api/v1/ports/([^/]+)/([^/]+)/clear-counters)", Access::kToken,
         [&service, timeout](const Request& req, Response& res) {
           clearCounters(service, timeout, req, res);
         });
}

}  // namespace ibfabric::api
