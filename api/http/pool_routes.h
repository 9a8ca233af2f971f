// The GPU pool's REST face under /api/v1/pool (docs/pool.md, api/http/openapi.json): usage,
// hosts (GET, PUT with the token), allocations (GET, POST and DELETE with the token). Pool and
// inventory errors become JSON answers with their HTTP status. Thread-safe like RestServer.
#pragma once

#include "api/http/auth.h"
#include "api/service/pool_service.h"

namespace httplib {
class Server;
}

namespace ibfabric::api {

/// Registers the routes on `server`; `service` must outlive the server.
void registerPoolRoutes(httplib::Server& server, PoolService& service, const Authorizer& authorize);

}  // namespace ibfabric::api
