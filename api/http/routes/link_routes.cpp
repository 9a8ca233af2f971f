// Links — filtered by state, level, node, host and rail, paged by cursor in the order of their
// `a` ends, or sorted by utilization, congestion or errors — and one port with its counters,
// rates and history. A page binary-searches the snapshot's link order (api/http/list_index.h) and
// renders only its own links; the unfiltered list is rendered once per state
// (api/http/document_cache.h).
#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "api/http/document_cache.h"
#include "api/http/http_json.h"
#include "api/http/json_views.h"
#include "api/http/list_cursor.h"
#include "api/http/list_index.h"
#include "api/http/request_params.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"
#include "api/http/state_guards.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using Request = httplib::Request;
using Response = httplib::Response;

constexpr const char* kLinksList = "/api/v1/links";

struct LinkQuery {
  /// active, init, down (LinkActivity) or ok, degraded, faulty (health); "": any
  std::string state;
  std::optional<int> level;
  std::string sort;  ///< utilization, congestion, errors; "": key order
  const Node* node = nullptr;
  std::optional<std::uint32_t> host;
  std::optional<int> rail;
  PageRequest page;

  bool filtered() const { return !state.empty() || level || node || host || rail; }
};

/// The request's query; nullopt with the 400/404 sent.
std::optional<LinkQuery> linkQuery(const Request& req, Response& res, const Topology& t) {
  LinkQuery q;
  if (!choiceParam(req, "state", {"active", "init", "down", "degraded", "faulty", "ok"}, q.state,
                   res) ||
      !levelParam(req, q.level, res) ||
      !choiceParam(req, "sort", {"utilization", "congestion", "errors"}, q.sort, res) ||
      !nodeParam(req, t, q.node, res) || !hostParam(req, t, q.host, res) ||
      !railParam(req, t, q.rail, res))
    return std::nullopt;
  auto page = pageRequest(req, res, kLinksList);
  if (!page) return std::nullopt;
  q.page = std::move(*page);
  if (!q.sort.empty() && q.page.after) {
    sendError(res, 400, "bad cursor: a sorted list is a ranking of one snapshot, not paged");
    return std::nullopt;
  }
  return q;
}

bool keepLink(const LinkQuery& q, const Topology& t, const Link& l, const LinkFacts& f) {
  if (q.level && f.level != *q.level) return false;
  if ((q.state == "active" || q.state == "init" || q.state == "down") &&
      toString(f.activity) != q.state)
    return false;
  if ((q.state == "degraded" || q.state == "ok" || q.state == "faulty") && f.state != q.state)
    return false;
  const Node& a = t.node(l.a.node);
  const Node& b = t.node(l.b.node);
  if (q.node && a.index != q.node->index && b.index != q.node->index) return false;
  if (q.host && a.host != q.host && b.host != q.host) return false;
  if (q.rail && a.rail != *q.rail && b.rail != *q.rail) return false;
  return true;
}

/// The value a link is sorted by (the larger first): the busiest end's utilization or
/// congestion, or the number of health reasons.
double sortMetric(const ServiceState& s, const Link& l, const LinkFacts& f,
                  const std::string& sort) {
  if (sort == "errors") return f.health ? double(f.health->reasons.size()) : 0.0;
  const Topology& t = *s.topology;
  double v = 0;
  for (const PortRef& end : {l.a, l.b}) {
    const auto r = s.ratesOf({t.node(end.node).guid, end.port});
    if (!r) continue;
    if (sort == "utilization") {
      for (const auto& u : {r->txUtilization, r->rxUtilization})
        if (u) v = std::max(v, *u);
    } else if (r->congestion) {
      v = std::max(v, *r->congestion);
    }
  }
  return v;
}

/// Every link, in key order: what an unfiltered GET /links sends, rendered into `w`.
void renderAllLinks(const ServiceState& s, const ListIndex& index, GzipWriter& w) {
  const Topology& t = *s.topology;
  const auto& order = index.order->links;
  w.append("{\"count\":" + std::to_string(order.size()) + ",\"links\":[");
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i) w.append(",");
    w.append(safeDump(linkJson(t, order[i], s, index.healthOfLink(s, order[i]))));
  }
  w.append("]}\n");
}

/// Sorted: every matching link ranked, the first `limit` sent (no cursor).
void sortedLinks(const ServiceState& s, const ListIndex& index, const LinkQuery& q, Response& res) {
  const Topology& t = *s.topology;
  std::vector<std::pair<double, std::uint32_t>> ranked;
  for (std::uint32_t li : index.order->links) {
    const LinkFacts f = index.linkFacts(s, li);
    if (keepLink(q, t, t.links()[li], f))
      ranked.emplace_back(sortMetric(s, t.links()[li], f, q.sort), li);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  if (q.page.limit && ranked.size() > *q.page.limit) ranked.resize(*q.page.limit);
  json out = json::array();
  for (const auto& [metric, li] : ranked)
    out.push_back(linkJson(t, li, s, index.healthOfLink(s, li)));
  sendPage(res, "links", std::move(out), true, false, kLinksList, nullptr);
}

void links(Router& r, const Request& req, Response& res) {
  auto s = requireTopology(r.fabric(), res);
  if (!s) return;
  const Topology& t = *s->topology;
  auto q = linkQuery(req, res, t);
  if (!q) return;
  const ListIndex index = r.listIndex().get(*s);
  if (!q->sort.empty()) return sortedLinks(*s, index, *q, res);
  if (!q->filtered() && !q->page.limit && !q->page.after) {
    auto doc =
        r.documents()
            .slot(DocumentCache::Kind::kLinks)
            .get(s, "application/json", [&](GzipWriter& w) { renderAllLinks(*s, index, w); });
    return sendDocument(req, res, std::move(doc));
  }
  const auto& order = index.order->links;
  std::size_t begin = 0;
  if (q->page.after) {
    auto after = linkKeyFromJson(*q->page.after);
    if (!after) return sendBadCursorKey(res);
    begin =
        std::upper_bound(order.begin(), order.end(), *after,
                         [&](const LinkKey& k, std::uint32_t li) { return k < linkKey(t, li); }) -
        order.begin();
  }
  const PageSlice page = slicePage(begin, order.size(), q->page.limit, [&](std::size_t i) {
    const LinkFacts f = index.linkFacts(*s, order[i]);
    return keepLink(*q, t, t.links()[order[i]], f);
  });
  json out = json::array();
  for (std::size_t i : page.positions)
    out.push_back(linkJson(t, order[i], *s, index.healthOfLink(*s, order[i])));
  const json last =
      page.positions.empty() ? json() : toJson(linkKey(t, order[page.positions.back()]));
  sendPage(res, "links", std::move(out), true, page.more, kLinksList, last);
}

}  // namespace

void addLinkRoutes(Router& r) {
  FabricService& service = r.fabric();
  r.get("/api/v1/links", [&r](const Request& req, Response& res) { links(r, req, res); });
  r.get(R"(/api/v1/ports/([^/]+)/([^/]+))", [&service](const Request& req, Response& res) {
    auto s = requireTopology(service, res);
    if (!s) return;
    auto p = portFromPath(*s->topology, req, res);
    if (!p) return;
    sendJson(res, portJson(*s->topology, p->ref, *s, service.history()));
  });
}

}  // namespace ibfabric::api
