#include "api/metrics/pool_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <map>
#include <vector>

namespace ibfabric::api {

using scheduler_hooks::AllocationState;

std::string renderPoolMetrics(const PoolService& service) {
  const scheduler_hooks::Pool& pool = service.pool();
  prometheus::Registry reg;
  auto& gpus = prometheus::BuildGauge()
                   .Name("ibfabric_pool_gpus")
                   .Help(
                       "GPUs of the pool by state (allocated, degraded, free, unavailable) and "
                       "class (MIG instances count as their share of a GPU)")
                   .Register(reg);
  auto& allocs = prometheus::BuildGauge()
                     .Name("ibfabric_pool_allocations")
                     .Help("Allocations of the pool by class and state (active, degraded)")
                     .Register(reg);
  auto& preempt = prometheus::BuildCounter()
                      .Name("ibfabric_pool_preemptions_total")
                      .Help("Allocations preempted by higher-priority requests since start")
                      .Register(reg);
  const auto usage = pool.usage();
  std::map<std::pair<std::string, std::string>, double> g;  // (state, class)
  std::map<std::pair<std::string, std::string>, double> a;  // (class, state)
  for (const char* c : {"training", "inference"})
    for (const char* s : {"active", "degraded"}) {
      a[{c, s}] = 0;
      g[{s == std::string("active") ? "allocated" : "degraded", c}] = 0;
    }
  for (const auto& al : pool.list()) {
    const std::string c(toString(al.request.jobClass)), s(toString(al.state));
    a[{c, s}] += 1;
    g[{al.state == AllocationState::kActive ? "allocated" : "degraded", c}] += al.gpuEquivalents;
  }
  g[{"free", "none"}] = std::max(0.0, usage.usableGpus - usage.usedGpus);
  g[{"unavailable", "none"}] = usage.totalGpus - usage.usableGpus;
  for (const auto& [k, v] : g) gpus.Add({{"state", k.first}, {"class", k.second}}).Set(v);
  for (const auto& [k, v] : a) allocs.Add({{"class", k.first}, {"state", k.second}}).Set(v);
  preempt.Add({}).Increment(static_cast<double>(usage.preemptions));
  const PoolStats stats = service.stats();
  auto& duration = prometheus::BuildHistogram()
                       .Name("ibfabric_pool_allocation_duration_seconds")
                       .Help("Time to decide and journal one allocation request (incl. preemption)")
                       .Register(reg)
                       .Add({}, prometheus::Histogram::BucketBoundaries(PoolStats::kBuckets.begin(),
                                                                        PoolStats::kBuckets.end()));
  duration.ObserveMultiple(std::vector<double>(stats.buckets.begin(), stats.buckets.end()),
                           stats.sumSeconds);
  return prometheus::TextSerializer().Serialize(reg.Collect());
}

}  // namespace ibfabric::api
