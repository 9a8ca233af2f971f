// REST endpoints for routes (docs/api.md): GET /api/v1/routes, /api/v1/routing/balance and
// /api/v1/routing/validation, rendered from one ServiceState's forwarding tables; and the JSON
// views they use (also used by `ibfabric routes --format json`). Thread-safe like RestServer.
#pragma once

#include <nlohmann/json.hpp>

#include "api/service/fabric_service.h"
#include "api/service/routing_state.h"
#include "routing/routes.h"

namespace httplib {
class Server;
}

namespace ibfabric::api {

/// Registers the routing endpoints on `server` (called by RestServer).
void registerRoutingEndpoints(httplib::Server& server, FabricService& service);

/// One route: endpoints, status, hops (each: from/to node, port, link rate; and, with a state,
/// link health and the transmit utilization of the sending port).
nlohmann::json routeJson(const Topology& topology, PortRef src, const routing::Route& route,
                         const ServiceState* state);
/// Counts and the listed problems (at most `limit`), with the table read's failures.
nlohmann::json validationJson(const Topology& topology, const routing::ForwardingTables& tables,
                              const routing::ValidationReport& report, std::size_t limit);
nlohmann::json balanceJson(const Topology& topology, const std::vector<routing::LeafBalance>& b);

}  // namespace ibfabric::api
