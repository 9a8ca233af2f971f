#include "api/http/export_endpoints.h"

#include <httplib.h>

#include <algorithm>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "api/http/http_json.h"
#include "scheduler_hooks/export_k8s.h"
#include "scheduler_hooks/export_slurm.h"
#include "scheduler_hooks/extender.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using Request = httplib::Request;
using Response = httplib::Response;
namespace sh = scheduler_hooks;

/// Layout and health of one state, computed once.
struct Prepared {
  sh::HostHealthMap health;
  std::shared_ptr<const sh::ExportLayout> layout;  // all hosts (no exclusion)
};

class PreparedCache {
 public:
  std::shared_ptr<const Prepared> get(const ServiceStatePtr& state) {
    std::lock_guard lock(mu_);
    if (prepared_ && state_.lock() == state) return prepared_;
    auto p = std::make_shared<Prepared>();
    p->health = hostHealthOf(*state);
    // A host whose every HCA lost its cable vanishes from the crawl: remember it as down.
    for (const Host& h : state->topology->hosts()) seen_.insert(h.name);
    for (const auto& name : seen_)
      if (!state->topology->findHost(name))
        sh::mergeHostStatus(
            p->health, name,
            {sh::HostHealth::kDown, "no longer seen by the crawls (earlier crawls saw it)"});
    p->layout = std::make_shared<const sh::ExportLayout>(sh::buildExportLayout(state->topology));
    prepared_ = std::move(p);
    state_ = state;
    return prepared_;
  }

 private:
  std::mutex mu_;
  std::weak_ptr<const ServiceState> state_;
  std::shared_ptr<const Prepared> prepared_;
  std::set<std::string> seen_;  // every host any crawl has shown since the daemon started
};

std::optional<bool> boolParam(const Request& req, const char* name, Response& res) {
  if (!req.has_param(name)) return false;
  const std::string v = req.get_param_value(name);
  if (v == "true" || v == "1" || v == "yes" || v.empty()) return true;
  if (v == "false" || v == "0" || v == "no") return false;
  sendError(res, 400, std::string("bad ") + name + " (true|false): " + v);
  return std::nullopt;
}

}  // namespace

sh::HostHealthMap hostHealthOf(const ServiceState& s) {
  sh::HostHealthMap out;
  if (s.topology) out = sh::hostHealthFromTopology(*s.topology);
  if (!s.counters || !s.counters->topology || !s.health) return out;
  const Topology& ct = *s.counters->topology;
  for (const auto& report : *s.health) {
    if (report.state == telemetry::LinkState::kOk || report.link >= ct.links().size()) continue;
    const Link& link = ct.links()[report.link];
    sh::HostHealth h = report.state == telemetry::LinkState::kDown     ? sh::HostHealth::kDown
                       : report.state == telemetry::LinkState::kFaulty ? sh::HostHealth::kFaulty
                                                                       : sh::HostHealth::kDegraded;
    std::string why = report.aDescription + " <-> " + report.bDescription + ": " +
                      std::string(telemetry::toString(report.state));
    if (!report.reasons.empty()) why += " (" + report.reasons.front().text + ")";
    for (PortRef end : {link.a, link.b}) {
      const Node& n = ct.node(end.node);
      if (n.isCa() && n.host) sh::mergeHostStatus(out, ct.hosts()[*n.host].name, {h, why});
    }
  }
  if (s.topology && s.topology != s.counters->topology) {
    for (const Host& h : ct.hosts())
      if (!s.topology->findHost(h.name))
        sh::mergeHostStatus(out, h.name, {sh::HostHealth::kDown, "not seen by the last crawl"});
  }
  return out;
}

std::optional<double> leafUplinkUtilization(const ServiceState& s, NodeIndex leaf) {
  if (!s.topology || leaf >= s.topology->nodes().size()) return std::nullopt;
  const Node& n = s.topology->node(leaf);
  double sum = 0;
  int count = 0;
  for (const auto& p : n.ports) {
    if (!p || p->direction != PortDirection::kUp) continue;
    const auto* r = s.ratesOf(telemetry::PortKey{n.guid, p->num});
    if (!r) continue;
    std::optional<double> u;
    for (const auto& v : {r->txUtilization, r->rxUtilization})
      if (v) u = std::max(u.value_or(0.0), *v);
    if (u) {
      sum += *u;
      ++count;
    }
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

void registerExportEndpoints(httplib::Server& svr, const DaemonServices& services,
                             std::size_t maxBodyBytes) {
  FabricService& service = services.fabric;
  auto cache = std::make_shared<PreparedCache>();
  // The extender's plug-ins: the daemon's one placement engine, the pool's job groups.
  PlacementService& placement = services.placement;
  const routing::Placer placer = [&placement](const routing::PlacementRequest& r) {
    return placement.place(r);
  };
  PoolService* pool = services.pool;
  const auto jobGroupHosts = [pool](const std::string& group) {
    std::vector<std::string> hosts;
    if (!pool) return hosts;
    if (auto a = pool->pool().get(group))
      for (const auto& grant : a->hosts) hosts.push_back(grant.host);
    return hosts;
  };

  // The extender verbs take large bodies; everything else keeps `maxBodyBytes`.
  svr.set_payload_max_length(std::max(maxBodyBytes, kSchedulerMaxBodyBytes));
  svr.set_pre_routing_handler([maxBodyBytes](const Request& req, Response& res) {
    if (req.path.rfind("/scheduler/", 0) == 0 || !req.has_header("Content-Length"))
      return httplib::Server::HandlerResponse::Unhandled;
    const std::string len = req.get_header_value("Content-Length");
    std::size_t n = 0;
    try {
      n = std::stoull(len);
    } catch (const std::exception&) {
      return httplib::Server::HandlerResponse::Unhandled;  // httplib rejects it itself
    }
    if (n <= maxBodyBytes) return httplib::Server::HandlerResponse::Unhandled;
    sendError(res, 413, "request body too large");
    return httplib::Server::HandlerResponse::Handled;
  });

  // The state, or a 503 already sent.
  auto ready = [&service](Response& res) -> ServiceStatePtr {
    auto s = service.state();
    if (!s->topology) {
      sendError(res, 503, "not ready: the first crawl has not completed");
      return nullptr;
    }
    return s;
  };
  // The layout to export: the shared one, or one without unhealthy hosts.
  auto layoutFor = [cache](const ServiceStatePtr& s, bool excludeUnhealthy) {
    auto prepared = cache->get(s);
    if (!excludeUnhealthy) return prepared->layout;
    sh::ExportOptions o;
    o.excludeUnhealthy = true;
    o.health = prepared->health;
    return std::make_shared<const sh::ExportLayout>(sh::buildExportLayout(s->topology, o));
  };

  svr.Get("/api/v1/export/slurm-topology", [ready, layoutFor](const Request& req, Response& res) {
    const std::string pluginText =
        req.has_param("plugin") ? req.get_param_value("plugin") : std::string("tree");
    auto plugin = sh::parseSlurmPlugin(pluginText);
    if (!plugin) return sendError(res, 400, "bad plugin (tree|block): " + pluginText);
    auto exclude = boolParam(req, "exclude_unhealthy", res);
    if (!exclude) return;
    auto s = ready(res);
    if (!s) return;
    auto layout = layoutFor(s, *exclude);
    if (layout->leafSets.empty()) return sendError(res, 409, "no hosts to export");
    res.set_content(sh::slurmTopologyConf(*layout, *plugin), "text/plain");
  });

  svr.Get("/api/v1/export/k8s-labels", [ready, layoutFor](const Request& req, Response& res) {
    const std::string format =
        req.has_param("format") ? req.get_param_value("format") : std::string("kubectl");
    if (format != "kubectl" && format != "json" && format != "yaml")
      return sendError(res, 400, "bad format (kubectl|json|yaml): " + format);
    auto exclude = boolParam(req, "exclude_unhealthy", res);
    if (!exclude) return;
    auto s = ready(res);
    if (!s) return;
    auto layout = layoutFor(s, *exclude);
    if (format == "json") {
      res.set_content(sh::labelsJson(*layout).dump() + "\n", "application/json");
    } else if (format == "yaml") {
      res.set_content(sh::formatLabelsYaml(*layout), "application/yaml");
    } else {
      res.set_content(sh::formatKubectlLabels(*layout), "text/plain");
    }
  });

  svr.Get("/api/v1/export/kueue-topology", [](const Request& req, Response& res) {
    const std::string name =
        req.has_param("name") ? req.get_param_value("name") : std::string("ibfabric");
    const std::string api = req.has_param("api_version") ? req.get_param_value("api_version")
                                                         : std::string("kueue.x-k8s.io/v1beta1");
    if (sh::exportName(name) != name)
      return sendError(res, 400, "bad name (a lower-case DNS label): " + name);
    if (api.rfind("kueue.x-k8s.io/", 0) != 0 || api.find_first_of(" \n\"") != std::string::npos)
      return sendError(res, 400, "bad api_version (kueue.x-k8s.io/<version>): " + api);
    res.set_content(sh::kueueTopologyYaml(name, api), "application/yaml");
  });

  svr.Get("/api/v1/export/volcano-hypernodes",
          [ready, layoutFor](const Request& req, Response& res) {
            auto exclude = boolParam(req, "exclude_unhealthy", res);
            if (!exclude) return;
            auto s = ready(res);
            if (!s) return;
            res.set_content(sh::volcanoHyperNodesYaml(*layoutFor(s, *exclude)), "application/yaml");
          });

  auto extender = [&service, cache, placer, jobGroupHosts](bool filter) {
    return [&service, cache, placer, jobGroupHosts, filter](const Request& req, Response& res) {
      auto s = service.state();
      sh::ExtenderContext ctx;
      if (s->topology) {
        auto prepared = cache->get(s);
        ctx.topology = s->topology;
        ctx.health = prepared->health;
        ctx.layout = prepared->layout;
        ctx.uplinkUtilization = [s](NodeIndex leaf) { return leafUplinkUtilization(*s, leaf); };
      }
      ctx.jobGroupHosts = jobGroupHosts;
      ctx.placer = placer;
      auto reply =
          filter ? sh::extenderFilter(req.body, ctx) : sh::extenderPrioritize(req.body, ctx);
      res.status = reply.status;
      res.set_content(reply.body.dump() + "\n", "application/json");
    };
  };
  svr.Post("/scheduler/filter", extender(true));
  svr.Post("/scheduler/prioritize", extender(false));
}

}  // namespace ibfabric::api
