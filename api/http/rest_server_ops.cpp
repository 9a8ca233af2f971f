// The operational endpoints of RestServer: liveness and readiness probes and clearing a port's
// counters (docs/api.md).
#include <httplib.h>

#include <charconv>
#include <nlohmann/json.hpp>

#include "api/http/http_json.h"
#include "api/http/json_views.h"
#include "api/http/rest_server.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using Request = httplib::Request;
using Response = httplib::Response;

/// A sweep is overdue when its planned start passed more than 10 s (+ twice the last sweep's
/// duration) ago: a sweep that hangs (e.g. a wedged transport) shows here.
bool sweepOverdue(const ServiceState& s, std::chrono::system_clock::time_point now) {
  if (!s.sweep.nextAttempt) return false;
  const auto grace = std::chrono::seconds(10) + 2 * s.sweep.lastDuration;
  return now > *s.sweep.nextAttempt + std::chrono::duration_cast<std::chrono::seconds>(grace);
}

/// Ready to be relied on: the first crawl and sweep are done, the last attempts of both
/// succeeded and no sweep is overdue (a daemon that cannot sweep serves stale data: not ready).
bool readyNow(const ServiceState& s, std::chrono::system_clock::time_point now) {
  return s.ready() && s.crawl.consecutiveFailures == 0 && s.sweep.consecutiveFailures == 0 &&
         !sweepOverdue(s, now);
}

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

}  // namespace

std::unique_ptr<httplib::Server> makeHttpServer(const std::string& cert, const std::string& key) {
  if (cert.empty() && key.empty()) return std::make_unique<httplib::Server>();
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
  auto server = std::make_unique<httplib::SSLServer>(cert.c_str(), key.c_str());
  if (!server->is_valid())
    throw std::runtime_error("tls: cannot load the certificate " + cert + " or the key " + key);
  return server;
#else
  throw std::runtime_error("tls: this build of cpp-httplib has no OpenSSL support");
#endif
}

void RestServer::opsRoutes() {
  auto& svr = *server_;
  FabricService& service = service_;
  const auto now = [] { return std::chrono::system_clock::now(); };

  // Liveness: the process serves HTTP. Always 200.
  svr.Get("/api/v1/health/live", [&service, now](const Request&, Response& res) {
    auto s = service.state();
    sendJson(res,
             {{"live", true},
              {"uptime_seconds", std::chrono::duration<double>(now() - s->started).count()}},
             200);
  });
  // Readiness: 200 only while the data is fresh (see readyNow); else 503 with the health body.
  svr.Get("/api/v1/health/ready", [&service, now](const Request&, Response& res) {
    auto s = service.state();
    const auto t = now();
    const bool ready = readyNow(*s, t);
    json body = healthJson(*s, t);
    body["ready"] = ready;
    body["sweep_overdue"] = sweepOverdue(*s, t);
    if (!ready && s->ready()) body["status"] = "degraded";
    sendJson(res, body, ready ? 200 : 503);
  });

  // The last crawl against the configured expected topology.
  svr.Get("/api/v1/topology/compare", [&service](const Request&, Response& res) {
    auto s = service.state();
    if (!s->topology) return sendError(res, 503, "not ready: the first crawl has not completed");
    if (!s->comparison)
      return sendError(res, 404,
                       "no expected topology configured (expected_topology in the config)");
    const TopologyComparison& c = *s->comparison;
    json body = compareToJson(c.result);
    json nodes = json::array();
    for (const auto& n : c.nodes)
      nodes.push_back({{"guid", n.guid.empty() ? json() : json(n.guid)},
                       {"node", n.name},
                       {"type", n.type},
                       {"present", n.present}});
    body["expected_nodes"] = nodes;
    body["missing_nodes"] = {
        {"switch", c.missingSwitches}, {"ca", c.missingCas}, {"router", c.missingRouters}};
    body["compared_at"] = std::chrono::duration<double>(c.at.time_since_epoch()).count();
    sendJson(res, body, 200);
  });

  svr.Post(R"(/api/v1/ports/([^/]+)/([^/]+)/clear-counters)",
           [this, &service](const Request& req, Response& res) {
             if (!auth_.authorize(req, res)) return;
             auto s = service.state();
             if (!s->topology)
               return sendError(res, 503, "not ready: the first crawl has not completed");
             const std::string g = req.matches[1], p = req.matches[2];
             auto guid = parseGuid(g);
             if (!guid) return sendError(res, 400, "not a GUID: " + g);
             unsigned portNum = 0;
             auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), portNum);
             if (ec != std::errc() || end != p.data() + p.size() || p.empty() || portNum > 255)
               return sendError(res, 400, "not a port number: " + p);
             const Topology& t = *s->topology;
             const Node* n = t.findNode(*guid);
             if (!n) {
               if (auto ref = t.findPort(*guid)) n = &t.node(ref->node);
             }
             if (!n) return sendError(res, 404, "no node with GUID " + g);
             const Port* port = n->port(PortNum(static_cast<std::uint8_t>(portNum)));
             if (!port) return sendError(res, 404, "node " + g + " has no port " + p);
             if (!port->remote)
               return sendError(res, 404, "port " + p + " of " + g + " has no link");
             if (!s->counters)
               return sendError(res, 503, "not ready: no counter sweep has completed yet");
             const telemetry::PortKey key{n->guid, port->num};
             const auto result = service.clearCounters(key, options_.clearTimeout);
             const int status = httpStatus(result.status);
             if (status != 200) return sendError(res, status, result.message);
             sendJson(res,
                      {{"status", "cleared"},
                       {"guid", toString(n->guid)},
                       {"port", portNum},
                       {"extended", result.extended},
                       {"last_event_id", service.events().lastId()}},
                      200);
           });
}

}  // namespace ibfabric::api
