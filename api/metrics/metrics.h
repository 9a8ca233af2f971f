// The Prometheus exposition of a ServiceState (/metrics), built with prometheus-cpp's core model
// and rendered with its TextSerializer. Names follow Prometheus conventions (docs/api.md):
// ibfabric_<subsystem>_<name>_<unit>, counters end in _total, bytes in bytes.
//
// A fresh registry is built per scrape from one immutable state, so a scrape never mixes two
// sweeps. Pure function of its inputs; thread-safe.
#pragma once

#include <chrono>
#include <string>

#include "api/metrics/metrics_text.h"
#include "api/service/service_state.h"
#include "telemetry/event_log.h"

namespace ibfabric::api {

std::string renderMetrics(const ServiceState& state, const telemetry::EventLog& events);
/// With options (per-port label set, api/metrics/metrics_text.h).
std::string renderMetrics(const ServiceState& state, const telemetry::EventLog& events,
                          const MetricsOptions& options);

}  // namespace ibfabric::api
