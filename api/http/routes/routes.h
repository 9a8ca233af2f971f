// The daemon's HTTP routes, one function per resource, each registering its paths on a Router
// (api/http/router.h) — the Router applies the body limit and, for Access::kToken routes, the
// bearer-token check before the handler. RestServer calls them all (api/http/rest_server.cpp);
// the paths, parameters and answers are documented in docs/api.md and api/http/openapi.json.
//
// Each handler reads one ServiceState snapshot (or the service it names) and renders from it;
// the handlers run on the server's threads and are thread-safe.
#pragma once

#include <cstddef>

namespace ibfabric::api {

class Router;

/// The kube-scheduler extender verbs take bodies up to this size (kube-scheduler sends whole Node
/// objects unless nodeCacheCapable is set); every other route keeps RestOptions::maxBodyBytes.
inline constexpr std::size_t kSchedulerMaxBodyBytes = 32 * 1024 * 1024;

/// GET /api/v1/health, /api/v1/health/live, /api/v1/health/ready (health_routes.cpp).
void addHealthRoutes(Router& r);
/// GET /api/v1/topology[/full|/ibnetdiscover|/dot|/compare], /api/v1/nodes[/{guid}],
/// /api/v1/switches, /api/v1/hosts[/{name}] (topology_routes.cpp).
void addTopologyRoutes(Router& r);
/// GET /api/v1/links, /api/v1/ports/{guid}/{port} (link_routes.cpp).
void addLinkRoutes(Router& r);
/// GET /api/v1/events, with long-polling (event_routes.cpp).
void addEventRoutes(Router& r);
/// POST /api/v1/discover, /api/v1/ports/{guid}/{port}/clear-counters (ops_routes.cpp).
void addOpsRoutes(Router& r);
/// GET /api/v1/routes, /api/v1/routing/validation, /api/v1/routing/balance (routing_routes.cpp).
void addRoutingRoutes(Router& r);
/// GET /api/v1/routing/tables (routing_table_routes.cpp).
void addRoutingTableRoutes(Router& r);
/// GET /api/v1/export/{slurm-topology,k8s-labels,kueue-topology,volcano-hypernodes}
/// (export_routes.cpp).
void addExportRoutes(Router& r);
/// POST /scheduler/filter, /scheduler/prioritize (extender_routes.cpp).
void addExtenderRoutes(Router& r);
/// POST /api/v1/placement (placement_routes.cpp).
void addPlacementRoutes(Router& r);
/// /api/v1/pool..., when the pool is configured (pool_routes.cpp).
void addPoolRoutes(Router& r);
/// POST /api/v1/whatif: what a drain of switches and cables would break (whatif_routes.cpp).
void addWhatIfRoutes(Router& r);
/// /api/v1/jobs..., GET /api/v1/links/{guid}/{port}/jobs: jobs and the links they load
/// (job_routes.cpp).
void addJobRoutes(Router& r);
/// GET /api/v1/openapi.json (openapi_routes.cpp).
void addOpenApiRoutes(Router& r);
/// GET /metrics (metrics_routes.cpp).
void addMetricsRoutes(Router& r);
/// GET /api/v1/fabric/map, the web view's summary of the fabric (map_routes.cpp).
void addMapRoutes(Router& r);
/// GET /ui/ and its files, the web view (ui_routes.cpp).
void addUiRoutes(Router& r);

}  // namespace ibfabric::api
