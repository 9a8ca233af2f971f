// Collector: one concern of /metrics (the fabric's topology, its ports, its links, ...), in the
// manner of node_exporter's collectors. Each writes its own families (declared in one block at
// the top of its file) through a MetricWriter; the page runs them one by one and reports each
// one's outcome as ibfabric_collector_success{collector} and
// ibfabric_collector_duration_seconds{collector}. A collector that throws loses what it wrote
// and reports 0; the others still render.
//
// State collectors (collectors.h: stateCollectors()) read only the CollectContext's immutable
// state: MetricsPage renders them once per state change. Live collectors (placementCollector,
// poolCollector) read a service's running counts: rendered per scrape.
//
// Collectors are immutable after construction: collect() is thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/metrics/metric_writer.h"
#include "api/metrics/metrics_options.h"
#include "api/metrics/metrics_shard.h"
#include "api/service/service_state.h"
#include "telemetry/event_log.h"

namespace ibfabric::api {

/// What a rendering reads: one state snapshot, the event log, the page's options, and the part
/// of the fabric this page exports (per-switch series outside `shard` are left out).
struct CollectContext {
  const ServiceState& state;
  const telemetry::EventLog& events;
  const MetricsOptions& options;
  MetricsShard shard{};
};

class Collector {
 public:
  virtual ~Collector() = default;
  /// The collector label value ("topology", "ports", ...).
  virtual std::string_view name() const = 0;
  /// Writes whole families; may throw (the page then drops what it wrote).
  virtual void collect(const CollectContext& context, MetricWriter& out) const = 0;
};
using CollectorPtr = std::unique_ptr<const Collector>;

struct CollectorResult {
  std::string name;
  bool success = false;
  double seconds = 0;
};

/// Runs `collector` into `out`: on an exception `out` is cut back to where it was and the result
/// says success false (the error is logged).
CollectorResult runCollector(const Collector& collector, const CollectContext& context,
                             std::string& out);
/// Runs `collector` into a writer (a streaming one: gzip_rendering.h), timed; an exception is
/// logged and gives success false: the caller drops what the writer took.
CollectorResult runCollector(const Collector& collector, const CollectContext& context,
                             MetricWriter& out);
/// Runs every collector in order, appending to `out`; one result per collector.
std::vector<CollectorResult> runCollectors(const std::vector<CollectorPtr>& collectors,
                                           const CollectContext& context, std::string& out);

/// Whether the daemon's reads of the fabric last succeeded (crawl, sweep and, once forwarding
/// tables were attempted, routes): the first ibfabric_collector_success samples, from a state.
std::vector<CollectorResult> fabricReadResults(const ServiceState& state);

/// ibfabric_collector_success{collector} (the fabric reads without a duration, then every
/// collector of the page) and ibfabric_collector_duration_seconds{collector} (page collectors).
void writeCollectorStatus(MetricWriter& out, const std::vector<CollectorResult>& fabricReads,
                          const std::vector<CollectorResult>& collectors);

}  // namespace ibfabric::api
