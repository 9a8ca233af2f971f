// Routing in the daemon: the forwarding tables' validation and balance as published in
// ServiceState, and the step of the sweep thread that refreshes them.
//
// updateRoutes() runs on the sweep thread after each sweep: it asks the CounterSource for the
// tables (the umad source probes and re-reads through its MAD engine, routing/lft_reader.h) and,
// when they changed, validates every CA pair and computes per-leaf balance. Validation of a
// 10,240-HCA fabric takes about a second (docs/BENCHMARKS.md), so it runs only when the tables
// change. Pure functions apart from the source; thread-safe as the source is.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "api/service/counter_source.h"
#include "api/service/service_state.h"
#include "routing/routes.h"

namespace ibfabric::api {

struct RoutingAnalysis {
  routing::ValidationReport validation;
  std::vector<routing::LeafBalance> balance;
  double maxImbalance = 1.0;
  std::chrono::nanoseconds analysisTime{0};
  std::chrono::system_clock::time_point tablesReadAt{};
};

struct RoutesUpdate {
  bool attempted = false;  ///< false: the source has no tables (nothing to publish)
  routing::ForwardingTablesPtr forwarding;
  std::shared_ptr<const RoutingAnalysis> analysis;
  std::string reason;  ///< why the tables were (re)read or kept
  std::string error;   ///< empty on success
  std::chrono::system_clock::time_point attempt{};
  std::chrono::nanoseconds took{0};
};

/// Problems per kind with bounded problem lists.
inline constexpr std::size_t kMaxListedRouteProblems = 1000;

RoutesUpdate updateRoutes(CounterSource& source, const TopologyPtr& topology,
                          const routing::ForwardingTablesPtr& previous,
                          const std::shared_ptr<const RoutingAnalysis>& previousAnalysis);
/// Publishes an update into a state (on success: tables, analysis and routes.* status).
void applyRoutesUpdate(ServiceState& state, const RoutesUpdate& update);

/// Analysis of a set of tables against their own topology.
std::shared_ptr<const RoutingAnalysis> analyzeRoutes(const routing::ForwardingTables& tables);

}  // namespace ibfabric::api
