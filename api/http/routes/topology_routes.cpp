// The fabric as crawled: summary and full topology (JSON, ibnetdiscover text, Graphviz), the
// comparison with the expected topology, nodes, switches and hosts.
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "api/http/http_json.h"
#include "api/http/json_views.h"
#include "api/http/request_params.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"
#include "api/http/state_guards.h"
#include "discovery/formats.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using Request = httplib::Request;
using Response = httplib::Response;

/// The last crawl against the configured expected topology.
json comparisonJson(const TopologyComparison& c) {
  json body = compareToJson(c.result);
  json nodes = json::array();
  for (const auto& n : c.nodes)
    nodes.push_back({{"guid", n.guid.empty() ? json() : json(n.guid)},
                     {"node", n.name},
                     {"type", n.type},
                     {"present", n.present}});
  body["expected_nodes"] = nodes;
  body["missing_nodes"] = {
      {"switch", c.missingSwitches}, {"ca", c.missingCas}, {"router", c.missingRouters}};
  body["compared_at"] = std::chrono::duration<double>(c.at.time_since_epoch()).count();
  return body;
}

void addTopologyViews(Router& r) {
  FabricService& service = r.fabric();
  const auto now = [] { return std::chrono::system_clock::now(); };
  r.get("/api/v1/topology", [&service, now](const Request&, Response& res) {
    if (auto s = requireTopology(service, res)) sendJson(res, topologySummaryJson(*s, now()));
  });
  r.get("/api/v1/topology/full", [&service](const Request&, Response& res) {
    if (auto s = requireTopology(service, res)) sendJson(res, toJson(*s->topology));
  });
  r.get("/api/v1/topology/ibnetdiscover", [&service](const Request&, Response& res) {
    if (auto s = requireTopology(service, res))
      res.set_content(formatIbnetdiscover(*s->topology), "text/plain");
  });
  r.get("/api/v1/topology/dot", [&service](const Request&, Response& res) {
    if (auto s = requireTopology(service, res))
      res.set_content(formatDot(*s->topology), "text/vnd.graphviz");
  });
  r.get("/api/v1/topology/compare", [&service](const Request&, Response& res) {
    auto s = requireTopology(service, res, CrawlError::kHide);
    if (!s) return;
    if (!s->comparison)
      return sendError(res, 404,
                       "no expected topology configured (expected_topology in the config)");
    sendJson(res, comparisonJson(*s->comparison), 200);
  });
}

void addNodeViews(Router& r) {
  FabricService& service = r.fabric();
  r.get("/api/v1/nodes", [&service](const Request&, Response& res) {
    auto s = requireTopology(service, res);
    if (!s) return;
    json out = json::array();
    for (const Node& n : s->topology->nodes()) out.push_back(nodeBriefJson(*s->topology, n));
    sendJson(res, {{"nodes", out}});
  });
  r.get(R"(/api/v1/nodes/([^/]+))", [&service](const Request& req, Response& res) {
    auto s = requireTopology(service, res);
    if (!s) return;
    const std::string g = req.matches[1];
    if (!parseGuid(g)) return sendError(res, 400, "not a GUID: " + g);
    const Node* n = nodeByGuid(*s->topology, g);
    if (!n) return sendError(res, 404, "no node with GUID " + g);
    sendJson(res, nodeJson(*s->topology, *n));
  });
  r.get("/api/v1/switches", [&service](const Request& req, Response& res) {
    auto s = requireTopology(service, res);
    if (!s) return;
    std::optional<int> level;
    if (req.has_param("level")) {
      level = parseLevel(req.get_param_value("level"));
      if (!level) return sendError(res, 400, "bad level: " + req.get_param_value("level"));
    }
    json out = json::array();
    for (const Node& n : s->topology->nodes())
      if (n.isSwitch() && (!level || n.level == *level))
        out.push_back(nodeBriefJson(*s->topology, n));
    sendJson(res, {{"switches", out}});
  });
}

void addHostViews(Router& r) {
  FabricService& service = r.fabric();
  r.get("/api/v1/hosts", [&service](const Request&, Response& res) {
    auto s = requireTopology(service, res);
    if (!s) return;
    json out = json::array();
    for (const Host& h : s->topology->hosts()) {
      json hcas = json::array();
      for (NodeIndex i : h.hcas) hcas.push_back(toString(s->topology->node(i).guid));
      out.push_back({{"name", h.name}, {"hcas", hcas}});
    }
    sendJson(res, {{"hosts", out}});
  });
  r.get(R"(/api/v1/hosts/([^/]+))", [&service](const Request& req, Response& res) {
    auto s = requireTopology(service, res);
    if (!s) return;
    const std::string name = req.matches[1];
    const Host* h = s->topology->findHost(name);
    if (!h) return sendError(res, 404, "no host named " + name);
    sendJson(res, hostJson(*s->topology, *h, *s));
  });
}

}  // namespace

void addTopologyRoutes(Router& r) {
  addTopologyViews(r);
  addNodeViews(r);
  addHostViews(r);
}

}  // namespace ibfabric::api
