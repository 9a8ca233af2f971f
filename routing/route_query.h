// Route queries by name: resolving "a host, an HCA, a GUID or a LID" to route endpoints, and
// pairing the two sides rail by rail (HCA i of one host to HCA i of the other), as the REST API
// (/api/v1/routes) and `ibfabric routes` take them. Pure functions; thread-safe.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "discovery/topology.h"
#include "routing/routes.h"

namespace ibfabric::routing {

/// A port that sends or receives: a CA port, or a switch's port 0.
struct RouteEndpoint {
  PortRef port;
  Lid lid;
};

/// Spec that matches nothing, or is malformed; what() is one line naming it.
class EndpointError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Resolves, in order: a decimal LID ("17"); a GUID ("0x..."; node GUID: a CA's first active
/// port with a LID, a switch's port 0; or port GUID); a host name (every HCA, by HCA index); a
/// node description ("dgx0001 mlx5_3", a switch name). Throws EndpointError.
std::vector<RouteEndpoint> resolveEndpoint(const Topology& topology, std::string_view spec);

/// Pairs sources with destinations: one side single -> it with each of the other; both several
/// (two hosts) -> rail by rail, index by index up to the shorter side.
std::vector<std::pair<RouteEndpoint, RouteEndpoint>> pairEndpoints(
    const std::vector<RouteEndpoint>& src, const std::vector<RouteEndpoint>& dst);

}  // namespace ibfabric::routing
