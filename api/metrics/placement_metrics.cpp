#include "api/metrics/placement_metrics.h"

#include <cstdio>

namespace ibfabric::api {

std::string renderPlacementMetrics(const PlacementStats& m) {
  std::string out =
      "# HELP ibfabric_placement_requests_total Placement requests by result (ok, invalid, "
      "unsatisfiable, not_ready, error)\n# TYPE ibfabric_placement_requests_total counter\n";
  for (std::size_t i = 0; i < PlacementStats::kResults.size(); ++i) {
    out += "ibfabric_placement_requests_total{result=\"" +
           std::string(PlacementStats::kResults[i]) + "\"} " + std::to_string(m.requests[i]) + "\n";
  }
  out +=
      "# HELP ibfabric_placement_duration_seconds Time to answer a placement request\n"
      "# TYPE ibfabric_placement_duration_seconds histogram\n";
  char line[160];
  for (std::size_t i = 0; i < PlacementStats::kBuckets.size(); ++i) {
    std::snprintf(line, sizeof line, "ibfabric_placement_duration_seconds_bucket{le=\"%g\"} %llu\n",
                  PlacementStats::kBuckets[i], static_cast<unsigned long long>(m.buckets[i]));
    out += line;
  }
  std::snprintf(line, sizeof line,
                "ibfabric_placement_duration_seconds_bucket{le=\"+Inf\"} %llu\n"
                "ibfabric_placement_duration_seconds_sum %.9g\n"
                "ibfabric_placement_duration_seconds_count %llu\n",
                static_cast<unsigned long long>(m.count), m.sumSeconds,
                static_cast<unsigned long long>(m.count));
  out += line;
  return out;
}

}  // namespace ibfabric::api
