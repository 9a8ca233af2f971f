#include "api/metrics/metrics_text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>

#include "discovery/formats.h"
#include "telemetry/counter_sweep.h"

namespace ibfabric::api {
namespace {

using telemetry::Counter;

struct CounterMetric {
  Counter counter;
  const char* name;
  const char* help;
  std::uint64_t scale;
};

// Data counters count 4-octet units: exported in bytes.
constexpr std::array<CounterMetric, telemetry::kCounterCount> kPortCounters = {{
    {Counter::kXmitData, "ibfabric_port_transmit_bytes_total",
     "Bytes transmitted (PortXmitData x 4)", 4},
    {Counter::kRcvData, "ibfabric_port_receive_bytes_total", "Bytes received (PortRcvData x 4)", 4},
    {Counter::kXmitPkts, "ibfabric_port_transmit_packets_total", "Packets transmitted", 1},
    {Counter::kRcvPkts, "ibfabric_port_receive_packets_total", "Packets received", 1},
    {Counter::kSymbolErrors, "ibfabric_port_symbol_errors_total", "SymbolErrorCounter", 1},
    {Counter::kLinkErrorRecovery, "ibfabric_port_link_error_recovery_total",
     "LinkErrorRecoveryCounter", 1},
    {Counter::kLinkDowned, "ibfabric_port_link_downed_total", "LinkDownedCounter", 1},
    {Counter::kRcvErrors, "ibfabric_port_receive_errors_total", "PortRcvErrors", 1},
    {Counter::kRcvRemotePhysicalErrors, "ibfabric_port_receive_remote_physical_errors_total",
     "PortRcvRemotePhysicalErrors", 1},
    {Counter::kRcvSwitchRelayErrors, "ibfabric_port_receive_switch_relay_errors_total",
     "PortRcvSwitchRelayErrors", 1},
    {Counter::kXmitDiscards, "ibfabric_port_transmit_discards_total", "PortXmitDiscards", 1},
    {Counter::kXmitConstraintErrors, "ibfabric_port_transmit_constraint_errors_total",
     "PortXmitConstraintErrors", 1},
    {Counter::kRcvConstraintErrors, "ibfabric_port_receive_constraint_errors_total",
     "PortRcvConstraintErrors", 1},
    {Counter::kLocalLinkIntegrityErrors, "ibfabric_port_local_link_integrity_errors_total",
     "LocalLinkIntegrityErrors", 1},
    {Counter::kExcessiveBufferOverrunErrors, "ibfabric_port_excessive_buffer_overrun_errors_total",
     "ExcessiveBufferOverrunErrors", 1},
    {Counter::kVl15Dropped, "ibfabric_port_vl15_dropped_total", "VL15Dropped", 1},
    {Counter::kXmitWait, "ibfabric_port_transmit_wait_total",
     "PortXmitWait ticks (time with data to send but no credits)", 1},
}};

void head(std::string& out, std::string_view name, std::string_view help, std::string_view type) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n# TYPE ");
  out.append(name).append(" ").append(type).append("\n");
}

/// name{labels} value\n; `labels` already rendered (may be empty).
void sample(std::string& out, std::string_view name, std::string_view labels, double value) {
  out.append(name);
  if (!labels.empty()) out.append("{").append(labels).append("}");
  out.push_back(' ');
  appendValue(out, value);
  out.push_back('\n');
}

void sampleU(std::string& out, std::string_view name, std::string_view labels, std::uint64_t v) {
  out.append(name);
  if (!labels.empty()) out.append("{").append(labels).append("}");
  out.push_back(' ');
  char buf[24];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, p);
  out.push_back('\n');
}

void label(std::string& out, std::string_view name, std::string_view value) {
  if (!out.empty() && out.back() != '{') out.push_back(',');
  out.append(name).append("=\"");
  appendLabelValue(out, value);
  out.push_back('"');
}

std::string oneLabel(std::string_view name, std::string_view value) {
  std::string s;
  label(s, name, value);
  return s;
}

bool bothActive(const Topology& t, const Link& l) {
  const Port* a = t.port(l.a);
  const Port* b = t.port(l.b);
  return a && b && a->state == PortState::kActive && b->state == PortState::kActive;
}

/// Health of the links of the last evaluation, by either end.
std::map<telemetry::PortKey, telemetry::LinkState> healthByEnd(const ServiceState& s) {
  std::map<telemetry::PortKey, telemetry::LinkState> out;
  if (!s.health) return out;
  for (const auto& r : *s.health) {
    out[r.a] = r.state;
    out[r.b] = r.state;
  }
  return out;
}

}  // namespace

void appendValue(std::string& out, double value) {
  if (std::isnan(value)) {
    out.append("NaN");
    return;
  }
  if (std::isinf(value)) {
    out.append(value > 0 ? "+Inf" : "-Inf");
    return;
  }
  char buf[32];
  if (value == std::floor(value) && std::fabs(value) < 9.0e15) {
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<std::int64_t>(value));
    out.append(buf, p);
    return;
  }
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, p);
}

void appendLabelValue(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\') {
      out.append("\\\\");
    } else if (c == '"') {
      out.append("\\\"");
    } else if (c == '\n') {
      out.append("\\n");
    } else {
      out.push_back(c);
    }
  }
}

void appendFabricMetrics(std::string& out, const ServiceState& s) {
  if (!s.topology) return;
  const Topology& t = *s.topology;
  const TopologyComparison* cmp = s.comparison.get();
  const auto health = healthByEnd(s);

  std::size_t casActive = 0, casDown = 0;
  for (const Node& n : t.nodes()) {
    if (!n.isCa()) continue;
    bool active = false;
    for (const auto& p : n.ports) active = active || (p && p->state == PortState::kActive);
    ++(active ? casActive : casDown);
  }
  head(out, "ibfabric_fabric_switches",
       "Switches by state: active (in the last crawl), missing (expected, not in the crawl)",
       "gauge");
  sampleU(out, "ibfabric_fabric_switches", oneLabel("state", "active"), t.switchCount());
  sampleU(out, "ibfabric_fabric_switches", oneLabel("state", "missing"),
          cmp ? cmp->missingSwitches : 0);
  head(out, "ibfabric_fabric_cas",
       "Channel adapters by state: active (a port Active), down (no port Active), missing "
       "(expected, not in the crawl)",
       "gauge");
  sampleU(out, "ibfabric_fabric_cas", oneLabel("state", "active"), casActive);
  sampleU(out, "ibfabric_fabric_cas", oneLabel("state", "down"), casDown);
  sampleU(out, "ibfabric_fabric_cas", oneLabel("state", "missing"), cmp ? cmp->missingCas : 0);

  // Links: a partition (sum = cables). down: an end not Active; else by link health.
  std::size_t linkCount[4] = {0, 0, 0, 0};  // active, degraded, faulty, down
  for (const Link& l : t.links()) {
    if (!bothActive(t, l)) {
      ++linkCount[3];
      continue;
    }
    auto it = health.find({t.node(l.a.node).guid, l.a.port});
    const auto st = it == health.end() ? telemetry::LinkState::kOk : it->second;
    ++linkCount[st == telemetry::LinkState::kDegraded ? 1
                : st == telemetry::LinkState::kFaulty ? 2
                : st == telemetry::LinkState::kDown   ? 3
                                                      : 0];
  }
  head(out, "ibfabric_fabric_links",
       "Cables in the last crawl by state (a partition): active (both ends Active, healthy), "
       "degraded, faulty (link health), down (an end not Active)",
       "gauge");
  const char* linkStates[] = {"active", "degraded", "faulty", "down"};
  for (int i = 0; i < 4; ++i)
    sampleU(out, "ibfabric_fabric_links", oneLabel("state", linkStates[i]), linkCount[i]);

  // Hosts: the worst state of their HCAs' links (a link down counts as faulty).
  std::size_t hostCount[3] = {0, 0, 0};  // ok, degraded, faulty
  for (const Host& h : t.hosts()) {
    int worst = 0;
    for (NodeIndex i : h.hcas) {
      const Node& n = t.node(i);
      for (const auto& p : n.ports) {
        if (!p || !p->remote) continue;
        if (p->state != PortState::kActive) {
          worst = 2;
          continue;
        }
        auto it = health.find({n.guid, p->num});
        if (it == health.end()) continue;
        const int v = it->second == telemetry::LinkState::kDegraded ? 1
                      : it->second == telemetry::LinkState::kOk     ? 0
                                                                    : 2;
        worst = std::max(worst, v);
      }
    }
    ++hostCount[worst];
  }
  head(out, "ibfabric_fabric_hosts",
       "Hosts by the worst state of their HCA links: ok, degraded, faulty (faulty or down)",
       "gauge");
  const char* hostStates[] = {"ok", "degraded", "faulty"};
  for (int i = 0; i < 3; ++i)
    sampleU(out, "ibfabric_fabric_hosts", oneLabel("state", hostStates[i]), hostCount[i]);

  if (!cmp) return;
  head(out, "ibfabric_fabric_missing_nodes",
       "Nodes of the expected topology absent from the last crawl, by type", "gauge");
  sampleU(out, "ibfabric_fabric_missing_nodes", oneLabel("type", "switch"), cmp->missingSwitches);
  sampleU(out, "ibfabric_fabric_missing_nodes", oneLabel("type", "ca"), cmp->missingCas);
  sampleU(out, "ibfabric_fabric_missing_nodes", oneLabel("type", "router"), cmp->missingRouters);
  head(out, "ibfabric_fabric_missing_links",
       "Cables of the expected topology absent from the last crawl (between present nodes, or "
       "of missing nodes) or miswired",
       "gauge");
  const auto counts = cmp->result.counts();
  std::size_t missingLinks = counts.missingLinks + counts.miswired;
  // Cables of missing nodes: the expected cable count minus those found intact or accounted.
  // (intactLinks includes the cables at another rate than planned: they are there.)
  const std::size_t accounted = cmp->result.intactLinks + counts.missingLinks + counts.miswired;
  if (cmp->result.expectedLinks > accounted) missingLinks += cmp->result.expectedLinks - accounted;
  sampleU(out, "ibfabric_fabric_missing_links", "", missingLinks);
  head(out, "ibfabric_expected_node_present",
       "1 when the node of the expected topology is in the last crawl, else 0", "gauge");
  for (const auto& n : cmp->nodes) {
    std::string l;
    label(l, "guid", n.guid);
    label(l, "node", n.name);
    label(l, "type", n.type);
    sampleU(out, "ibfabric_expected_node_present", l, n.present ? 1 : 0);
  }
}

void appendPortMetrics(std::string& out, const ServiceState& s, const MetricsOptions& options) {
  if (!s.counters || !s.counters->topology) return;
  const Topology& t = *s.counters->topology;

  struct PortRow {
    const telemetry::PortSample* sample;
    const Port* port;
    const Link* link;
    std::string labels;
  };
  std::vector<PortRow> rows;
  rows.reserve(s.counters->ports.size());
  std::string info;  // ibfabric_port_info samples
  for (const auto& smp : s.counters->ports) {
    if (smp.status == telemetry::PortStatus::kGone) continue;
    const Node* n = t.findNode(smp.key.node);
    const Port* p = n ? n->port(smp.key.port) : nullptr;
    const Link* link = p && p->link && *p->link < t.links().size() ? &t.links()[*p->link] : nullptr;
    const std::string level = n ? std::string(levelName(n->level)) : "unknown";
    const std::string host = n && n->host ? t.hosts()[*n->host].name : "";
    const std::string rail = n && n->rail >= 0 ? std::to_string(n->rail) : "";
    const std::string remoteGuid = smp.remote ? toString(smp.remote->node) : "";
    const std::string remotePort = smp.remote ? std::to_string(smp.remote->port.value()) : "";
    // Labels in name order (as prometheus-cpp wrote them before).
    std::string full;
    label(full, "guid", toString(smp.key.node));
    label(full, "host", host);
    label(full, "level", level);
    label(full, "node", smp.nodeDescription);
    label(full, "port", std::to_string(smp.key.port.value()));
    label(full, "rail", rail);
    label(full, "remote_guid", remoteGuid);
    label(full, "remote_node", smp.remoteDescription);
    label(full, "remote_port", remotePort);
    sample(info, "ibfabric_port_info", full, 1);
    std::string labels = full;
    if (!options.fullPortLabels) {
      labels.clear();
      label(labels, "guid", toString(smp.key.node));
      label(labels, "level", level);
      label(labels, "port", std::to_string(smp.key.port.value()));
    }
    rows.push_back({&smp, p, link, std::move(labels)});
  }
  const auto ok = [](const PortRow& r) { return r.sample->status == telemetry::PortStatus::kOk; };

  for (const auto& m : kPortCounters) {
    head(out, m.name, m.help, "counter");
    for (const auto& r : rows) {
      if (!ok(r) || !r.sample->counters.has(m.counter)) continue;
      const std::uint64_t v = r.sample->counters.get(m.counter);
      if (m.scale == 1 || v <= UINT64_MAX / m.scale) {
        sampleU(out, m.name, r.labels, v * m.scale);
      } else {
        sample(out, m.name, r.labels, static_cast<double>(v) * static_cast<double>(m.scale));
      }
    }
  }
  head(out, "ibfabric_port_utilization_ratio",
       "Data rate over the link's data rate in the last interval", "gauge");
  for (const auto& r : rows) {
    const auto* rates = ok(r) ? s.ratesOf(r.sample->key) : nullptr;
    if (!rates) continue;
    if (rates->txUtilization)
      sample(out, "ibfabric_port_utilization_ratio", "direction=\"transmit\"," + r.labels,
             *rates->txUtilization);
    if (rates->rxUtilization)
      sample(out, "ibfabric_port_utilization_ratio", "direction=\"receive\"," + r.labels,
             *rates->rxUtilization);
  }
  head(out, "ibfabric_port_congestion_ratio",
       "Fraction of the last interval spent waiting (PortXmitWait)", "gauge");
  for (const auto& r : rows) {
    const auto* rates = ok(r) ? s.ratesOf(r.sample->key) : nullptr;
    if (rates && rates->congestion)
      sample(out, "ibfabric_port_congestion_ratio", r.labels, *rates->congestion);
  }
  head(out, "ibfabric_port_link_data_rate_bytes_per_second",
       "Active data rate of the port's link (encoding overhead removed)", "gauge");
  for (const auto& r : rows) {
    if (ok(r) && r.sample->rate)
      sample(out, "ibfabric_port_link_data_rate_bytes_per_second", r.labels,
             r.sample->rate->dataGbps() * 1e9 / 8);
  }
  head(out, "ibfabric_port_link_expected_data_rate_bytes_per_second",
       "Data rate the link should run at: the best rate both ends enable", "gauge");
  for (const auto& r : rows) {
    if (r.link && r.link->enabledRate)
      sample(out, "ibfabric_port_link_expected_data_rate_bytes_per_second", r.labels,
             r.link->enabledRate->dataGbps() * 1e9 / 8);
  }
  head(out, "ibfabric_port_link_degraded",
       "1 when the port's link runs below the rate both ends enable", "gauge");
  for (const auto& r : rows) {
    if (r.link) sampleU(out, "ibfabric_port_link_degraded", r.labels, r.link->belowEnabled());
  }
  head(out, "ibfabric_port_state_id",
       "PortInfo PortState of the port: 1 Down, 2 Init, 3 Armed, 4 Active", "gauge");
  for (const auto& r : rows) {
    if (r.port)
      sampleU(out, "ibfabric_port_state_id", r.labels, static_cast<std::uint64_t>(r.port->state));
  }
  head(out, "ibfabric_port_info",
       "Descriptive labels of every polled port (value 1): node, level, host, rail, remote end",
       "gauge");
  out.append(info);

  // Per link, from the last sweep's health evaluation.
  if (!s.health) return;
  std::string healthText, degradedText;
  for (const auto& r : *s.health) {
    const Node* a = t.findNode(r.a.node);
    const Node* b = t.findNode(r.b.node);
    std::string l;
    label(l, "guid", toString(r.a.node));
    label(l, "level",
          levelName(std::max(a ? a->level : kUnknownLevel, b ? b->level : kUnknownLevel)));
    label(l, "node", r.aDescription);
    label(l, "port", std::to_string(r.a.port.value()));
    label(l, "remote_guid", toString(r.b.node));
    label(l, "remote_node", r.bDescription);
    label(l, "remote_port", std::to_string(r.b.port.value()));
    sampleU(healthText, "ibfabric_link_health_id", l, static_cast<std::uint64_t>(r.state));
    const bool below = r.link < t.links().size() && t.links()[r.link].belowEnabled();
    sampleU(degradedText, "ibfabric_link_degraded", l, below ? 1 : 0);
  }
  head(out, "ibfabric_link_health_id", "Link health: 0 ok, 1 degraded, 2 faulty, 3 down", "gauge");
  out.append(healthText);
  head(out, "ibfabric_link_degraded", "1 when the link runs below the rate both ends enable",
       "gauge");
  out.append(degradedText);
}

}  // namespace ibfabric::api
