// The placement families of /metrics: ibfabric_placement_requests_total{result} and
// ibfabric_placement_duration_seconds, from the PlacementService's counts. Pure; thread-safe.
#pragma once

#include <string>

#include "api/service/placement_service.h"

namespace ibfabric::api {

/// The families in Prometheus text format.
std::string renderPlacementMetrics(const PlacementStats& stats);

}  // namespace ibfabric::api
