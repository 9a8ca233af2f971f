// Operator writes (all need the token): start a crawl now, clear one port's counters through the
// sweep thread, and forget missing hardware removed on purpose (discovery/fabric_memory.h).
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

using nlohmann::json;
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

/// DELETE /api/v1/nodes/{guid} and /api/v1/links/{guid}/{port}: forgets a missing node (with its
/// cables) or a missing cable. 404 unknown, 409 present (only missing hardware is forgotten).
void forget(FabricService& service, const Request& req, Response& res, bool cable) {
  auto s = requireTopology(service, res, CrawlError::kHide);
  if (!s) return;
  const Node* node = nullptr;
  std::optional<PortNum> port;
  if (cable) {
    auto p = portFromPath(*s->topology, req, res);
    if (!p) return;
    node = p->node;
    port = p->ref.port;
    if (!p->port->link)
      return sendError(
          res, 404,
          "port " + toString(*port) + " of " + node->description + " has no cable in the model");
    if (!s->topology->links()[*p->port->link].missing)
      return sendError(res, 409,
                       "the cable at port " + toString(*port) + " of " + node->description +
                           " is present: only missing hardware is forgotten");
  } else {
    const std::string g = req.matches[1];
    if (!parseGuid(g)) return sendError(res, 400, "not a GUID: " + g);
    node = nodeByGuid(*s->topology, g);
    if (!node) return sendError(res, 404, "no node " + g + " in the fabric model");
    if (!node->missing)
      return sendError(res, 409,
                       node->description + " is present: only missing hardware is forgotten");
  }
  const Guid guid = node->guid;
  const std::string description = node->description;
  try {
    service.forget(guid, port);
  } catch (const std::invalid_argument& e) {  // changed since this request's snapshot
    return sendError(res, 409, e.what());
  }
  json body = {{"status", "forgotten"},
               {"guid", toString(guid)},
               {"description", description},
               {"last_event_id", service.events().lastId()}};
  if (port) body["port"] = port->value();
  sendJson(res, body, 200);
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
  r.del(R"(/api/v1/nodes/([^/]+))", Access::kToken,
        [&service](const Request& req, Response& res) { forget(service, req, res, false); });
  r.del(R"(/api/v1/links/([^/]+)/([^/]+))", Access::kToken,
        [&service](const Request& req, Response& res) { forget(service, req, res, true); });
}

}  // namespace ibfabric::api
