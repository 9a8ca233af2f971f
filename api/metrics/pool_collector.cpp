// The pool collector (live): the GPU pool's GPUs and allocations by state and class, its
// preemptions and the time each allocation took. Read per scrape through the pool's own locks.
#include <algorithm>
#include <map>

#include "api/metrics/collectors.h"

namespace ibfabric::api {
namespace {

using scheduler_hooks::AllocationState;

constexpr MetricFamily kGpus{"ibfabric_pool_gpus",
                             "GPUs of the pool by state (allocated, degraded, free, unavailable) "
                             "and class (MIG instances count as their share of a GPU)",
                             "gauge"};
constexpr MetricFamily kAllocations{"ibfabric_pool_allocations",
                                    "Allocations of the pool by class and state (active, degraded)",
                                    "gauge"};
constexpr MetricFamily kPreemptions{"ibfabric_pool_preemptions_total",
                                    "Allocations preempted by higher-priority requests since start",
                                    "counter"};
constexpr MetricFamily kDuration{
    "ibfabric_pool_allocation_duration_seconds",
    "Time to decide and journal one allocation request (incl. preemption)", "histogram"};

using Key = std::pair<std::string, std::string>;

void writeGpusAndAllocations(MetricWriter& out, const scheduler_hooks::Pool& pool) {
  const auto usage = pool.usage();
  std::map<Key, double> g;  // (state, class)
  std::map<Key, double> a;  // (class, state)
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
  out.family(kGpus);
  for (const auto& [k, v] : g)
    out.sample(kGpus.name, Labels("class", k.second).add("state", k.first), v);
  out.family(kAllocations);
  for (const auto& [k, v] : a)
    out.sample(kAllocations.name, Labels("class", k.first).add("state", k.second), v);
  out.family(kPreemptions);
  out.sampleU(kPreemptions.name, "", usage.preemptions);
}

void writeDuration(MetricWriter& out, const PoolStats& stats) {
  std::uint64_t count = 0;
  for (auto n : stats.buckets) count += n;
  out.family(kDuration);
  out.sampleU("ibfabric_pool_allocation_duration_seconds_count", "", count);
  out.sample("ibfabric_pool_allocation_duration_seconds_sum", "", stats.sumSeconds);
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < stats.buckets.size(); ++i) {  // per bucket: summed here
    cumulative += stats.buckets[i];
    const std::string bound =
        i < PoolStats::kBuckets.size() ? bucketBound(PoolStats::kBuckets[i]) : std::string("+Inf");
    out.sampleU("ibfabric_pool_allocation_duration_seconds_bucket", Labels("le", bound),
                cumulative);
  }
}

class PoolCollector final : public Collector {
 public:
  explicit PoolCollector(const PoolService& pool) : pool_(pool) {}
  std::string_view name() const override { return "pool"; }
  void collect(const CollectContext&, MetricWriter& out) const override {
    writeGpusAndAllocations(out, pool_.pool());
    writeDuration(out, pool_.stats());
  }

 private:
  const PoolService& pool_;
};

}  // namespace

CollectorPtr poolCollector(const PoolService& pool) {
  return std::make_unique<PoolCollector>(pool);
}

}  // namespace ibfabric::api
