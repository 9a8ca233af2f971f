// The JSON views of routes: one traced route, the validation of the forwarding tables and the
// up-port balance of the leaves, as GET /api/v1/routes, /api/v1/routing/validation and
// /api/v1/routing/balance answer them (api/http/routes/routing_routes.cpp) and
// `ibfabric routes --format json` prints them. Pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "api/service/fabric_service.h"
#include "api/service/routing_state.h"
#include "routing/routes.h"

namespace ibfabric::api {

/// One route: endpoints, status, hops (each: from/to node, port, link rate; and, with a state,
/// link health and the transmit utilization of the sending port).
nlohmann::json routeJson(const Topology& topology, PortRef src, const routing::Route& route,
                         const ServiceState* state);
/// Counts and the listed problems (at most `limit`), with the table read's failures.
nlohmann::json validationJson(const Topology& topology, const routing::ForwardingTables& tables,
                              const routing::ValidationReport& report, std::size_t limit);
nlohmann::json balanceJson(const Topology& topology, const std::vector<routing::LeafBalance>& b);

}  // namespace ibfabric::api
