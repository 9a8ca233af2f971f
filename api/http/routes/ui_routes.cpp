// The web view (docs/ui.md): GET /ui/ answers the page, /ui/<file> its style sheet and scripts,
// all embedded in the binary (api/http/ui_assets.h). Read-only and open like every GET. Each
// answer has a strong ETag (a matching If-None-Match gets 304), is revalidated before reuse
// (Cache-Control: no-cache) and carries a Content-Security-Policy that allows this origin only:
// no remote script, style, font, image or connection, no inline script, no framing.
#include <httplib.h>

#include <string>

#include "api/http/http_json.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"
#include "api/http/ui_assets.h"

namespace ibfabric::api {
namespace {

constexpr const char* kCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

void sendAsset(const httplib::Request& req, httplib::Response& res, const UiAsset& a) {
  res.set_header("ETag", std::string(a.etag));
  res.set_header("Cache-Control", "no-cache");
  res.set_header("Content-Security-Policy", kCsp);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  if (req.get_header_value("If-None-Match") == a.etag) {
    res.status = 304;
    return;
  }
  res.status = 200;
  res.set_content(a.body.data(), a.body.size(), std::string(a.contentType).c_str());
}

}  // namespace

void addUiRoutes(Router& r) {
  r.get("/ui",
        [](const httplib::Request&, httplib::Response& res) { res.set_redirect("/ui/", 301); });
  r.get("/ui/", [](const httplib::Request& req, httplib::Response& res) {
    sendAsset(req, res, *findUiAsset("index.html"));
  });
  r.get(R"(/ui/([A-Za-z0-9_.-]+))", [](const httplib::Request& req, httplib::Response& res) {
    const UiAsset* a = findUiAsset(req.matches[1].str());
    if (!a) return sendError(res, 404, "no such resource: " + req.path);
    sendAsset(req, res, *a);
  });
}

}  // namespace ibfabric::api
