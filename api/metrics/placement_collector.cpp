// The placement collector (live): requests answered by the PlacementService, by result, and the
// time each took. Read per scrape from the service's running counts.
#include "api/metrics/collectors.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kRequests{
    "ibfabric_placement_requests_total",
    "Placement requests by result (ok, invalid, unsatisfiable, not_ready, error)", "counter"};
constexpr MetricFamily kDuration{"ibfabric_placement_duration_seconds",
                                 "Time to answer a placement request", "histogram"};

void writePlacement(MetricWriter& out, const PlacementStats& m) {
  out.family(kRequests);
  for (std::size_t i = 0; i < PlacementStats::kResults.size(); ++i)
    out.sampleU(kRequests.name, Labels("result", PlacementStats::kResults[i]), m.requests[i]);
  out.family(kDuration);
  for (std::size_t i = 0; i < PlacementStats::kBuckets.size(); ++i) {  // cumulative already
    out.sampleU("ibfabric_placement_duration_seconds_bucket",
                Labels("le", bucketBound(PlacementStats::kBuckets[i])), m.buckets[i]);
  }
  out.sampleU("ibfabric_placement_duration_seconds_bucket", Labels("le", "+Inf"), m.count);
  out.sample("ibfabric_placement_duration_seconds_sum", "", m.sumSeconds);
  out.sampleU("ibfabric_placement_duration_seconds_count", "", m.count);
}

class PlacementCollector final : public Collector {
 public:
  explicit PlacementCollector(const PlacementService& placement) : placement_(placement) {}
  std::string_view name() const override { return "placement"; }
  void collect(const CollectContext&, MetricWriter& out) const override {
    writePlacement(out, placement_.stats());
  }

 private:
  const PlacementService& placement_;
};

}  // namespace

std::string renderPlacementMetrics(const PlacementStats& stats) {
  std::string text;
  MetricWriter out(text);
  writePlacement(out, stats);
  return text;
}

CollectorPtr placementCollector(const PlacementService& placement) {
  return std::make_unique<PlacementCollector>(placement);
}

}  // namespace ibfabric::api
