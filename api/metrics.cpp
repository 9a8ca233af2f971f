#include "api/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <array>
#include <map>

#include "api/osm_views.h"
#include "discovery/formats.h"
#include "telemetry/counter_sweep.h"

namespace ibfabric::api {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::Labels;
using telemetry::Counter;

struct CounterMetric {
  Counter counter;
  const char* name;
  const char* help;
  double scale;
};

// Data counters count 4-octet units: exported in bytes.
constexpr std::array<CounterMetric, telemetry::kCounterCount> kPortCounters = {{
    {Counter::kXmitData, "ibfabric_port_transmit_bytes_total",
     "Bytes transmitted (PortXmitData x 4)", 4.0},
    {Counter::kRcvData, "ibfabric_port_receive_bytes_total", "Bytes received (PortRcvData x 4)",
     4.0},
    {Counter::kXmitPkts, "ibfabric_port_transmit_packets_total", "Packets transmitted", 1.0},
    {Counter::kRcvPkts, "ibfabric_port_receive_packets_total", "Packets received", 1.0},
    {Counter::kSymbolErrors, "ibfabric_port_symbol_errors_total", "SymbolErrorCounter", 1.0},
    {Counter::kLinkErrorRecovery, "ibfabric_port_link_error_recovery_total",
     "LinkErrorRecoveryCounter", 1.0},
    {Counter::kLinkDowned, "ibfabric_port_link_downed_total", "LinkDownedCounter", 1.0},
    {Counter::kRcvErrors, "ibfabric_port_receive_errors_total", "PortRcvErrors", 1.0},
    {Counter::kRcvRemotePhysicalErrors, "ibfabric_port_receive_remote_physical_errors_total",
     "PortRcvRemotePhysicalErrors", 1.0},
    {Counter::kRcvSwitchRelayErrors, "ibfabric_port_receive_switch_relay_errors_total",
     "PortRcvSwitchRelayErrors", 1.0},
    {Counter::kXmitDiscards, "ibfabric_port_transmit_discards_total", "PortXmitDiscards", 1.0},
    {Counter::kXmitConstraintErrors, "ibfabric_port_transmit_constraint_errors_total",
     "PortXmitConstraintErrors", 1.0},
    {Counter::kRcvConstraintErrors, "ibfabric_port_receive_constraint_errors_total",
     "PortRcvConstraintErrors", 1.0},
    {Counter::kLocalLinkIntegrityErrors, "ibfabric_port_local_link_integrity_errors_total",
     "LocalLinkIntegrityErrors", 1.0},
    {Counter::kExcessiveBufferOverrunErrors, "ibfabric_port_excessive_buffer_overrun_errors_total",
     "ExcessiveBufferOverrunErrors", 1.0},
    {Counter::kVl15Dropped, "ibfabric_port_vl15_dropped_total", "VL15Dropped", 1.0},
    {Counter::kXmitWait, "ibfabric_port_transmit_wait_total",
     "PortXmitWait ticks (time with data to send but no credits)", 1.0},
}};

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

double epoch(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

Labels portLabels(const Topology& t, const telemetry::PortSample& s) {
  Labels l{{"guid", toString(s.key.node)},
           {"port", std::to_string(s.key.port.value())},
           {"node", s.nodeDescription},
           {"level", "unknown"},
           {"host", ""},
           {"rail", ""},
           {"remote_guid", ""},
           {"remote_port", ""},
           {"remote_node", s.remoteDescription}};
  if (const Node* n = t.findNode(s.key.node)) {
    l["level"] = levelName(n->level);
    if (n->host) l["host"] = t.hosts()[*n->host].name;
    if (n->rail >= 0) l["rail"] = std::to_string(n->rail);
  }
  if (s.remote) {
    l["remote_guid"] = toString(s.remote->node);
    l["remote_port"] = std::to_string(s.remote->port.value());
  }
  return l;
}

}  // namespace

std::string renderMetrics(const ServiceState& s, const telemetry::EventLog& events) {
  auto registry = std::make_shared<prometheus::Registry>();

  // Service health.
  auto& success = BuildGauge()
                      .Name("ibfabric_collector_success")
                      .Help("1 when the collector's last attempt succeeded")
                      .Register(*registry);
  success.Add({{"collector", "crawl"}})
      .Set(s.crawl.lastSuccess && s.crawl.lastError.empty() ? 1 : 0);
  success.Add({{"collector", "sweep"}})
      .Set(s.sweep.lastSuccess && s.sweep.lastError.empty() ? 1 : 0);
  BuildGauge()
      .Name("ibfabric_ready")
      .Help("1 once the first crawl and the first sweep are done")
      .Register(*registry)
      .Add({})
      .Set(s.ready() ? 1 : 0);
  auto& failures = BuildCounter()
                       .Name("ibfabric_collector_failures_total")
                       .Help("Failed attempts per collector")
                       .Register(*registry);
  failures.Add({{"collector", "crawl"}}).Increment(static_cast<double>(s.crawl.failures));
  failures.Add({{"collector", "sweep"}}).Increment(static_cast<double>(s.sweep.failures));
  if (s.crawl.lastSuccess) {
    BuildGauge()
        .Name("ibfabric_crawl_duration_seconds")
        .Help("Duration of the last successful crawl")
        .Register(*registry)
        .Add({})
        .Set(seconds(s.crawl.lastDuration));
    BuildGauge()
        .Name("ibfabric_last_crawl_timestamp_seconds")
        .Help("When the last successful crawl finished (Unix time)")
        .Register(*registry)
        .Add({})
        .Set(epoch(*s.crawl.lastSuccess));
  }
  if (s.sweep.lastSuccess) {
    BuildGauge()
        .Name("ibfabric_sweep_duration_seconds")
        .Help("Duration of the last successful counter sweep")
        .Register(*registry)
        .Add({})
        .Set(seconds(s.sweep.lastDuration));
    BuildGauge()
        .Name("ibfabric_last_sweep_timestamp_seconds")
        .Help("When the last successful counter sweep finished (Unix time)")
        .Register(*registry)
        .Add({})
        .Set(epoch(*s.sweep.lastSuccess));
  }
  if (s.engine) {
    BuildCounter()
        .Name("ibfabric_mad_sent_total")
        .Help("MADs sent by the sweep engine (attempts, retries included)")
        .Register(*registry)
        .Add({})
        .Increment(static_cast<double>(s.engine->sent));
    BuildCounter()
        .Name("ibfabric_mad_timeouts_total")
        .Help("MAD attempts that timed out")
        .Register(*registry)
        .Add({})
        .Increment(static_cast<double>(s.engine->timeouts));
    BuildCounter()
        .Name("ibfabric_mad_retries_total")
        .Help("MAD re-sends")
        .Register(*registry)
        .Add({})
        .Increment(static_cast<double>(s.engine->retries));
  }
  auto& eventFamily = BuildCounter()
                          .Name("ibfabric_events_total")
                          .Help("Events appended to the event log since the daemon started")
                          .Register(*registry);
  for (const auto& [type, count] : s.eventsByType)
    eventFamily.Add({{"type", type}}).Increment(static_cast<double>(count));
  BuildGauge()
      .Name("ibfabric_events_last_id")
      .Help("Id of the newest event (for /api/v1/events?since=)")
      .Register(*registry)
      .Add({})
      .Set(static_cast<double>(events.lastId()));

  // Fabric size.
  if (s.topology) {
    const Topology& t = *s.topology;
    auto gauge = [&](const char* name, const char* help, double v) {
      BuildGauge().Name(name).Help(help).Register(*registry).Add({}).Set(v);
    };
    gauge("ibfabric_fabric_switches", "Switches in the last crawl",
          static_cast<double>(t.switchCount()));
    gauge("ibfabric_fabric_cas", "Channel adapters in the last crawl",
          static_cast<double>(t.caCount()));
    gauge("ibfabric_fabric_hosts", "Hosts in the last crawl",
          static_cast<double>(t.hosts().size()));
    std::size_t active = 0;
    for (const Link& l : t.links()) {
      const Port* a = t.port(l.a);
      const Port* b = t.port(l.b);
      if (a && b && a->state == PortState::kActive && b->state == PortState::kActive) ++active;
    }
    auto& links = BuildGauge()
                      .Name("ibfabric_fabric_links")
                      .Help("Cables in the last crawl by port state (active: both ends Active)")
                      .Register(*registry);
    links.Add({{"state", "active"}}).Set(static_cast<double>(active));
    links.Add({{"state", "down"}}).Set(static_cast<double>(t.links().size() - active));

    auto& info = BuildGauge()
                     .Name("ibfabric_node_info")
                     .Help("Identity of every node (value 1)")
                     .Register(*registry);
    for (const Node& n : t.nodes()) {
      info.Add({{"guid", toString(n.guid)},
                {"node", n.description},
                {"type", n.isSwitch() ? "switch"
                         : n.isCa()   ? "ca"
                                      : "router"},
                {"level", levelName(n.level)},
                {"lid", std::to_string(n.lid().value())},
                {"host", n.host ? t.hosts()[*n.host].name : ""},
                {"rail", n.rail >= 0 ? std::to_string(n.rail) : ""}})
          .Set(1);
    }
  }

  // Per port, from the last sweep.
  if (s.counters && s.counters->topology) {
    const Topology& t = *s.counters->topology;
    std::vector<prometheus::Family<prometheus::Counter>*> families;
    for (const auto& m : kPortCounters)
      families.push_back(&BuildCounter().Name(m.name).Help(m.help).Register(*registry));
    auto& util = BuildGauge()
                     .Name("ibfabric_port_utilization_ratio")
                     .Help("Data rate over the link's data rate in the last interval")
                     .Register(*registry);
    auto& congestion = BuildGauge()
                           .Name("ibfabric_port_congestion_ratio")
                           .Help("Fraction of the last interval spent waiting (PortXmitWait)")
                           .Register(*registry);
    auto& rate = BuildGauge()
                     .Name("ibfabric_port_link_data_rate_bytes_per_second")
                     .Help("Active data rate of the port's link (encoding overhead removed)")
                     .Register(*registry);
    auto& state = BuildGauge()
                      .Name("ibfabric_port_state_id")
                      .Help("PortInfo PortState of the port: 1 Down, 2 Init, 3 Armed, 4 Active")
                      .Register(*registry);
    for (const auto& sample : s.counters->ports) {
      if (sample.status == telemetry::PortStatus::kGone) continue;
      Labels labels = portLabels(t, sample);
      if (const Node* n = t.findNode(sample.key.node)) {
        if (const Port* p = n->port(sample.key.port))
          state.Add(labels).Set(static_cast<double>(p->state));
      }
      if (sample.status != telemetry::PortStatus::kOk) continue;
      for (std::size_t i = 0; i < kPortCounters.size(); ++i) {
        const auto& m = kPortCounters[i];
        if (!sample.counters.has(m.counter)) continue;
        families[i]->Add(labels).Increment(static_cast<double>(sample.counters.get(m.counter)) *
                                           m.scale);
      }
      if (sample.rate) rate.Add(labels).Set(sample.rate->dataGbps() * 1e9 / 8);
      if (const auto* r = s.ratesOf(sample.key)) {
        if (r->txUtilization) {
          Labels l = labels;
          l["direction"] = "transmit";
          util.Add(l).Set(*r->txUtilization);
        }
        if (r->rxUtilization) {
          Labels l = labels;
          l["direction"] = "receive";
          util.Add(l).Set(*r->rxUtilization);
        }
        if (r->congestion) congestion.Add(labels).Set(*r->congestion);
      }
    }
  }

  // Per link, from the last sweep's health evaluation.
  if (s.health && s.counters && s.counters->topology) {
    const Topology& t = *s.counters->topology;
    auto& health = BuildGauge()
                       .Name("ibfabric_link_health_id")
                       .Help("Link health: 0 ok, 1 degraded, 2 faulty, 3 down")
                       .Register(*registry);
    auto& degraded = BuildGauge()
                         .Name("ibfabric_link_degraded")
                         .Help("1 when the link runs below the rate both ends enable")
                         .Register(*registry);
    for (const auto& r : *s.health) {
      const Node* a = t.findNode(r.a.node);
      const Node* b = t.findNode(r.b.node);
      Labels labels{{"guid", toString(r.a.node)},
                    {"port", std::to_string(r.a.port.value())},
                    {"node", r.aDescription},
                    {"remote_guid", toString(r.b.node)},
                    {"remote_port", std::to_string(r.b.port.value())},
                    {"remote_node", r.bDescription},
                    {"level", levelName(std::max(a ? a->level : kUnknownLevel,
                                                 b ? b->level : kUnknownLevel))}};
      health.Add(labels).Set(static_cast<double>(r.state));
      const bool below = r.link < t.links().size() && t.links()[r.link].belowEnabled();
      degraded.Add(labels).Set(below ? 1 : 0);
    }
  }

  addOsmMetrics(*registry, s.osm);
  return prometheus::TextSerializer().Serialize(registry->Collect());
}

}  // namespace ibfabric::api
