// POST /api/v1/placement (docs/api.md): the request's JSON form in, the PlacementService's ranked
// answer out (400 invalid, 422 unsatisfiable, 503 not ready). Each answered request is recorded
// in the service's PlacementStats. Handlers run on the server's threads; thread-safe.
#pragma once

#include "api/service/placement_service.h"

namespace httplib {
class Server;
}

namespace ibfabric::api {

/// Registers the route on `server`; `placer` must outlive the server.
void registerPlacementRoutes(httplib::Server& server, PlacementService& placer);

}  // namespace ibfabric::api
