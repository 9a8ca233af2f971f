// The port collector: per exported port (the last sweep's polled ports; switch ports only by
// default, MetricsOptions::ports) its counters, rates, link rates and state, by counter set
// (MetricsOptions::counterSets) — the bulk of the page. Per-port series carry the port's
// identity only (guid, port; direction for utilization); its descriptive labels (node, level,
// host, rail, remote end) are on ibfabric_port_info, one series per port, for PromQL joins.
// Ports of the switches outside the page's shard are left out (shard_owner.h).
#include <array>

#include "api/metrics/collectors.h"
#include "api/metrics/shard_owner.h"
#include "discovery/formats.h"
#include "telemetry/counter_sweep.h"

namespace ibfabric::api {
namespace {

using telemetry::Counter;

struct CounterFamily {
  Counter counter;
  MetricFamily family;
  std::uint64_t scale;
  CounterSet set;
};

// Data counters count 4-octet units: exported in bytes.
constexpr std::array<CounterFamily, telemetry::kCounterCount> kCounters = {{
    {Counter::kXmitData,
     {"ibfabric_port_transmit_bytes_total", "Bytes transmitted (PortXmitData x 4)", "counter"},
     4,
     CounterSet::kTraffic},
    {Counter::kRcvData,
     {"ibfabric_port_receive_bytes_total", "Bytes received (PortRcvData x 4)", "counter"},
     4,
     CounterSet::kTraffic},
    {Counter::kXmitPkts,
     {"ibfabric_port_transmit_packets_total", "Packets transmitted", "counter"},
     1,
     CounterSet::kPackets},
    {Counter::kRcvPkts,
     {"ibfabric_port_receive_packets_total", "Packets received", "counter"},
     1,
     CounterSet::kPackets},
    {Counter::kSymbolErrors,
     {"ibfabric_port_symbol_errors_total", "SymbolErrorCounter", "counter"},
     1,
     CounterSet::kErrors},
    {Counter::kLinkErrorRecovery,
     {"ibfabric_port_link_error_recovery_total", "LinkErrorRecoveryCounter", "counter"},
     1,
     CounterSet::kPhysicalErrors},
    {Counter::kLinkDowned,
     {"ibfabric_port_link_downed_total", "LinkDownedCounter", "counter"},
     1,
     CounterSet::kErrors},
    {Counter::kRcvErrors,
     {"ibfabric_port_receive_errors_total", "PortRcvErrors", "counter"},
     1,
     CounterSet::kErrors},
    {Counter::kRcvRemotePhysicalErrors,
     {"ibfabric_port_receive_remote_physical_errors_total", "PortRcvRemotePhysicalErrors",
      "counter"},
     1,
     CounterSet::kPhysicalErrors},
    {Counter::kRcvSwitchRelayErrors,
     {"ibfabric_port_receive_switch_relay_errors_total", "PortRcvSwitchRelayErrors", "counter"},
     1,
     CounterSet::kFilterErrors},
    {Counter::kXmitDiscards,
     {"ibfabric_port_transmit_discards_total", "PortXmitDiscards", "counter"},
     1,
     CounterSet::kErrors},
    {Counter::kXmitConstraintErrors,
     {"ibfabric_port_transmit_constraint_errors_total", "PortXmitConstraintErrors", "counter"},
     1,
     CounterSet::kFilterErrors},
    {Counter::kRcvConstraintErrors,
     {"ibfabric_port_receive_constraint_errors_total", "PortRcvConstraintErrors", "counter"},
     1,
     CounterSet::kFilterErrors},
    {Counter::kLocalLinkIntegrityErrors,
     {"ibfabric_port_local_link_integrity_errors_total", "LocalLinkIntegrityErrors", "counter"},
     1,
     CounterSet::kPhysicalErrors},
    {Counter::kExcessiveBufferOverrunErrors,
     {"ibfabric_port_excessive_buffer_overrun_errors_total", "ExcessiveBufferOverrunErrors",
      "counter"},
     1,
     CounterSet::kPhysicalErrors},
    {Counter::kVl15Dropped,
     {"ibfabric_port_vl15_dropped_total", "VL15Dropped", "counter"},
     1,
     CounterSet::kFilterErrors},
    {Counter::kXmitWait,
     {"ibfabric_port_transmit_wait_total",
      "PortXmitWait ticks (time with data to send but no credits)", "counter"},
     1,
     CounterSet::kXmitWait},
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
constexpr MetricFamily kState{"ibfabric_port_state_id",
                              "PortInfo PortState of the port: 1 Down, 2 Init, 3 Armed, 4 Active",
                              "gauge"};
constexpr MetricFamily kInfo{
    "ibfabric_port_info",
    "Descriptive labels of every exported port (value 1): node, level, host, rail and the remote "
    "end; join on (guid, port)",
    "gauge"};

struct PortRow {
  const telemetry::PortSample* sample;
  const Port* port;
  const Link* link;
  std::string labels;  // guid="...",port="..."
};

bool exported(const telemetry::PortSample& s, const CollectContext& c) {
  if (s.status == telemetry::PortStatus::kGone) return false;
  if (c.options.ports == PortScope::kSwitch && s.nodeType != NodeType::kSwitch) return false;
  return c.shard.keeps(portShardOwner(s));
}

/// The host name of node `guid`, "" for none.
std::string_view hostOf(const Topology& t, const Node* n) {
  return n && n->host ? std::string_view(t.hosts()[*n->host].name) : std::string_view();
}

/// One row per exported port with its identity labels; the ibfabric_port_info samples into
/// `info`.
std::vector<PortRow> portRows(const CollectContext& c, std::string& info) {
  const telemetry::CounterSnapshot& snap = *c.state.counters;
  const Topology& t = *snap.topology;
  std::vector<PortRow> rows;
  rows.reserve(snap.ports.size());
  MetricWriter infoOut(info);
  for (const auto& smp : snap.ports) {
    if (!exported(smp, c)) continue;
    const Node* n = t.findNode(smp.key.node);
    const Port* p = n ? n->port(smp.key.port) : nullptr;
    const Link* link = p && p->link && *p->link < t.links().size() ? &t.links()[*p->link] : nullptr;
    const Node* remote = smp.remote ? t.findNode(smp.remote->node) : nullptr;
    Labels id("guid", toString(smp.key.node));
    id.add("port", std::to_string(smp.key.port.value()));
    Labels full(id);  // the identity, then the rest in name order
    full.add("host", hostOf(t, n))
        .add("level", n ? levelName(n->level) : "unknown")
        .add("node", smp.nodeDescription)
        .add("rail", n && n->rail >= 0 ? std::to_string(n->rail) : "")
        .add("remote_guid", smp.remote ? toString(smp.remote->node) : "")
        .add("remote_host", hostOf(t, remote))
        .add("remote_node", smp.remoteDescription)
        .add("remote_port", smp.remote ? std::to_string(smp.remote->port.value()) : "");
    infoOut.sampleU(kInfo.name, full, 1);
    rows.push_back({&smp, p, link, id.take()});
  }
  return rows;
}

bool ok(const PortRow& r) { return r.sample->status == telemetry::PortStatus::kOk; }

void writeCounters(MetricWriter& out, const MetricsOptions& options,
                   const std::vector<PortRow>& rows) {
  for (const auto& m : kCounters) {
    if (!options.exports(m.set)) continue;
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

void writeUtilization(MetricWriter& out, const ServiceState& s, const std::vector<PortRow>& rows) {
  out.family(kUtilization);
  std::string labels;
  for (const auto& r : rows) {
    const auto rates = ok(r) ? s.ratesOf(r.sample->key) : std::nullopt;
    if (!rates) continue;
    if (rates->txUtilization) {
      labels.assign(r.labels).append(",direction=\"transmit\"");
      out.sample(kUtilization.name, labels, *rates->txUtilization);
    }
    if (rates->rxUtilization) {
      labels.assign(r.labels).append(",direction=\"receive\"");
      out.sample(kUtilization.name, labels, *rates->rxUtilization);
    }
  }
}

void writeCongestion(MetricWriter& out, const ServiceState& s, const std::vector<PortRow>& rows) {
  out.family(kCongestion);
  for (const auto& r : rows) {
    const auto rates = ok(r) ? s.ratesOf(r.sample->key) : std::nullopt;
    if (rates && rates->congestion) out.sample(kCongestion.name, r.labels, *rates->congestion);
  }
}

/// The link set: the port's state and its link's active and expected data rates.
void writeLink(MetricWriter& out, const std::vector<PortRow>& rows) {
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
  out.family(kState);
  for (const auto& r : rows) {
    if (r.port) out.sampleU(kState.name, r.labels, static_cast<std::uint64_t>(r.port->state));
  }
}

class PortCollector final : public Collector {
 public:
  std::string_view name() const override { return "ports"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    const ServiceState& s = c.state;
    if (!s.counters || !s.counters->topology) return;
    std::string info;
    const auto rows = portRows(c, info);
    writeCounters(out, c.options, rows);
    if (c.options.exports(CounterSet::kUtilization)) writeUtilization(out, s, rows);
    if (c.options.exports(CounterSet::kCongestion)) writeCongestion(out, s, rows);
    if (c.options.exports(CounterSet::kLink)) writeLink(out, rows);
    out.family(kInfo);
    out.samples(info);
  }
};

}  // namespace

CollectorPtr portCollector() { return std::make_unique<PortCollector>(); }

}  // namespace ibfabric::api
