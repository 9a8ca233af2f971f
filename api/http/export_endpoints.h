// Scheduler-facing HTTP endpoints of the daemon (docs/scheduler.md, docs/api.md):
//   GET  /api/v1/export/slurm-topology?plugin=tree|block&exclude_unhealthy=true|false
//   GET  /api/v1/export/k8s-labels?format=kubectl|json|yaml&exclude_unhealthy=...
//   GET  /api/v1/export/kueue-topology?name=ibfabric&api_version=kueue.x-k8s.io/v1beta1
//   GET  /api/v1/export/volcano-hypernodes?exclude_unhealthy=...
//   POST /scheduler/filter, POST /scheduler/prioritize   (kube-scheduler extender verbs)
// Each request reads one ServiceState snapshot; host health joins the newest topology with the
// counter-based link health of the last sweep; a host an earlier crawl saw and the newest does
// not (every HCA cable gone) is down. The fabric layout and host health of a snapshot are
// computed once and shared by the requests that read it.
//
// The extender verbs accept bodies up to kSchedulerMaxBodyBytes (kube-scheduler sends whole Node
// objects unless nodeCacheCapable is set); every other route keeps the server's own limit.
//
// Thread-safety: the handlers run on the server's threads; the shared cache is locked.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/service/daemon_services.h"
#include "routing/placement.h"
#include "scheduler_hooks/export_layout.h"

namespace httplib {
class Server;
}

namespace ibfabric::api {

inline constexpr std::size_t kSchedulerMaxBodyBytes = 32 * 1024 * 1024;

/// Host health of a state: hostHealthFromTopology(newest topology), plus every host with a CA link
/// whose counter-based health is degraded/faulty/down, plus hosts of the last swept topology that
/// the newest crawl no longer sees (down: "not seen by the last crawl").
scheduler_hooks::HostHealthMap hostHealthOf(const ServiceState& state);

/// Average over a leaf's up ports (of `state.topology`) of the busier direction's utilization;
/// nullopt when no rate is known.
std::optional<double> leafUplinkUtilization(const ServiceState& state, NodeIndex leaf);

/// Registers the routes above. The extender ranks with `services.placement` (the one the REST
/// placement route uses) and finds a pod's job group among the pool's allocations (job id =
/// ibfabric.io/job-group) when the pool is configured. `maxBodyBytes` is the limit for every other
/// route (enforced on Content-Length before the body is read; the server's payload limit is raised
/// for the extender verbs).
void registerExportEndpoints(httplib::Server& server, const DaemonServices& services,
                             std::size_t maxBodyBytes);

}  // namespace ibfabric::api
