#include "api/http/state_guards.h"

#include "api/http/http_json.h"

namespace ibfabric::api {

ServiceStatePtr requireTopology(FabricService& service, httplib::Response& res,
                                CrawlError wording) {
  auto s = service.state();
  if (!s->topology) {
    const bool why = wording == CrawlError::kShow && !s->crawl.lastError.empty();
    sendError(res, 503,
              "not ready: the first crawl has not completed" +
                  (why ? " (last error: " + s->crawl.lastError + ")" : std::string()));
    return nullptr;
  }
  return s;
}

ServiceStatePtr requireTables(FabricService& service, httplib::Response& res) {
  auto s = service.state();
  if (!s->forwarding || !s->routeAnalysis) {
    std::string why = "not ready: forwarding tables have not been read";
    if (!s->topology) why = "not ready: the first crawl has not completed";
    if (!s->routes.lastError.empty()) why += " (last error: " + s->routes.lastError + ")";
    sendError(res, 503, why);
    return nullptr;
  }
  return s;
}

}  // namespace ibfabric::api
