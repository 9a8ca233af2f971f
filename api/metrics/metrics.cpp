#include "api/metrics/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <array>
#include <map>

#include "api/metrics/metrics_text.h"
#include "api/metrics/osm_views.h"
#include "api/service/routing_state.h"
#include "discovery/formats.h"
#include "telemetry/counter_sweep.h"

namespace ibfabric::api {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::Labels;
using telemetry::Counter;

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

double epoch(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace

std::string renderMetrics(const ServiceState& s, const telemetry::EventLog& events) {
  return renderMetrics(s, events, MetricsOptions{});
}

std::string renderMetrics(const ServiceState& s, const telemetry::EventLog& events,
                          const MetricsOptions& options) {
  auto registry = std::make_shared<prometheus::Registry>();

  // Service health.
  auto& success = BuildGauge()
                      .Name("ibfabric_collector_success")
                      .Help("1 when the collector's last attempt succeeded")
                      .Register(*registry);
  success.Add({{"collector", "crawl"}})
      .Set(s.crawl.lastSuccess && s.crawl.lastError.empty() ? 1 : 0);
  success.Add({{"collector", "sweep"}})
      .Set(s.sweep.lastSuccess && s.sweep.lastError.empty() ? 1 : 0);
  addRoutingMetrics(*registry, s, success);  // api/metrics/routing_metrics.cpp
  BuildGauge()
      .Name("ibfabric_ready")
      .Help("1 once the first crawl and the first sweep are done")
      .Register(*registry)
      .Add({})
      .Set(s.ready() ? 1 : 0);
  auto& failures = BuildCounter()
                       .Name("ibfabric_collector_failures_total")
                       .Help("Failed attempts per collector")
                       .Register(*registry);
  failures.Add({{"collector", "crawl"}}).Increment(static_cast<double>(s.crawl.failures));
  failures.Add({{"collector", "sweep"}}).Increment(static_cast<double>(s.sweep.failures));
  if (s.crawl.lastSuccess) {
    BuildGauge()
        .Name("ibfabric_crawl_duration_seconds")
        .Help("Duration of the last successful crawl")
        .Register(*registry)
        .Add({})
        .Set(seconds(s.crawl.lastDuration));
    BuildGauge()
        .Name("ibfabric_last_crawl_timestamp_seconds")
        .Help("When the last successful crawl finished (Unix time)")
        .Register(*registry)
        .Add({})
        .Set(epoch(*s.crawl.lastSuccess));
  }
  if (s.sweep.lastSuccess) {
    BuildGauge()
        .Name("ibfabric_sweep_duration_seconds")
        .Help("Duration of the last successful counter sweep")
        .Register(*registry)
        .Add({})
        .Set(seconds(s.sweep.lastDuration));
    BuildGauge()
        .Name("ibfabric_last_sweep_timestamp_seconds")
        .Help("When the last successful counter sweep finished (Unix time)")
        .Register(*registry)
        .Add({})
        .Set(epoch(*s.sweep.lastSuccess));
  }
  if (s.engine) {
    BuildCounter()
        .Name("ibfabric_mad_sent_total")
        .Help("MADs sent by the sweep engine (attempts, retries included)")
        .Register(*registry)
        .Add({})
        .Increment(static_cast<double>(s.engine->sent));
    BuildCounter()
        .Name("ibfabric_mad_timeouts_total")
        .Help("MAD attempts that timed out")
        .Register(*registry)
        .Add({})
        .Increment(static_cast<double>(s.engine->timeouts));
    BuildCounter()
        .Name("ibfabric_mad_retries_total")
        .Help("MAD re-sends")
        .Register(*registry)
        .Add({})
        .Increment(static_cast<double>(s.engine->retries));
  }
  auto& eventFamily = BuildCounter()
                          .Name("ibfabric_events_total")
                          .Help("Events appended to the event log since the daemon started")
                          .Register(*registry);
  for (const auto& [type, count] : s.eventsByType)
    eventFamily.Add({{"type", type}}).Increment(static_cast<double>(count));
  BuildGauge()
      .Name("ibfabric_events_last_id")
      .Help("Id of the newest event (for /api/v1/events?since=)")
      .Register(*registry)
      .Add({})
      .Set(static_cast<double>(events.lastId()));

  // Fabric size.
  if (s.topology) {
    const Topology& t = *s.topology;
    auto& info = BuildGauge()
                     .Name("ibfabric_node_info")
                     .Help("Identity of every node (value 1)")
                     .Register(*registry);
    for (const Node& n : t.nodes()) {
      info.Add({{"guid", toString(n.guid)},
                {"node", n.description},
                {"type", n.isSwitch() ? "switch"
                         : n.isCa()   ? "ca"
                                      : "router"},
                {"level", levelName(n.level)},
                {"lid", std::to_string(n.lid().value())},
                {"host", n.host ? t.hosts()[*n.host].name : ""},
                {"rail", n.rail >= 0 ? std::to_string(n.rail) : ""}})
          .Set(1);
    }
  }

  addOsmMetrics(*registry, s.osm);
  std::string out = prometheus::TextSerializer().Serialize(registry->Collect());
  // The fabric counts and the per-port series (the bulk) without a registry: metrics_text.h.
  appendFabricMetrics(out, s);
  appendPortMetrics(out, s, options);
  return out;
}

}  // namespace ibfabric::api
