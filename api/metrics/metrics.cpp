#include "api/metrics/metrics.h"

#include "api/metrics/collectors.h"

namespace ibfabric::api {

StateRendering renderState(const std::vector<CollectorPtr>& collectors, const ServiceState& state,
                           const telemetry::EventLog& events, const MetricsOptions& options,
                           std::size_t reserve) {
  StateRendering r;
  r.text.reserve(reserve);
  const CollectContext context{state, events, options};
  for (const auto& c : collectors)
    if (options.runs(c->name())) r.collectors.push_back(runCollector(*c, context, r.text));
  r.fabricReads = fabricReadResults(state);
  return r;
}

std::string renderMetrics(const ServiceState& state, const telemetry::EventLog& events) {
  return renderMetrics(state, events, MetricsOptions{});
}

std::string renderMetrics(const ServiceState& state, const telemetry::EventLog& events,
                          const MetricsOptions& options) {
  StateRendering r = renderState(stateCollectors(), state, events, options);
  MetricWriter out(r.text);
  writeCollectorStatus(out, r.fabricReads, r.collectors);
  return std::move(r.text);
}

}  // namespace ibfabric::api
