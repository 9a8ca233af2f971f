// The fabric as schedulers read it: Slurm topology.conf or topology.yaml, Kubernetes node labels, a
// Kueue Topology and Volcano HyperNodes; with exclude_unhealthy=true without the unhealthy hosts
// (HostLayoutCache's health).
#include <httplib.h>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "api/http/host_layout_cache.h"
#include "api/http/http_json.h"
#include "api/http/request_params.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"
#include "api/http/state_guards.h"
#include "scheduler_hooks/export_k8s.h"
#include "scheduler_hooks/export_slurm.h"
#include "scheduler_hooks/export_slurm_yaml.h"
#include "scheduler_hooks/export_volcano.h"

namespace ibfabric::api {
namespace {

using Request = httplib::Request;
using Response = httplib::Response;
namespace sh = scheduler_hooks;

/// The layout to export: the shared one, or one without unhealthy hosts.
std::shared_ptr<const sh::ExportLayout> layoutFor(HostLayoutCache& cache, const ServiceStatePtr& s,
                                                  bool excludeUnhealthy) {
  auto prepared = cache.get(s);
  if (!excludeUnhealthy) return prepared->layout;
  sh::ExportOptions o;
  o.excludeUnhealthy = true;
  o.health = prepared->health;
  o.k8sNodeNames = cache.k8sNodeNames();
  return std::make_shared<const sh::ExportLayout>(sh::buildExportLayout(s->topology, o));
}

/// One warning line per export that skipped names (the answer lists them and their count).
void warnSkipped(const char* what, const std::vector<std::string>& skipped) {
  if (skipped.empty()) return;
  spdlog::warn("export {}: {} name(s) skipped (not valid in Kubernetes), first: {}", what,
               skipped.size(), skipped.front());
}

/// topology.yaml's options from format=yaml's parameters; false when answered with a 400.
bool slurmYamlOptions(const Request& req, Response& res, sh::SlurmYamlOptions& o) {
  o.prefix = paramOr(req, "name", "ibfabric");
  if (auto problem = sh::slurmYamlPrefixProblem(o.prefix)) {
    sendError(res, 400, *problem);
    return false;
  }
  if (req.has_param("topologies")) {
    if (auto problem = sh::parseSlurmYamlEntries(req.get_param_value("topologies"), o.entries)) {
      sendError(res, 400, *problem);
      return false;
    }
  }
  return true;
}

void slurmTopology(FabricService& service, HostLayoutCache& cache, const Request& req,
                   Response& res) {
  const std::string format = paramOr(req, "format", "conf");
  if (format != "conf" && format != "yaml")
    return sendError(res, 400, "bad format (conf|yaml): " + format);
  const std::string pluginText = paramOr(req, "plugin", "tree");
  auto plugin = sh::parseSlurmPlugin(pluginText);
  if (!plugin) return sendError(res, 400, "bad plugin (tree|block): " + pluginText);
  sh::SlurmYamlOptions yamlOptions;
  if (format == "yaml" && !slurmYamlOptions(req, res, yamlOptions)) return;
  auto exclude = boolParam(req, "exclude_unhealthy", res);
  if (!exclude) return;
  auto s = requireTopology(service, res, CrawlError::kHide);
  if (!s) return;
  auto layout = layoutFor(cache, s, *exclude);
  if (layout->leafSets.empty()) return sendError(res, 409, "no hosts to export");
  if (format == "yaml")
    return res.set_content(sh::slurmTopologyYaml(*layout, yamlOptions), "application/yaml");
  res.set_content(sh::slurmTopologyConf(*layout, *plugin), "text/plain");
}

void k8sLabels(FabricService& service, HostLayoutCache& cache, const Request& req, Response& res) {
  const std::string format = paramOr(req, "format", "kubectl");
  if (format != "kubectl" && format != "json" && format != "yaml")
    return sendError(res, 400, "bad format (kubectl|json|yaml): " + format);
  auto exclude = boolParam(req, "exclude_unhealthy", res);
  if (!exclude) return;
  auto s = requireTopology(service, res, CrawlError::kHide);
  if (!s) return;
  auto layout = layoutFor(cache, s, *exclude);
  warnSkipped("k8s-labels", sh::nodeLabels(*layout).skipped);
  if (format == "json") {
    res.set_content(safeDump(sh::labelsJson(*layout)) + "\n", "application/json");
  } else if (format == "yaml") {
    res.set_content(sh::formatLabelsYaml(*layout), "application/yaml");
  } else {
    res.set_content(sh::formatKubectlLabels(*layout), "text/plain");
  }
}

void kueueTopology(const Request& req, Response& res) {
  const std::string name = paramOr(req, "name", "ibfabric");
  const std::string api = paramOr(req, "api_version", sh::kKueueDefaultApiVersion);
  if (auto problem = sh::kueueTopologyProblem(name, api)) return sendError(res, 400, *problem);
  res.set_content(sh::kueueTopologyYaml(name, api), "application/yaml");
}

}  // namespace

void addExportRoutes(Router& r) {
  FabricService& service = r.fabric();
  HostLayoutCache& cache = r.hostLayouts();
  r.get("/api/v1/export/slurm-topology", [&service, &cache](const Request& req, Response& res) {
    slurmTopology(service, cache, req, res);
  });
  r.get("/api/v1/export/k8s-labels", [&service, &cache](const Request& req, Response& res) {
    k8sLabels(service, cache, req, res);
  });
  r.get("/api/v1/export/kueue-topology", kueueTopology);
  r.get("/api/v1/export/volcano-hypernodes", [&service, &cache](const Request& req, Response& res) {
    auto exclude = boolParam(req, "exclude_unhealthy", res);
    if (!exclude) return;
    auto s = requireTopology(service, res, CrawlError::kHide);
    if (!s) return;
    auto layout = layoutFor(cache, s, *exclude);
    warnSkipped("volcano-hypernodes", sh::volcanoHyperNodes(*layout).skipped);
    res.set_content(sh::volcanoHyperNodesYaml(*layout), "application/yaml");
  });
}

}  // namespace ibfabric::api
