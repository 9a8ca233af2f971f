// The port collector: per polled port (the last sweep) its counters, rates, link rates, state
// and descriptive labels — the bulk of the page (a million series on a 10,240-HCA fabric). Each
// port's label set is rendered once and reused by every family.
#include <array>

#include "api/metrics/collectors.h"
#include "discovery/formats.h"
#include "telemetry/counter_sweep.h"

namespace ibfabric::api {
namespace {

using telemetry::Counter;

struct CounterFamily {
  Counter counter;
  MetricFamily family;
  std::uint64_t scale;
};

// Data counters count 4-octet units: exported in bytes.
constexpr std::array<CounterFamily, telemetry::kCounterCount> kCounters = {{
    {Counter::kXmitData,
     {"ibfabric_port_transmit_bytes_total", "Bytes transmitted (PortXmitData x 4)", "counter"},
     4},
    {Counter::kRcvData,
     {"ibfabric_port_receive_bytes_total", "Bytes received (PortRcvData x 4)", "counter"},
     4},
    {Counter::kXmitPkts,
     {"ibfabric_port_transmit_packets_total", "Packets transmitted", "counter"},
     1},
    {Counter::kRcvPkts, {"ibfabric_port_receive_packets_total", "Packets received", "counter"}, 1},
    {Counter::kSymbolErrors,
     {"ibfabric_port_symbol_errors_total", "SymbolErrorCounter", "counter"},
     1},
    {Counter::kLinkErrorRecovery,
     {"ibfabric_port_link_error_recovery_total", "LinkErrorRecoveryCounter", "counter"},
     1},
    {Counter::kLinkDowned, {"ibfabric_port_link_downed_total", "LinkDownedCounter", "counter"}, 1},
    {Counter::kRcvErrors, {"ibfabric_port_receive_errors_total", "PortRcvErrors", "counter"}, 1},
    {Counter::kRcvRemotePhysicalErrors,
     {"ibfabric_port_receive_remote_physical_errors_total", "PortRcvRemotePhysicalErrors",
      "counter"},
     1},
    {Counter::kRcvSwitchRelayErrors,
     {"ibfabric_port_receive_switch_relay_errors_total", "PortRcvSwitchRelayErrors", "counter"},
     1},
    {Counter::kXmitDiscards,
     {"ibfabric_port_transmit_discards_total", "PortXmitDiscards", "counter"},
     1},
    {Counter::kXmitConstraintErrors,
     {"ibfabric_port_transmit_constraint_errors_total", "PortXmitConstraintErrors", "counter"},
     1},
    {Counter::kRcvConstraintErrors,
     {"ibfabric_port_receive_constraint_errors_total", "PortRcvConstraintErrors", "counter"},
     1},
    {Counter::kLocalLinkIntegrityErrors,
     {"ibfabric_port_local_link_integrity_errors_total", "LocalLinkIntegrityErrors", "counter"},
     1},
    {Counter::kExcessiveBufferOverrunErrors,
     {"ibfabric_port_excessive_buffer_overrun_errors_total", "ExcessiveBufferOverrunErrors",
      "counter"},
     1},
    {Counter::kVl15Dropped, {"ibfabric_port_vl15_dropped_total", "VL15Dropped", "counter"}, 1},
    {Counter::kXmitWait,
     {"ibfabric_port_transmit_wait_total",
      "PortXmitWait ticks (time with data to send but no credits)", "counter"},
     1},
}};
constexpr MetricFamily kUtilization{"ibfabric_port_utilization_ratio",
                                    "Data rate over the link's data rate in the last interval",
                                    "gauge"};
constexpr MetricFamily kCongestion{"ibfabric_port_congestion_ratio",
                                   "Fraction of the last interval spent waiting (PortXmitWait)",
                                   "gauge"};
constexpr MetricFamily kDataRate{"ibfabric_port_link_data_rate_bytes_per_second",
                                 "Active data rate of the port's link (encoding overhead removed)",
                                 "gauge"};
constexpr MetricFamily kExpectedRate{
    "ibfabric_port_link_expected_data_rate_bytes_per_second",
    "Data rate the link should run at: the best rate both ends enable", "gauge"};
constexpr MetricFamily kDegraded{"ibfabric_port_link_degraded",
                                 "1 when the port's link runs below the rate both ends enable",
                                 "gauge"};
constexpr MetricFamily kState{"ibfabric_port_state_id",
                              "PortInfo PortState of the port: 1 Down, 2 Init, 3 Armed, 4 Active",
                              "gauge"};
constexpr MetricFamily kInfo{
    "ibfabric_port_info",
    "Descriptive labels of every polled port (value 1): node, level, host, rail, remote end",
    "gauge"};

struct PortRow {
  const telemetry::PortSample* sample;
  const Port* port;
  const Link* link;
  std::string labels;
};

/// One row per polled port with its label set; the ibfabric_port_info samples into `info`.
std::vector<PortRow> portRows(const telemetry::CounterSnapshot& snap, const MetricsOptions& options,
                              std::string& info) {
  const Topology& t = *snap.topology;
  std::vector<PortRow> rows;
  rows.reserve(snap.ports.size());
  MetricWriter infoOut(info);
  for (const auto& smp : snap.ports) {
    if (smp.status == telemetry::PortStatus::kGone) continue;
    const Node* n = t.findNode(smp.key.node);
    const Port* p = n ? n->port(smp.key.port) : nullptr;
    const Link* link = p && p->link && *p->link < t.links().size() ? &t.links()[*p->link] : nullptr;
    const std::string guid = toString(smp.key.node);
    const std::string port = std::to_string(smp.key.port.value());
    const std::string level = n ? std::string(levelName(n->level)) : "unknown";
    Labels full;  // in name order
    full.add("guid", guid)
        .add("host", n && n->host ? t.hosts()[*n->host].name : "")
        .add("level", level)
        .add("node", smp.nodeDescription)
        .add("port", port)
        .add("rail", n && n->rail >= 0 ? std::to_string(n->rail) : "")
        .add("remote_guid", smp.remote ? toString(smp.remote->node) : "")
        .add("remote_node", smp.remoteDescription)
        .add("remote_port", smp.remote ? std::to_string(smp.remote->port.value()) : "");
    infoOut.sampleU(kInfo.name, full, 1);
    Labels labels = options.fullPortLabels
                        ? std::move(full)
                        : std::move(Labels("guid", guid).add("level", level).add("port", port));
    rows.push_back({&smp, p, link, labels.take()});
  }
  return rows;
}

bool ok(const PortRow& r) { return r.sample->status == telemetry::PortStatus::kOk; }

void writeCounters(MetricWriter& out, const std::vector<PortRow>& rows) {
  for (const auto& m : kCounters) {
    out.family(m.family);
    for (const auto& r : rows) {
      if (!ok(r) || !r.sample->counters.has(m.counter)) continue;
      const std::uint64_t v = r.sample->counters.get(m.counter);
      if (m.scale == 1 || v <= UINT64_MAX / m.scale) {
        out.sampleU(m.family.name, r.labels, v * m.scale);
      } else {
        out.sample(m.family.name, r.labels, static_cast<double>(v) * static_cast<double>(m.scale));
      }
    }
  }
}

void writeRates(MetricWriter& out, const ServiceState& s, const std::vector<PortRow>& rows) {
  out.family(kUtilization);
  for (const auto& r : rows) {
    const auto* rates = ok(r) ? s.ratesOf(r.sample->key) : nullptr;
    if (!rates) continue;
    if (rates->txUtilization)
      out.sample(kUtilization.name, "direction=\"transmit\"," + r.labels, *rates->txUtilization);
    if (rates->rxUtilization)
      out.sample(kUtilization.name, "direction=\"receive\"," + r.labels, *rates->rxUtilization);
  }
  out.family(kCongestion);
  for (const auto& r : rows) {
    const auto* rates = ok(r) ? s.ratesOf(r.sample->key) : nullptr;
    if (rates && rates->congestion) out.sample(kCongestion.name, r.labels, *rates->congestion);
  }
}

void writeLinkRates(MetricWriter& out, const std::vector<PortRow>& rows) {
  out.family(kDataRate);
  for (const auto& r : rows) {
    if (ok(r) && r.sample->rate)
      out.sample(kDataRate.name, r.labels, r.sample->rate->dataGbps() * 1e9 / 8);
  }
  out.family(kExpectedRate);
  for (const auto& r : rows) {
    if (r.link && r.link->enabledRate)
      out.sample(kExpectedRate.name, r.labels, r.link->enabledRate->dataGbps() * 1e9 / 8);
  }
  out.family(kDegraded);
  for (const auto& r : rows) {
    if (r.link) out.sampleU(kDegraded.name, r.labels, r.link->belowEnabled());
  }
}

class PortCollector final : public Collector {
 public:
  std::string_view name() const override { return "ports"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    const ServiceState& s = c.state;
    if (!s.counters || !s.counters->topology) return;
    std::string info;
    const auto rows = portRows(*s.counters, c.options, info);
    writeCounters(out, rows);
    writeRates(out, s, rows);
    writeLinkRates(out, rows);
    out.family(kState);
    for (const auto& r : rows) {
      if (r.port) out.sampleU(kState.name, r.labels, static_cast<std::uint64_t>(r.port->state));
    }
    out.family(kInfo);
    out.samples(info);
  }
};

}  // namespace

CollectorPtr portCollector() { return std::make_unique<PortCollector>(); }

}  // namespace ibfabric::api
