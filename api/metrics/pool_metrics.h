// The GPU pool families of /metrics: ibfabric_pool_gpus{state,class},
// ibfabric_pool_allocations{class,state}, ibfabric_pool_preemptions_total and
// ibfabric_pool_allocation_duration_seconds, read from a PoolService. Thread-safe (reads the
// pool through its own locks).
#pragma once

#include <string>

#include "api/service/pool_service.h"

namespace ibfabric::api {

/// The families in Prometheus text format.
std::string renderPoolMetrics(const PoolService& service);

}  // namespace ibfabric::api
