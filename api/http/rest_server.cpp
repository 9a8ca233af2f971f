#include "api/http/rest_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "api/http/export_endpoints.h"
#include "api/http/http_json.h"
#include "api/http/json_views.h"
#include "api/http/placement_routes.h"
#include "api/http/pool_routes.h"
#include "api/http/routing_endpoints.h"
#include "api/metrics/collectors.h"
#include "api/metrics/metrics_page.h"
#include "discovery/formats.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using Request = httplib::Request;
using Response = httplib::Response;

/// The state, or a 503 already sent when the first crawl has not completed.
ServiceStatePtr requireTopology(FabricService& service, Response& res) {
  auto s = service.state();
  if (!s->topology) {
    sendError(res, 503,
              "not ready: the first crawl has not completed" +
                  (s->crawl.lastError.empty() ? std::string()
                                              : " (last error: " + s->crawl.lastError + ")"));
    return nullptr;
  }
  return s;
}

std::optional<std::uint64_t> parseUint(const std::string& text) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

std::optional<double> parseSeconds(const std::string& text) {
  try {
    std::size_t used = 0;
    double v = std::stod(text, &used);
    if (used != text.size() || !(v >= 0)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<int> parseLevel(const std::string& text) {
  for (int l = -1; l <= 8; ++l)
    if (levelName(l) == text) return l;
  if (auto v = parseUint(text); v && *v <= 8) return static_cast<int>(*v);
  return std::nullopt;
}

const Node* nodeByGuid(const Topology& t, const std::string& text) {
  auto g = parseGuid(text);
  if (!g) return nullptr;
  if (const Node* n = t.findNode(*g)) return n;
  if (auto ref = t.findPort(*g)) return &t.node(ref->node);
  return nullptr;
}

}  // namespace

RestServer::RestServer(DaemonServices services, RestOptions options)
    : services_(services),
      service_(services.fabric),
      options_(std::move(options)),
      auth_(options_.token),
      server_(makeHttpServer(options_.tlsCert, options_.tlsKey)) {
  const auto threads = options_.threads;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_payload_max_length(options_.maxBodyBytes);
  server_->set_read_timeout(10, 0);
  server_->set_write_timeout(10, 0);
  metrics_ = std::make_unique<MetricsPage>(service_, options_.metrics, liveCollectors(services_));
  routes();
}

RestServer::~RestServer() { stop(); }

int RestServer::bind(const std::string& host, int port) {
  if (port == 0) return server_->bind_to_any_port(host);
  return server_->bind_to_port(host, port) ? port : -1;
}

bool RestServer::run() { return server_->listen_after_bind(); }

void RestServer::stop() {
  if (server_->is_running()) server_->stop();
}

void RestServer::setToken(std::string token) { auth_.setToken(std::move(token)); }

void RestServer::routes() {
  auto& svr = *server_;
  FabricService& service = service_;
  const auto now = [] { return std::chrono::system_clock::now(); };

  svr.set_exception_handler([](const Request&, Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = std::string("internal error: ") + e.what();
    } catch (...) {
    }
    spdlog::error("http: {}", what);
    sendError(res, 500, what);
  });
  svr.set_error_handler([](const Request& req, Response& res) {
    // Handlers that already produced a JSON body keep it.
    if (!res.body.empty()) return;
    if (res.status == 404) return sendError(res, 404, "no such resource: " + req.path);
    if (res.status == 413) return sendError(res, 413, "request body too large");
    sendError(res, res.status, "request failed");
  });
  svr.set_logger([](const Request& req, const Response& res) {
    spdlog::debug("http {} {} -> {}", req.method, req.path, res.status);
  });

  svr.Get("/api/v1/health", [&service, now](const Request&, Response& res) {
    auto s = service.state();
    sendJson(res, healthJson(*s, now()), s->ready() ? 200 : 503);
  });
  svr.Get("/api/v1/openapi.json", [](const Request&, Response& res) {
    res.set_content(openApiDocument(), "application/json");
  });
  svr.Get("/metrics", [this](const Request& req, Response& res) {
    // The page as MetricsPage gives it (api/metrics/metrics_page.h), sent without a copy.
    const bool gzip = req.get_header_value("Accept-Encoding").find("gzip") != std::string::npos;
    auto body = std::make_shared<MetricsBody>(metrics_->body(gzip));
    if (body->gzip()) res.set_header("Content-Encoding", "gzip");
    res.set_content_provider(
        body->size(), "text/plain; version=0.0.4",
        [body](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
          const auto part = body->chunk(offset, std::min(length, std::size_t{1} << 20));
          return sink.write(part.data(), part.size());
        });
  });

  registerRoutingEndpoints(svr, service);

  svr.Get("/api/v1/topology", [&service, now](const Request&, Response& res) {
    if (auto s = requireTopology(service, res)) sendJson(res, topologySummaryJson(*s, now()));
  });
  svr.Get("/api/v1/topology/full", [&service](const Request&, Response& res) {
    if (auto s = requireTopology(service, res)) sendJson(res, toJson(*s->topology));
  });
  svr.Get("/api/v1/topology/ibnetdiscover", [&service](const Request&, Response& res) {
    if (auto s = requireTopology(service, res))
      res.set_content(formatIbnetdiscover(*s->topology), "text/plain");
  });
  svr.Get("/api/v1/topology/dot", [&service](const Request&, Response& res) {
    if (auto s = requireTopology(service, res))
      res.set_content(formatDot(*s->topology), "text/vnd.graphviz");
  });

  svr.Get("/api/v1/nodes", [&service](const Request&, Response& res) {
    auto s = requireTopology(service, res);
    if (!s) return;
    json out = json::array();
    for (const Node& n : s->topology->nodes()) out.push_back(nodeBriefJson(*s->topology, n));
    sendJson(res, {{"nodes", out}});
  });
  svr.Get(R"(/api/v1/nodes/([^/]+))", [&service](const Request& req, Response& res) {
    auto s = requireTopology(service, res);
    if (!s) return;
    const std::string g = req.matches[1];
    if (!parseGuid(g)) return sendError(res, 400, "not a GUID: " + g);
    const Node* n = nodeByGuid(*s->topology, g);
    if (!n) return sendError(res, 404, "no node with GUID " + g);
    sendJson(res, nodeJson(*s->topology, *n));
  });
  svr.Get("/api/v1/switches", [&service](const Request& req, Response& res) {
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
  svr.Get("/api/v1/hosts", [&service](const Request&, Response& res) {
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
  svr.Get(R"(/api/v1/hosts/([^/]+))", [&service](const Request& req, Response& res) {
    auto s = requireTopology(service, res);
    if (!s) return;
    const std::string name = req.matches[1];
    const Host* h = s->topology->findHost(name);
    if (!h) return sendError(res, 404, "no host named " + name);
    sendJson(res, hostJson(*s->topology, *h, *s));
  });

  svr.Get("/api/v1/links", [&service](const Request& req, Response& res) {
    auto s = requireTopology(service, res);
    if (!s) return;
    std::string state = req.has_param("state") ? req.get_param_value("state") : "";
    if (!state.empty() && state != "active" && state != "down" && state != "degraded" &&
        state != "ok" && state != "faulty")
      return sendError(res, 400, "bad state (active|down|degraded|faulty|ok): " + state);
    std::optional<int> level;
    if (req.has_param("level")) {
      level = parseLevel(req.get_param_value("level"));
      if (!level) return sendError(res, 400, "bad level: " + req.get_param_value("level"));
    }
    std::string sort = req.has_param("sort") ? req.get_param_value("sort") : "";
    if (!sort.empty() && sort != "utilization" && sort != "congestion" && sort != "errors")
      return sendError(res, 400, "bad sort (utilization|congestion|errors): " + sort);
    std::optional<std::uint64_t> limit;
    if (req.has_param("limit")) {
      limit = parseUint(req.get_param_value("limit"));
      if (!limit) return sendError(res, 400, "bad limit: " + req.get_param_value("limit"));
    }
    const Topology& t = *s->topology;
    std::vector<json> links;
    for (std::uint32_t i = 0; i < t.links().size(); ++i) {
      json l = linkJson(t, i, *s);
      if (level && l["level"].get<int>() != *level) continue;
      if (state == "active" && l["port_state"] != "active") continue;
      if (state == "down" && l["port_state"] != "down") continue;
      if ((state == "degraded" || state == "ok" || state == "faulty") && l["state"] != state)
        continue;
      links.push_back(std::move(l));
    }
    auto metric = [&](const json& l) {
      double v = 0;
      for (const char* side : {"a", "b"}) {
        const json& r = l[side]["rates"];
        if (r.is_null()) continue;
        if (sort == "utilization") {
          for (const char* k : {"tx_utilization", "rx_utilization"})
            if (r[k].is_number()) v = std::max(v, r[k].get<double>());
        } else if (sort == "congestion" && r["congestion"].is_number()) {
          v = std::max(v, r["congestion"].get<double>());
        }
      }
      if (sort == "errors" && l["health"].is_object()) v = double(l["health"]["reasons"].size());
      return v;
    };
    if (!sort.empty())
      std::stable_sort(links.begin(), links.end(),
                       [&](const json& x, const json& y) { return metric(x) > metric(y); });
    if (limit && links.size() > *limit) links.resize(*limit);
    sendJson(res, {{"count", links.size()}, {"links", links}});
  });

  svr.Get(R"(/api/v1/ports/([^/]+)/([^/]+))", [&service](const Request& req, Response& res) {
    auto s = requireTopology(service, res);
    if (!s) return;
    const std::string g = req.matches[1], p = req.matches[2];
    if (!parseGuid(g)) return sendError(res, 400, "not a GUID: " + g);
    auto portNum = parseUint(p);
    if (!portNum || *portNum > 255) return sendError(res, 400, "not a port number: " + p);
    const Topology& t = *s->topology;
    const Node* n = nodeByGuid(t, g);
    if (!n) return sendError(res, 404, "no node with GUID " + g);
    PortRef ref{n->index, PortNum(static_cast<std::uint8_t>(*portNum))};
    if (!t.port(ref)) return sendError(res, 404, "node " + g + " has no port " + p);
    sendJson(res, portJson(t, ref, *s, service.history()));
  });

  svr.Get("/api/v1/events", [this, &service](const Request& req, Response& res) {
    telemetry::EventQuery q;
    if (req.has_param("since")) {
      auto v = parseUint(req.get_param_value("since"));
      if (!v) return sendError(res, 400, "bad since: " + req.get_param_value("since"));
      q.sinceId = *v;
    }
    if (req.has_param("limit")) {
      auto v = parseUint(req.get_param_value("limit"));
      if (!v || *v == 0 || *v > 10000)
        return sendError(res, 400, "bad limit (1..10000): " + req.get_param_value("limit"));
      q.limit = *v;
    }
    if (req.has_param("type")) {
      std::string types = req.get_param_value("type");
      std::size_t start = 0;
      while (start <= types.size()) {
        std::size_t comma = types.find(',', start);
        std::string one =
            types.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        auto t = telemetry::parseEventType(one);
        if (!t) return sendError(res, 400, "unknown event type: " + one);
        q.types.insert(*t);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    double wait = 0;
    if (req.has_param("wait")) {
      auto v = parseSeconds(req.get_param_value("wait"));
      if (!v) return sendError(res, 400, "bad wait: " + req.get_param_value("wait"));
      wait = std::min(*v, static_cast<double>(options_.maxWait.count()));
    }
    auto& log = service.events();
    auto events = log.query(q);
    // Cap the waiters: beyond maxWaiters, answer at once (the client polls again).
    const bool waiting = wait > 0 && events.empty() && ++waiters_ <= options_.maxWaiters;
    if (wait > 0 && events.empty() && !waiting) {
      --waiters_;
      wait = 0;
      res.set_header("Retry-After", "1");
    }
    // Long-poll in short slices so shutdown is never held up by a waiting client.
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(wait));
    std::uint64_t seen = std::max(q.sinceId, log.lastId());
    while (events.empty() && !service.stopping() && std::chrono::steady_clock::now() < deadline) {
      if (log.waitForNewer(seen, std::chrono::milliseconds(100))) {
        events = log.query(q);
        seen = log.lastId();
      }
    }
    if (waiting) --waiters_;
    json out = json::array();
    for (const auto& e : events) out.push_back(eventJson(e));
    sendJson(res, {{"events", out}, {"last_id", events.empty() ? q.sinceId : events.back().id}});
  });

  svr.Post("/api/v1/discover", [this, &service](const Request& req, Response& res) {
    if (!auth_.authorize(req, res)) return;
    service.requestCrawl();
    sendJson(res, {{"status", "accepted"}}, 202);
  });
  opsRoutes();
  registerPlacementRoutes(svr, services_.placement);
  registerExportEndpoints(svr, services_, options_.maxBodyBytes);
  if (services_.pool) registerPoolRoutes(svr, *services_.pool, auth_.authorizer());
}

}  // namespace ibfabric::api
