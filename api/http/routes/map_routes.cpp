// The fabric map of the web view: a compact summary of the whole fabric (api/http/fabric_map.h),
// rendered once per state and served gzip-compressed (api/http/document_cache.h).
#include <httplib.h>

#include "api/http/document_cache.h"
#include "api/http/fabric_map.h"
#include "api/http/http_json.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"
#include "api/http/state_guards.h"

namespace ibfabric::api {

void addMapRoutes(Router& r) {
  r.get("/api/v1/fabric/map", [&r](const httplib::Request& req, httplib::Response& res) {
    auto s = requireTopology(r.fabric(), res);
    if (!s) return;
    auto doc = r.documents()
                   .slot(DocumentCache::Kind::kFabricMap)
                   .get(s, "application/json", [&](GzipWriter& w) {
                     const auto hosts = r.hostLayouts().get(s);
                     w.append(safeDump(fabricMapJson(*s, *hosts, r.listIndex().get(*s),
                                                     r.services().pool != nullptr)));
                     w.append("\n");
                   });
    // The newest event id when this answer was sent: where the page's event feed starts.
    res.set_header("X-Last-Event-Id", std::to_string(r.fabric().events().lastId()));
    res.set_header("Cache-Control", "no-store");
    sendDocument(req, res, std::move(doc));
  });
}

}  // namespace ibfabric::api
