#include "routing/route_query.h"

#include <algorithm>

namespace ibfabric::routing {
namespace {

std::optional<RouteEndpoint> nodeEndpoint(const Node& n) {
  if (n.isSwitch()) {
    const Port* p0 = n.port(PortNum{0});
    if (!p0 || p0->lid.value() == 0) return std::nullopt;
    return RouteEndpoint{{n.index, PortNum{0}}, p0->lid};
  }
  for (const auto& p : n.ports) {
    if (p && p->connected() && p->lid.value() != 0) return RouteEndpoint{{n.index, p->num}, p->lid};
  }
  return std::nullopt;
}

std::string inQuotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

std::vector<RouteEndpoint> resolveEndpoint(const Topology& t, std::string_view spec) {
  if (spec.empty()) throw EndpointError("empty endpoint (give a host, an HCA, a GUID or a LID)");
  auto one = [&](const Node& n) -> std::vector<RouteEndpoint> {
    auto e = nodeEndpoint(n);
    if (!e) throw EndpointError(inQuotes(n.description) + " has no active port with a LID");
    return {*e};
  };
  const bool decimal = spec.find_first_not_of("0123456789") == std::string_view::npos;
  if (decimal) {
    auto lid = parseLid(spec);
    if (!lid) throw EndpointError("LID out of range: " + std::string(spec));
    auto ref = t.findLid(*lid);
    if (!ref) throw EndpointError("no port has LID " + std::string(spec));
    const Node& n = t.node(ref->node);
    return {RouteEndpoint{n.isSwitch() ? PortRef{n.index, PortNum{0}} : *ref, *lid}};
  }
  if (spec.starts_with("0x") || spec.starts_with("0X")) {
    if (auto g = parseGuid(spec)) {
      if (const Node* n = t.findNode(*g)) return one(*n);
      if (auto ref = t.findPort(*g)) {
        const Port* p = t.port(*ref);
        if (p && p->lid.value() != 0) return {RouteEndpoint{*ref, p->lid}};
        throw EndpointError("port " + std::string(spec) + " has no LID");
      }
    }
    if (auto lid = parseLid(spec)) {
      if (auto ref = t.findLid(*lid)) {
        const Node& n = t.node(ref->node);
        return {RouteEndpoint{n.isSwitch() ? PortRef{n.index, PortNum{0}} : *ref, *lid}};
      }
    }
    throw EndpointError("no node, port or LID " + std::string(spec));
  }
  if (const Host* h = t.findHost(spec)) {
    std::vector<RouteEndpoint> out;
    for (NodeIndex i : h->hcas) {
      if (auto e = nodeEndpoint(t.node(i))) out.push_back(*e);
    }
    if (out.empty()) throw EndpointError("host " + inQuotes(spec) + " has no active HCA port");
    return out;
  }
  for (const Node& n : t.nodes()) {
    if (n.description == spec || n.nodeDescription == spec) return one(n);
  }
  throw EndpointError("no host, node description, GUID or LID matches " + inQuotes(spec));
}

std::vector<std::pair<RouteEndpoint, RouteEndpoint>> pairEndpoints(
    const std::vector<RouteEndpoint>& src, const std::vector<RouteEndpoint>& dst) {
  std::vector<std::pair<RouteEndpoint, RouteEndpoint>> out;
  if (src.size() == 1 || dst.size() == 1) {
    for (const auto& s : src) {
      for (const auto& d : dst) out.emplace_back(s, d);
    }
    return out;
  }
  for (std::size_t i = 0; i < std::min(src.size(), dst.size()); ++i)
    out.emplace_back(src[i], dst[i]);
  return out;
}

}  // namespace ibfabric::routing
