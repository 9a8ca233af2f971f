#include "api/metrics/collector.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>

namespace ibfabric::api {

CollectorResult runCollector(const Collector& collector, const CollectContext& context,
                             MetricWriter& out) {
  using Clock = std::chrono::steady_clock;
  CollectorResult r{std::string(collector.name()), true, 0};
  const auto t0 = Clock::now();
  try {
    collector.collect(context, out);
  } catch (const std::exception& e) {
    spdlog::error("metrics: collector {} failed: {}", r.name, e.what());
    r.success = false;
  } catch (...) {
    spdlog::error("metrics: collector {} failed", r.name);
    r.success = false;
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

CollectorResult runCollector(const Collector& collector, const CollectContext& context,
                             std::string& out) {
  const std::size_t mark = out.size();
  MetricWriter w(out);
  CollectorResult r = runCollector(collector, context, w);
  if (!r.success) out.resize(mark);
  return r;
}

std::vector<CollectorResult> runCollectors(const std::vector<CollectorPtr>& collectors,
                                           const CollectContext& context, std::string& out) {
  std::vector<CollectorResult> results;
  results.reserve(collectors.size());
  for (const auto& c : collectors) results.push_back(runCollector(*c, context, out));
  return results;
}

std::vector<CollectorResult> fabricReadResults(const ServiceState& s) {
  std::vector<CollectorResult> r;
  r.push_back({"crawl", s.crawl.lastSuccess && s.crawl.lastError.empty(), 0});
  r.push_back({"sweep", s.sweep.lastSuccess && s.sweep.lastError.empty(), 0});
  if (s.routes.lastAttempt)  // a source without forwarding tables has no routes read
    r.push_back({"routes", s.routes.lastSuccess && s.routes.lastError.empty(), 0});
  return r;
}

void writeCollectorStatus(MetricWriter& out, const std::vector<CollectorResult>& fabricReads,
                          const std::vector<CollectorResult>& collectors) {
  out.family("ibfabric_collector_success",
             "1 when the collector's last attempt succeeded: crawl, sweep and routes are the "
             "daemon's reads of the fabric, the others the collectors of this page",
             "gauge");
  for (const auto* list : {&fabricReads, &collectors})
    for (const auto& r : *list)
      out.sampleU("ibfabric_collector_success", Labels("collector", r.name), r.success ? 1 : 0);
  out.family("ibfabric_collector_duration_seconds",
             "Time the collector of this page took for its last rendering", "gauge");
  for (const auto& r : collectors)
    out.sample("ibfabric_collector_duration_seconds", Labels("collector", r.name), r.seconds);
}

}  // namespace ibfabric::api
