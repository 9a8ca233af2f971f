// The event log: events after an id, by type, at most a limit; with wait= a long-poll that
// answers as soon as a matching event is appended (at most RestOptions::maxWaiters wait at once).
#include <httplib.h>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>

#include "api/http/http_json.h"
#include "api/http/json_views.h"
#include "api/http/request_params.h"
#include "api/http/rest_server.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using Request = httplib::Request;
using Response = httplib::Response;

/// The query of a request's since, limit and type parameters; nullopt with the 400 sent.
std::optional<telemetry::EventQuery> eventQuery(const Request& req, Response& res) {
  const auto bad = [&res](const std::string& message) {
    sendError(res, 400, message);
    return std::optional<telemetry::EventQuery>();
  };
  telemetry::EventQuery q;
  if (req.has_param("since")) {
    auto v = parseUint(req.get_param_value("since"));
    if (!v) return bad("bad since: " + req.get_param_value("since"));
    q.sinceId = *v;
  }
  if (req.has_param("limit")) {
    auto v = parseUint(req.get_param_value("limit"));
    if (!v || *v == 0 || *v > 10000)
      return bad("bad limit (1..10000): " + req.get_param_value("limit"));
    q.limit = *v;
  }
  if (req.has_param("type")) {
    std::string types = req.get_param_value("type");
    std::size_t start = 0;
    while (start <= types.size()) {
      std::size_t comma = types.find(',', start);
      std::string one =
          types.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      auto t = telemetry::parseEventType(one);
      if (!t) return bad("unknown event type: " + one);
      q.types.insert(*t);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return q;
}

void events(FabricService& service, const RestOptions& options, std::atomic<std::size_t>& waiters,
            const Request& req, Response& res) {
  auto q = eventQuery(req, res);
  if (!q) return;
  double wait = 0;
  if (req.has_param("wait")) {
    auto v = parseSeconds(req.get_param_value("wait"));
    if (!v) return sendError(res, 400, "bad wait: " + req.get_param_value("wait"));
    wait = std::min(*v, static_cast<double>(options.maxWait.count()));
  }
  auto& log = service.events();
  auto events = log.query(*q);
  // Cap the waiters: beyond maxWaiters, answer at once (the client polls again).
  const bool waiting = wait > 0 && events.empty() && ++waiters <= options.maxWaiters;
  if (wait > 0 && events.empty() && !waiting) {
    --waiters;
    wait = 0;
    res.set_header("Retry-After", "1");
  }
  // Long-poll in short slices so shutdown is never held up by a waiting client.
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(wait));
  std::uint64_t seen = std::max(q->sinceId, log.lastId());
  while (events.empty() && !service.stopping() && std::chrono::steady_clock::now() < deadline) {
    if (log.waitForNewer(seen, std::chrono::milliseconds(100))) {
      events = log.query(*q);
      seen = log.lastId();
    }
  }
  if (waiting) --waiters;
  json out = json::array();
  for (const auto& e : events) out.push_back(eventJson(e));
  // last_id: where this answer ends (the next `since`); newest_id: where the log is now.
  sendJson(res, {{"events", out},
                 {"last_id", events.empty() ? q->sinceId : events.back().id},
                 {"newest_id", log.lastId()}});
}

}  // namespace

void addEventRoutes(Router& r) {
  FabricService& service = r.fabric();
  const RestOptions& options = r.options();
  auto waiters = std::make_shared<std::atomic<std::size_t>>(0);  // long-polls waiting now
  r.get("/api/v1/events", [&service, &options, waiters](const Request& req, Response& res) {
    events(service, options, *waiters, req, res);
  });
}

}  // namespace ibfabric::api
