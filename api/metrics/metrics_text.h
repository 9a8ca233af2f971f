// A direct writer of the Prometheus text exposition format (0.0.4), for the large, per-port part
// of /metrics: no registry, no per-series label maps. Each port's label set is rendered once and
// reused by every family; families are written whole (HELP, TYPE, then all their samples).
//
// Also the fabric-level series (counts by state, expected-topology presence) — see
// appendFabricMetrics / appendPortMetrics. Pure functions of their inputs; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "api/service/service_state.h"

namespace ibfabric::api {

struct MetricsOptions {
  /// true ("full"): every per-port series carries guid, port, node, level, host, rail,
  /// remote_guid, remote_port, remote_node. false ("minimal"): guid, port, level only; the other
  /// labels are on ibfabric_port_info (value 1), one series per port, for PromQL joins.
  bool fullPortLabels = true;
};

/// Appends `value` to `out` as Prometheus expects: integers exactly, others shortest round-trip,
/// NaN / +Inf / -Inf spelled out.
void appendValue(std::string& out, double value);
/// Appends a label value with \, " and newline escaped.
void appendLabelValue(std::string& out, std::string_view value);

/// ibfabric_fabric_{switches,cas,hosts,links}{state}, ibfabric_fabric_missing_nodes{type},
/// ibfabric_fabric_missing_links, ibfabric_expected_node_present{guid,node,type}.
void appendFabricMetrics(std::string& out, const ServiceState& state);
/// Per port (from the last sweep) and per link (from its health evaluation).
void appendPortMetrics(std::string& out, const ServiceState& state, const MetricsOptions& options);

}  // namespace ibfabric::api
