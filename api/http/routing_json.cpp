#include "api/http/routing_json.h"

#include <algorithm>

#include "api/http/json_views.h"
#include "api/http/lft_status.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;

json endJson(const Topology& t, PortRef ref) {
  const Node& n = t.node(ref.node);
  json j = {{"guid", toString(n.guid)},
            {"description", n.description},
            {"type", n.isSwitch() ? "switch" : "ca"},
            {"port", ref.port.value()}};
  if (n.host) j["host"] = t.hosts()[*n.host].name;
  if (const Port* p = t.port(ref); p && p->lid.value() != 0) j["lid"] = p->lid.value();
  return j;
}

json endpointJson(const Topology& t, PortRef ref, Lid lid) {
  json j = endJson(t, ref);
  j["lid"] = lid.value();
  return j;
}

}  // namespace

json routeJson(const Topology& t, PortRef src, const routing::Route& r, const ServiceState* state) {
  json hops = json::array();
  for (const auto& h : r.hops) {
    json jh = {{"from", endJson(t, h.from)}, {"to", endJson(t, h.to)}, {"link", h.link}};
    if (h.link < t.links().size()) {
      const Link& l = t.links()[h.link];
      if (l.rate) jh["rate"] = l.rate->toString();
    }
    if (state) {
      const Node& from = t.node(h.from.node);
      if (const auto* health = findHealth(*state, from.guid, h.from.port)) {
        jh["health"] = std::string(telemetry::toString(health->state));
      }
      if (const auto rates = state->ratesOf({from.guid, h.from.port})) {
        if (rates->txUtilization) jh["utilization"] = *rates->txUtilization;
        if (rates->congestion) jh["congestion"] = *rates->congestion;
      }
    }
    hops.push_back(std::move(jh));
  }
  json j = {{"src", {{"lid", r.src.value()}}},
            {"status", std::string(routing::toString(r.status))},
            {"switch_hops", r.switchHops()},
            {"hops", hops}};
  if (t.port(src)) j["src"] = endpointJson(t, src, r.src);
  j["dst"] = {{"lid", r.dst.value()}};
  if (auto ref = t.findLid(r.dst)) j["dst"] = endpointJson(t, *ref, r.dst);
  if (!r.ok()) j["problem"] = r.problem;
  return j;
}

json validationJson(const Topology& t, const routing::ForwardingTables& tables,
                    const routing::ValidationReport& v, std::size_t limit) {
  json problems = json::array();
  for (const auto& p : v.problems) {
    if (problems.size() >= limit) break;
    json jp = {{"kind", std::string(routing::toString(p.status))},
               {"src_lid", p.src.value()},
               {"dst_lid", p.dst.value()},
               {"detail", p.detail}};
    if (auto s = t.findLid(p.src)) jp["src"] = t.node(s->node).description;
    if (auto d = t.findLid(p.dst)) jp["dst"] = t.node(d->node).description;
    problems.push_back(std::move(jp));
  }
  return {{"source", tables.source()},
          {"switches_with_tables", tables.switchesWithTables()},
          {"switches", t.switchCount()},
          {"table_failures", tables.failures},
          {"table_status", tableStatusJson(t, tables, std::nullopt, true)},
          {"pairs_checked", v.pairsChecked},
          {"pairs_ok", v.pairsOk},
          {"loops", v.loops},
          {"black_holes", v.blackHoles},
          {"missing_tables", v.missingTables},
          {"problems_listed", problems.size()},
          {"problems", problems}};
}

json balanceJson(const Topology& t, const std::vector<routing::LeafBalance>& balance) {
  json leaves = json::array();
  double worst = 1.0;
  for (const auto& b : balance) {
    const Node& leaf = t.node(b.leaf);
    json ports = json::array();
    for (const auto& [port, count] : b.destinationsPerUpPort) {
      json jp = {{"port", port.value()}, {"destinations", count}};
      if (const Port* p = leaf.port(port); p && p->remote) {
        jp["remote"] = t.node(p->remote->node).description;
        jp["remote_port"] = p->remote->port.value();
      }
      ports.push_back(std::move(jp));
    }
    worst = std::max(worst, b.imbalance);
    json jl = {{"leaf", leaf.description},
               {"guid", toString(leaf.guid)},
               {"imbalance", b.imbalance},
               {"up_ports", ports}};
    if (leaf.rail >= 0) jl["rail"] = leaf.rail;
    leaves.push_back(std::move(jl));
  }
  return {{"max_imbalance", worst}, {"leaves", leaves}};
}

}  // namespace ibfabric::api
