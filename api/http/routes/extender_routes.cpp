// The kube-scheduler extender verbs (docs/scheduler.md): filter and prioritize, answered by
// scheduler_hooks/extender.h from one ServiceState snapshot. Prioritize ranks with the daemon's
// one PlacementService (the engine POST /api/v1/placement uses) and finds a pod's job group among
// the pool's allocations (job id = ibfabric.io/job-group) when the pool is configured. Both
// verbs take bodies up to kSchedulerMaxBodyBytes and need no token (they change nothing).
#include <httplib.h>

#include "api/http/http_json.h"

#include <nlohmann/json.hpp>

#include "api/http/host_layout_cache.h"
#include "api/http/router.h"
#include "api/http/routes/routes.h"
#include "scheduler_hooks/extender.h"

namespace ibfabric::api {
namespace {

using Request = httplib::Request;
using Response = httplib::Response;
namespace sh = scheduler_hooks;

/// What the extender reads besides the request: the state's topology, health and layout, the
/// leaves' uplink load, the pool's job groups and the placement engine.
sh::ExtenderContext extenderContext(const DaemonServices& services, HostLayoutCache& cache) {
  auto s = services.fabric.state();
  sh::ExtenderContext ctx;
  if (s->topology) {
    auto prepared = cache.get(s);
    ctx.topology = s->topology;
    ctx.health = prepared->health;
    ctx.layout = prepared->layout;
    ctx.uplinkUtilization = [s](NodeIndex leaf) { return leafUplinkUtilization(*s, leaf); };
  }
  PoolService* pool = services.pool;
  ctx.jobGroupHosts = [pool](const std::string& group) {
    std::vector<std::string> hosts;
    if (!pool) return hosts;
    if (auto a = pool->pool().get(group))
      for (const auto& grant : a->hosts) hosts.push_back(grant.host);
    return hosts;
  };
  PlacementService& placement = services.placement;
  ctx.placer = [&placement](const routing::PlacementRequest& r) { return placement.place(r); };
  return ctx;
}

}  // namespace

void addExtenderRoutes(Router& r) {
  const DaemonServices services = r.services();
  HostLayoutCache& cache = r.hostLayouts();
  auto verb = [services, &cache](bool filter) {
    return [services, &cache, filter](const Request& req, Response& res) {
      const sh::ExtenderContext ctx = extenderContext(services, cache);
      auto reply =
          filter ? sh::extenderFilter(req.body, ctx) : sh::extenderPrioritize(req.body, ctx);
      res.status = reply.status;
      res.set_content(safeDump(reply.body) + "\n", "application/json");
    };
  };
  r.post("/scheduler/filter", Access::kOpen, verb(true), kSchedulerMaxBodyBytes);
  r.post("/scheduler/prioritize", Access::kOpen, verb(false), kSchedulerMaxBodyBytes);
}

}  // namespace ibfabric::api
