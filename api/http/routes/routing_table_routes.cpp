// Per-switch freshness of the forwarding tables, optionally only the switches in one state.
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "api/http/http_json.h"
#include "api/http/lft_status.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"

namespace ibfabric::api {

void addRoutingTableRoutes(Router& r) {
  FabricService& service = r.fabric();
  r.get("/api/v1/routing/tables", [&service](const httplib::Request& req, httplib::Response& res) {
    using routing::TableState;
    std::optional<TableState> only;
    if (req.has_param("state")) {
      const std::string v = req.get_param_value("state");
      for (TableState s : {TableState::kOk, TableState::kStale, TableState::kMissing}) {
        if (v == routing::toString(s)) only = s;
      }
      if (!only) return sendError(res, 400, "bad state: " + v + " (ok|stale|missing)");
    }
    auto s = service.state();
    if (!s->forwarding || !s->forwarding->topology()) {
      std::string why = "not ready: forwarding tables have not been read";
      if (!s->routes.lastError.empty()) why += " (last error: " + s->routes.lastError + ")";
      return sendError(res, 503, why);
    }
    nlohmann::json j = tableStatusJson(*s->forwarding->topology(), *s->forwarding, only, false);
    j["read_seconds"] = std::chrono::duration<double>(s->forwarding->readTime).count();
    j["read_mads"] = s->forwarding->madsUsed;
    sendJson(res, j);
  });
}

}  // namespace ibfabric::api
