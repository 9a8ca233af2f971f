// DaemonServices: the daemon's domain services, as the rooms above the service room (metrics,
// http) receive them: the fabric state (crawls, sweeps, routes, events), the one placement
// engine every caller shares, the GPU pool when one is configured, and the jobs with the links
// they load.
//
// A bundle of references; the daemon's main owns the services and keeps them alive longer than
// anything given this bundle. Thread-safety is that of each service.
#pragma once

#include "api/service/fabric_service.h"
#include "api/service/job_service.h"
#include "api/service/placement_service.h"
#include "api/service/pool_service.h"

namespace ibfabric::api {

struct DaemonServices {
  FabricService& fabric;
  PlacementService& placement;
  PoolService* pool = nullptr;  ///< null without a `pool:` configuration (its routes answer 404)
  /// The jobs and their links (attribution); null in set-ups without one (its routes answer 503).
  JobService* jobs = nullptr;
};

}  // namespace ibfabric::api
