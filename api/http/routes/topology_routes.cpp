// The fabric as crawled: summary and full topology (JSON, ibnetdiscover text, Graphviz), the
// comparison with the expected topology, nodes, switches and hosts. The full documents and the
// unfiltered node list are rendered once per crawl (api/http/document_cache.h); the lists page by
// cursor and filter (api/http/list_cursor.h, api/http/list_index.h).
#include <httplib.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "api/http/document_cache.h"
#include "api/http/ha_json.h"
#include "api/http/http_json.h"
#include "api/http/json_views.h"
#include "api/http/list_cursor.h"
#include "api/http/list_index.h"
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

/// GET `path`: the document `render` writes from the topology, rendered once per crawl.
void addTopologyDocument(Router& r, const char* path, DocumentCache::Kind kind,
                         const char* contentType,
                         std::function<void(const Topology&, GzipWriter&)> render) {
  r.get(path, [&r, kind, contentType, render = std::move(render)](const Request& req,
                                                                  Response& res) {
    auto s = requireTopology(r.fabric(), res);
    if (!s) return;
    const TopologyPtr& t = s->topology;
    auto doc = r.documents().slot(kind).get(t, contentType, [&](GzipWriter& w) { render(*t, w); });
    sendDocument(req, res, std::move(doc));
  });
}

void addTopologyViews(Router& r) {
  FabricService& service = r.fabric();
  const auto now = [] { return std::chrono::system_clock::now(); };
  r.get("/api/v1/topology", [&service, now](const Request&, Response& res) {
    if (auto s = requireTopology(service, res)) sendJson(res, topologySummaryJson(*s, now()));
  });
  using Kind = DocumentCache::Kind;
  addTopologyDocument(r, "/api/v1/topology/full", Kind::kTopologyFull, "application/json",
                      [](const Topology& t, GzipWriter& w) {
                        // A node or a cable at a time: never the whole tree (~10x the text).
                        writeJson(t, [&w](std::string_view piece) { w.append(piece); });
                        w.append("\n");
                      });
  addTopologyDocument(r, "/api/v1/topology/ibnetdiscover", Kind::kIbnetdiscover, "text/plain",
                      [](const Topology& t, GzipWriter& w) { w.append(formatIbnetdiscover(t)); });
  addTopologyDocument(r, "/api/v1/topology/dot", Kind::kDot, "text/vnd.graphviz",
                      [](const Topology& t, GzipWriter& w) { w.append(formatDot(t)); });
  r.get("/api/v1/topology/compare", [&service](const Request&, Response& res) {
    auto s = requireTopology(service, res, CrawlError::kHide);
    if (!s) return;
    if (!s->comparison)
      return sendError(res, 404,
                       "no expected topology configured (expected_topology in the config)");
    sendJson(res, comparisonJson(*s->comparison), 200);
  });
}

constexpr const char* kNodesList = "/api/v1/nodes";
constexpr const char* kSwitchesList = "/api/v1/switches";
constexpr const char* kHostsList = "/api/v1/hosts";

/// The first node after the cursor's key (0 without one); nullopt with the 400 sent.
std::optional<std::size_t> nodesFrom(const Topology& t, const PageRequest& page, Response& res) {
  if (!page.after) return 0;
  auto after = nodeKeyFromJson(*page.after);
  if (!after) {
    sendBadCursorKey(res);
    return std::nullopt;
  }
  // Topology::nodes() is in NodeKey order (switches, CAs, routers; each by GUID).
  const auto& nodes = t.nodes();
  return std::upper_bound(nodes.begin(), nodes.end(), *after,
                          [](const NodeKey& k, const Node& n) { return k < nodeKey(n); }) -
         nodes.begin();
}

/// A page of nodes that `keep` accepts, as {<field>: [brief], next_cursor?}.
template <typename Keep>
void sendNodePage(const ServiceState& s, const PageRequest& page, const char* field,
                  const char* list, Keep&& keep, Response& res) {
  const Topology& t = *s.topology;
  auto begin = nodesFrom(t, page, res);
  if (!begin) return;
  const PageSlice p = slicePage(*begin, t.nodes().size(), page.limit,
                                [&](std::size_t i) { return keep(t.nodes()[i]); });
  json out = json::array();
  for (std::size_t i : p.positions) out.push_back(nodeBriefJson(t, t.nodes()[i], s));
  const json last = p.positions.empty() ? json() : toJson(nodeKey(t.nodes()[p.positions.back()]));
  sendPage(res, field, std::move(out), false, p.more, list, last);
}

void nodes(Router& r, const Request& req, Response& res) {
  auto s = requireTopology(r.fabric(), res);
  if (!s) return;
  const Topology& t = *s->topology;
  std::string type;
  std::optional<int> level, rail;
  std::optional<std::uint32_t> host;
  if (!choiceParam(req, "type", {"switch", "ca", "router"}, type, res) ||
      !levelParam(req, level, res) || !hostParam(req, t, host, res) ||
      !railParam(req, t, rail, res))
    return;
  auto page = pageRequest(req, res, kNodesList);
  if (!page) return;
  const bool filtered = !type.empty() || level || host || rail;
  if (!filtered && !page->limit && !page->after) {
    auto doc = r.documents()
                   .slot(DocumentCache::Kind::kNodes)
                   .get(
                       s->topology, "application/json",
                       [&](GzipWriter& w) {
                         w.append("{\"nodes\":[");
                         for (const Node& n : t.nodes()) {
                           if (n.index) w.append(",");
                           w.append(safeDump(nodeBriefJson(t, n, *s)));
                         }
                         w.append("]}\n");
                       },
                       subnetTagJson(*s).dump());  // every node names the subnet
    return sendDocument(req, res, std::move(doc));
  }
  sendNodePage(
      *s, *page, "nodes", kNodesList,
      [&](const Node& n) {
        return (type.empty() || nodeTypeName(n.type) == type) && (!level || n.level == *level) &&
               (!host || n.host == host) && (!rail || n.rail == *rail);
      },
      res);
}

void switches(Router& r, const Request& req, Response& res) {
  auto s = requireTopology(r.fabric(), res);
  if (!s) return;
  const Topology& t = *s->topology;
  std::optional<int> level, rail;
  if (!levelParam(req, level, res) || !railParam(req, t, rail, res)) return;
  auto page = pageRequest(req, res, kSwitchesList);
  if (!page) return;
  sendNodePage(
      *s, *page, "switches", kSwitchesList,
      [&](const Node& n) {
        return n.isSwitch() && (!level || n.level == *level) && (!rail || n.rail == *rail);
      },
      res);
}

void addNodeViews(Router& r) {
  r.get("/api/v1/nodes", [&r](const Request& req, Response& res) { nodes(r, req, res); });
  FabricService& service = r.fabric();
  r.get(R"(/api/v1/nodes/([^/]+))", [&service](const Request& req, Response& res) {
    auto s = requireTopology(service, res);
    if (!s) return;
    const std::string g = req.matches[1];
    if (!parseGuid(g)) return sendError(res, 400, "not a GUID: " + g);
    const Node* n = nodeByGuid(*s->topology, g);
    if (!n) return sendError(res, 404, "no node with GUID " + g);
    sendJson(res, nodeJson(*s->topology, *n, *s));
  });
  r.get("/api/v1/switches", [&r](const Request& req, Response& res) { switches(r, req, res); });
}

/// A host's health as the scheduler exports see it ("ok" when it has no entry).
std::string_view hostHealth(const HostLayout& layout, const std::string& name) {
  auto it = layout.health.find(name);
  return it == layout.health.end() ? "ok" : scheduler_hooks::toString(it->second.health);
}

void hosts(Router& r, const Request& req, Response& res) {
  auto s = requireTopology(r.fabric(), res);
  if (!s) return;
  const Topology& t = *s->topology;
  std::string health;
  std::optional<int> rail;
  if (!choiceParam(req, "health", {"ok", "degraded", "faulty", "down"}, health, res) ||
      !railParam(req, t, rail, res))
    return;
  auto page = pageRequest(req, res, kHostsList);
  if (!page) return;
  const auto& order = r.listIndex().get(*s).order->hosts;
  std::size_t begin = 0;
  if (page->after) {
    if (!page->after->is_array() || page->after->size() != 1 || !(*page->after)[0].is_string())
      return sendBadCursorKey(res);
    const std::string after = (*page->after)[0];
    begin = std::upper_bound(
                order.begin(), order.end(), after,
                [&](const std::string& k, std::uint32_t h) { return k < t.hosts()[h].name; }) -
            order.begin();
  }
  std::shared_ptr<const HostLayout> layout;
  if (!health.empty()) layout = r.hostLayouts().get(s);
  const auto onRail = [&](const Host& h) {
    return std::any_of(h.hcas.begin(), h.hcas.end(),
                       [&](NodeIndex i) { return t.node(i).rail == *rail; });
  };
  const PageSlice p = slicePage(begin, order.size(), page->limit, [&](std::size_t i) {
    const Host& h = t.hosts()[order[i]];
    return (!layout || hostHealth(*layout, h.name) == health) && (!rail || onRail(h));
  });
  json out = json::array();
  for (std::size_t i : p.positions) out.push_back(hostBriefJson(t, t.hosts()[order[i]], *s));
  const json last =
      p.positions.empty() ? json() : json::array({t.hosts()[order[p.positions.back()]].name});
  sendPage(res, "hosts", std::move(out), false, p.more, kHostsList, last);
}

void addHostViews(Router& r) {
  r.get("/api/v1/hosts", [&r](const Request& req, Response& res) { hosts(r, req, res); });
  r.get(R"(/api/v1/hosts/([^/]+))", [&r](const Request& req, Response& res) {
    auto s = requireTopology(r.fabric(), res);
    if (!s) return;
    const std::string name = req.matches[1];
    const Host* h = s->topology->findHost(name);
    if (!h) return sendError(res, 404, "no host named " + name);
    json body = hostJson(*s->topology, *h, *s);
    // Its health as the exports and the extender judge it (a host with some HCAs down or
    // missing is degraded, all of them: down), with the reasons.
    const auto layout = r.hostLayouts().get(s);
    const auto it = layout->health.find(name);
    body["health"] =
        it == layout->health.end()
            ? json{{"status", "ok"}, {"reason", ""}}
            : json{{"status", std::string(scheduler_hooks::toString(it->second.health))},
                   {"reason", it->second.reason}};
    sendJson(res, body);
  });
}

}  // namespace

void addTopologyRoutes(Router& r) {
  addTopologyViews(r);
  addNodeViews(r);
  addHostViews(r);
}

}  // namespace ibfabric::api
