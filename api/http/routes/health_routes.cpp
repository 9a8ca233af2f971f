// Health: the summary, the liveness probe (the process serves HTTP) and the readiness probe (the
// data is fresh).
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "api/http/ha_json.h"
#include "api/http/http_json.h"
#include "api/http/json_views.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"

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

}  // namespace

void addHealthRoutes(Router& r) {
  FabricService& service = r.fabric();
  const auto now = [] { return std::chrono::system_clock::now(); };

  r.get("/api/v1/health", [&service, now](const Request&, Response& res) {
    auto s = service.state();
    sendJson(res, healthJson(*s, now()), s->ready() || warmStandby(*s) ? 200 : 503);
  });
  // Liveness: the process serves HTTP. Always 200.
  r.get("/api/v1/health/live", [&service, now](const Request&, Response& res) {
    auto s = service.state();
    sendJson(res,
             {{"live", true},
              {"uptime_seconds", std::chrono::duration<double>(now() - s->started).count()}},
             200);
  });
  // Readiness: 200 only while the data is fresh (see readyNow); else 503 with the health body.
  r.get("/api/v1/health/ready", [&service, now](const Request&, Response& res) {
    auto s = service.state();
    const auto t = now();
    // A warm standby serves reads of its snapshot (with its age): ready for them.
    const bool ready = readyNow(*s, t) || warmStandby(*s);
    json body = healthJson(*s, t);
    body["ready"] = ready;
    body["sweep_overdue"] = sweepOverdue(*s, t);
    if (!ready && s->ready()) body["status"] = "degraded";
    sendJson(res, body, ready ? 200 : 503);
  });
}

}  // namespace ibfabric::api
