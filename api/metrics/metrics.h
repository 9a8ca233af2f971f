// The Prometheus exposition of one ServiceState: the state collectors (collectors.h) run in
// order, then their ibfabric_collector_success / _duration_seconds. Names follow Prometheus
// conventions (docs/api.md): ibfabric_<subsystem>_<name>_<unit>, counters end in _total.
//
// The served /metrics is this plus the live families (MetricsPage, metrics_page.h). Pure
// function of its inputs; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "api/metrics/collector.h"
#include "api/service/service_state.h"
#include "telemetry/event_log.h"

namespace ibfabric::api {

/// The state collectors' families of a state (those options.runs()). `reserve`: the text's expected
/// size (the previous rendering's): a page of hundreds of MB then grows without reallocations.
struct StateRendering {
  std::string text;                          ///< every family but the collector status
  std::vector<CollectorResult> collectors;   ///< one per state collector run, in order
  std::vector<CollectorResult> fabricReads;  ///< fabricReadResults(state)
};
StateRendering renderState(const std::vector<CollectorPtr>& collectors, const ServiceState& state,
                           const telemetry::EventLog& events, const MetricsOptions& options,
                           std::size_t reserve = 0);

/// A whole page of the state collectors (their families and their status).
std::string renderMetrics(const ServiceState& state, const telemetry::EventLog& events);
/// With options (api/metrics/metrics_options.h).
std::string renderMetrics(const ServiceState& state, const telemetry::EventLog& events,
                          const MetricsOptions& options);

}  // namespace ibfabric::api
