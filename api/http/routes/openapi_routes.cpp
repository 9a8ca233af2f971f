// The OpenAPI document of this API (api/http/openapi.json, embedded at build time).
#include <httplib.h>

#include "api/http/rest_server.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"

namespace ibfabric::api {

void addOpenApiRoutes(Router& r) {
  r.get("/api/v1/openapi.json", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(openApiDocument(), "application/json");
  });
}

}  // namespace ibfabric::api
