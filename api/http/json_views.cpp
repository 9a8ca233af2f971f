#include "api/http/json_views.h"

#include "api/http/ha_json.h"

#include "discovery/fabric_memory.h"
#include "discovery/formats.h"
#include "telemetry/port_rates.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using telemetry::Counter;
using telemetry::PortKey;

json optNum(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json timeJson(const std::optional<std::chrono::system_clock::time_point>& t) {
  return t ? json(epochSeconds(*t)) : json(nullptr);
}

json activityJson(const ActivityStatus& a, std::chrono::system_clock::time_point now) {
  json j = {{"runs", a.runs},
            {"failures", a.failures},
            {"consecutive_failures", a.consecutiveFailures},
            {"last_attempt", timeJson(a.lastAttempt)},
            {"last_success", timeJson(a.lastSuccess)},
            {"last_duration_seconds", std::chrono::duration<double>(a.lastDuration).count()},
            {"last_error", a.lastError.empty() ? json(nullptr) : json(a.lastError)},
            {"next_attempt", timeJson(a.nextAttempt)},
            {"in_progress_since", timeJson(a.inProgressSince)}};
  j["age_seconds"] =
      a.lastSuccess ? json(std::chrono::duration<double>(now - *a.lastSuccess).count()) : json();
  return j;
}

json endJson(const Topology& t, PortRef r) {
  const Node& n = t.node(r.node);
  return {{"guid", toString(n.guid)}, {"node", n.description}, {"port", r.port.value()}};
}

/// When `s`'s newest good reading was taken (wall clock, from the snapshot's two clocks); nullopt
/// when no sweep read it.
std::optional<std::chrono::system_clock::time_point> lastOkTime(
    const telemetry::CounterSnapshot& snap, const telemetry::PortSample& s) {
  if (s.lastOk == mad::Clock::time_point{}) return std::nullopt;
  return snap.wallTime -
         std::chrono::duration_cast<std::chrono::system_clock::duration>(snap.finished - s.lastOk);
}

/// A port end's reading in the last sweep: its status and, when it was not read this time
/// (stale), since when what is shown of it is.
json readingJson(const ServiceState& s, PortKey key) {
  const telemetry::PortSample* sample = s.counters ? s.counters->find(key) : nullptr;
  if (!sample) return json();
  return {{"status", std::string(toString(sample->status))},
          {"stale", sample->stale()},
          {"last_ok_time", timeJson(lastOkTime(*s.counters, *sample))}};
}

json ratesJson(const telemetry::PortRates& r) {
  json deltas = json::object();
  for (Counter c : telemetry::kAllCounters) {
    const auto& d = r[c];
    json x = {{"state", std::string(toString(d.state))}};
    if (d.ok()) {
      x["delta"] = d.delta;
      x["per_second"] = d.perSecond;
    }
    deltas[std::string(toString(c))] = x;
  }
  return {{"interval_seconds", r.intervalSeconds},
          {"tx_bytes_per_second", optNum(r.txBytesPerSecond)},
          {"rx_bytes_per_second", optNum(r.rxBytesPerSecond)},
          {"tx_packets_per_second", optNum(r.txPacketsPerSecond)},
          {"rx_packets_per_second", optNum(r.rxPacketsPerSecond)},
          {"tx_utilization", optNum(r.txUtilization)},
          {"rx_utilization", optNum(r.rxUtilization)},
          {"congestion", optNum(r.congestion)},
          {"xmit_wait_tick_seconds", r.xmitWaitTickSeconds},
          {"xmit_wait_tick_source", r.xmitWaitTickFromDevice ? "device" : "default"},
          {"counters", deltas}};
}

json countersJson(const telemetry::CounterValues& v) {
  json j = json::object();
  for (Counter c : telemetry::kAllCounters)
    if (v.has(c)) j[std::string(toString(c))] = v.get(c);
  return j;
}

json healthReportJson(const telemetry::LinkHealthReport& r) {
  json reasons = json::array();
  for (const auto& x : r.reasons)
    reasons.push_back({{"code", x.code},
                       {"guid", toString(x.port.node)},
                       {"port", x.port.port.value()},
                       {"text", x.text}});
  return {{"state", std::string(toString(r.state))},
          {"congestion", optNum(r.congestion)},
          {"reasons", reasons}};
}

/// The sweeps' MAD engine in /health: its policy, where the windows, timeout, retry budget and
/// breakers stand, and the counters that say whether MADs are being lost.
json madEngineJson(const mad::MadEngineStats& e) {
  auto seconds = [](std::chrono::nanoseconds d) {
    return std::chrono::duration<double>(d).count();
  };
  return {{"policy", mad::toString(e.policy)},
          {"window", e.window},
          {"window_max", e.windowMax},
          {"max_in_flight", e.maxInFlight},
          {"rtt_smoothed_seconds", seconds(e.srtt)},
          {"timeout_seconds", seconds(e.rto)},
          {"sent", e.sent},
          {"timeouts", e.timeouts},
          {"lost_reported", e.lostReported},
          {"retries", e.retries},
          {"retries_refused", e.retriesRefused},
          {"spurious_timeouts", e.spuriousTimeouts},
          {"retry_tokens", e.retryTokens},
          {"breaker_open_targets", e.openBreakers},
          {"breaker_opens", e.breakerOpens},
          {"failed", e.failed},
          {"target_down", e.targetDown}};
}

json storeJson(const StoreStatus& st) {
  if (!st.enabled) return {{"enabled", false}};
  return {{"enabled", true},
          {"path", st.path},
          {"moved_aside", st.movedAside.empty() ? json() : json(st.movedAside)},
          {"moved_aside_reason", st.movedAsideReason.empty() ? json() : json(st.movedAsideReason)},
          {"restored_events", st.restoredEvents},
          {"skipped_events", st.skippedEvents},
          {"events_written", st.eventsWritten},
          {"last_written_id", st.lastWrittenId},
          {"events_pruned", st.eventsPruned},
          {"events_missed", st.eventsMissed},
          {"writes", st.writes},
          {"write_failures", st.writeFailures},
          {"consecutive_failures", st.consecutiveFailures},
          {"last_error", st.lastError.empty() ? json() : json(st.lastError)},
          {"last_write", timeJson(st.lastWrite)},
          {"last_write_seconds", st.lastWriteSeconds},
          {"fabric",
           {{"restored_nodes", st.restoredNodes},
            {"restored_cables", st.restoredCables},
            {"writes", st.fabricWrites},
            {"rows_written", st.fabricRowsWritten}}}};
}

}  // namespace

double epochSeconds(std::chrono::system_clock::time_point t) {
  return static_cast<double>(
             std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count()) /
         1000.0;
}

const telemetry::LinkHealthReport* findHealth(const ServiceState& state, Guid a, PortNum pa) {
  if (!state.health) return nullptr;
  for (const auto& r : *state.health)
    if ((r.a.node == a && r.a.port == pa) || (r.b.node == a && r.b.port == pa)) return &r;
  return nullptr;
}

json healthJson(const ServiceState& s, std::chrono::system_clock::time_point now) {
  // A store that cannot be written loses events at the next restart: degraded, not ready-only.
  const bool failing = s.crawl.consecutiveFailures > 0 || s.sweep.consecutiveFailures > 0 ||
                       s.store.consecutiveFailures > 0;
  json j = {{"status", s.subnet.waiting                  ? "waiting_for_subnet"
                       : warmStandby(s)                  ? "standby"
                       : !s.ready()                      ? "starting"
                       : failing || s.crawlCheck.suspect ? "degraded"
                                                         : "ready"},
            {"ready", s.ready()},
            {"live", true},
            {"started", epochSeconds(s.started)},
            {"uptime_seconds", std::chrono::duration<double>(now - s.started).count()},
            {"crawl", activityJson(s.crawl, now)},
            {"sweep", activityJson(s.sweep, now)}};
  j["osm"] = osmJson(s.osm, now);
  j["sm_traps"] = trapsJson(s.traps);
  if (!s.sweepSource.empty()) j["sweep"]["source"] = s.sweepSource;
  if (s.routes.lastAttempt) j["routes"] = activityJson(s.routes, now);
  if (s.topology) j["crawl"]["source"] = s.topology->stats().source;
  j["crawl"]["suspect"] = s.crawlCheck.suspect;
  j["crawl"]["suspect_total"] = s.crawlCheck.suspectTotal;
  j["crawl"]["implausible_retries"] = s.crawlCheck.retries;
  if (!s.crawlCheck.reason.empty()) j["crawl"]["suspect_reason"] = s.crawlCheck.reason;
  j["subnet"] = {{"waiting", s.subnet.waiting},
                 {"local_lid", s.subnet.localLid},
                 {"sm_lid", s.subnet.smLid},
                 {"port_state", s.subnet.portState}};
  if (s.subnet.waiting) j["subnet"]["reason"] = s.subnet.reason;
  j["subnet"].update(subnetIdentityJson(s));  // name, prefix, sm_guid (api/http/ha_json.h)
  j["role"] = std::string(toString(s.ha.role));
  j["ha"] = haJson(s);
  j["snapshot_age_seconds"] = snapshotAgeJson(s, now);
  j["sweep"]["counter_source_starts"] = s.counterSourceStarts;
  j["sweep"]["counter_source_restarts"] = s.counterSourceRestarts;
  if (s.engine) j["mad"] = madEngineJson(*s.engine);
  j["store"] = storeJson(s.store);
  if (s.counters) {
    j["sweep"]["sequence"] = s.counters->sequence;
    j["sweep"]["ports"] = s.counters->stats.ports;
    j["sweep"]["ports_ok"] = s.counters->stats.portsOk;
    j["sweep"]["ports_stale"] = s.counters->stats.portsStale;
  }
  return j;
}

json topologySummaryJson(const ServiceState& s, std::chrono::system_clock::time_point now) {
  const Topology& t = *s.topology;
  std::map<std::string, std::size_t> switchesPerLevel, linksByState;
  for (const Node& n : t.nodes())
    if (n.isSwitch()) ++switchesPerLevel[levelName(n.level)];
  std::size_t belowEnabled = 0;
  for (const Link& l : t.links()) {
    ++linksByState[t.activity(l) == LinkActivity::kActive ? "active" : "down"];
    if (l.belowEnabled()) ++belowEnabled;
  }
  const MissingCounts missing = countMissing(t);
  json j = {
      {"source", t.stats().source},
      {"switches", t.switchCount()},
      {"cas", t.caCount()},
      {"routers", t.routerCount()},
      {"links", t.links().size()},
      {"hosts", t.hosts().size()},
      {"rails", t.rails().size()},
      {"rail_optimized", t.railOptimized()},
      {"groups", t.groups().size()},
      {"max_level", t.maxLevel()},
      {"missing",
       {{"switches", missing.switches},
        {"cas", missing.cas},
        {"routers", missing.routers},
        {"links", missing.links}}},
      {"switches_per_level", switchesPerLevel},
      {"links_by_state", linksByState},
      {"links_below_enabled", belowEnabled},
      {"crawl_seconds", std::chrono::duration<double>(t.stats().crawlTime).count()},
      {"age_seconds", s.crawl.lastSuccess
                          ? json(std::chrono::duration<double>(now - *s.crawl.lastSuccess).count())
                          : json()}};
  j["subnet"] = subnetIdentityJson(s);
  j["role"] = std::string(toString(s.ha.role));
  return j;
}

json nodeBriefJson(const Topology& t, const Node& n, const ServiceState& s) {
  json j = {{"guid", toString(n.guid)},         {"subnet", subnetTagJson(s)},
            {"type", nodeTypeName(n.type)},     {"description", n.description},
            {"lid", n.lid().value()},           {"level", n.level},
            {"level_name", levelName(n.level)}, {"num_ports", n.numPorts},
            {"missing", absenceJson(n.missing)}};
  if (n.host) j["host"] = t.hosts()[*n.host].name;
  if (n.rail >= 0) j["rail"] = n.rail;
  return j;
}

json nodeJson(const Topology& t, const Node& n, const ServiceState& s) {
  json j = nodeBriefJson(t, n, s);
  j["node_description"] = n.nodeDescription;
  j["sys_image_guid"] = toString(n.sysImageGuid);
  j["vendor_id"] = n.vendorId;
  j["device_id"] = n.deviceId;
  j["revision"] = n.revision;
  j["hca_index"] = n.hcaIndex;
  j["group"] = n.group;
  json ports = json::array();
  for (const auto& p : n.ports) {
    if (!p) continue;
    json jp = {{"num", p->num.value()},
               {"guid", toString(p->guid)},
               {"lid", p->lid.value()},
               {"state", std::string(toString(p->state))},
               {"phys_state", std::string(toString(p->physState))},
               {"active_rate", p->activeRate ? json(p->activeRate->toString()) : json()},
               {"direction", std::string(toString(p->direction))},
               {"remote", p->remote ? endJson(t, *p->remote) : json()}};
    ports.push_back(std::move(jp));
  }
  j["ports"] = std::move(ports);
  return j;
}

json hostBriefJson(const Topology& t, const Host& h, const ServiceState& s) {
  json hcas = json::array();
  for (NodeIndex i : h.hcas) hcas.push_back(toString(t.node(i).guid));
  return {{"name", h.name}, {"subnet", subnetTagJson(s)}, {"hcas", hcas}};
}

json hostJson(const Topology& t, const Host& h, const ServiceState& s) {
  json hcas = json::array();
  std::set<std::string> leaves;
  std::set<int> rails;
  for (NodeIndex i : h.hcas) {
    const Node& n = t.node(i);
    json ports = json::array();
    for (const auto& p : n.ports) {
      if (!p || !p->remote) continue;
      const Node& leaf = t.node(p->remote->node);
      leaves.insert(leaf.description);
      const auto* health = findHealth(s, n.guid, p->num);
      ports.push_back({{"port", p->num.value()},
                       {"state", std::string(toString(p->state))},
                       {"active_rate", p->activeRate ? json(p->activeRate->toString()) : json()},
                       {"leaf", endJson(t, *p->remote)},
                       {"health", health ? healthReportJson(*health) : json()}});
    }
    if (n.rail >= 0) rails.insert(n.rail);
    hcas.push_back({{"guid", toString(n.guid)},
                    {"description", n.description},
                    {"hca_index", n.hcaIndex},
                    {"rail", n.rail},
                    {"missing", absenceJson(n.missing)},
                    {"ports", ports}});
  }
  return {{"name", h.name},
          {"subnet", subnetTagJson(s)},
          {"sys_image_guid", toString(h.sysImageGuid)},
          {"named_from_description", h.namedFromDescription},
          {"hcas", hcas},
          {"rails", rails},
          {"leaves", leaves}};
}

std::string_view linkStateName(const Link& link, LinkActivity activity,
                               const telemetry::LinkHealthReport* health) {
  if (activity != LinkActivity::kActive) return toString(activity);
  if (health) return telemetry::toString(health->state);
  return link.belowEnabled() ? "degraded" : "ok";
}

json linkJson(const Topology& t, std::uint32_t index, const ServiceState& s) {
  const Link& l = t.links()[index];
  return linkJson(t, index, s, findHealth(s, t.node(l.a.node).guid, l.a.port));
}

json linkJson(const Topology& t, std::uint32_t index, const ServiceState& s,
              const telemetry::LinkHealthReport* health) {
  const Link& l = t.links()[index];
  const Node& na = t.node(l.a.node);
  const Node& nb = t.node(l.b.node);
  const LinkActivity activity = t.activity(l);
  json j = {{"subnet", subnetTagJson(s)},
            {"a", endJson(t, l.a)},
            {"b", endJson(t, l.b)},
            {"level", std::max(na.level, nb.level)},
            {"level_name", levelName(std::max(na.level, nb.level))},
            {"port_state", toString(activity)},
            {"rate", l.rate ? json(l.rate->toString()) : json()},
            {"enabled_rate", l.enabledRate ? json(l.enabledRate->toString()) : json()},
            {"below_enabled", l.belowEnabled()},
            {"missing", absenceJson(l.missing)}};
  j["health"] = health ? healthReportJson(*health) : json();
  j["state"] = linkStateName(l, activity, health);
  auto side = [&](const Node& n, PortNum p) -> json {
    const auto r = s.ratesOf(PortKey{n.guid, p});
    if (!r) return json();
    return {{"tx_bytes_per_second", optNum(r->txBytesPerSecond)},
            {"rx_bytes_per_second", optNum(r->rxBytesPerSecond)},
            {"tx_utilization", optNum(r->txUtilization)},
            {"rx_utilization", optNum(r->rxUtilization)},
            {"congestion", optNum(r->congestion)}};
  };
  j["a"]["rates"] = side(na, l.a.port);
  j["b"]["rates"] = side(nb, l.b.port);
  j["a"]["reading"] = readingJson(s, PortKey{na.guid, l.a.port});
  j["b"]["reading"] = readingJson(s, PortKey{nb.guid, l.b.port});
  return j;
}

json portJson(const Topology& t, PortRef ref, const ServiceState& s,
              const telemetry::CounterHistory& history) {
  const Node& n = t.node(ref.node);
  const Port* p = t.port(ref);
  json j = {{"guid", toString(n.guid)},
            {"node", n.description},
            {"port", ref.port.value()},
            {"port_guid", toString(p->guid)},
            {"lid", p->lid.value()},
            {"level", n.level},
            {"state", std::string(toString(p->state))},
            {"phys_state", std::string(toString(p->physState))},
            {"active_rate", p->activeRate ? json(p->activeRate->toString()) : json()},
            {"direction", std::string(toString(p->direction))},
            {"remote", p->remote ? endJson(t, *p->remote) : json()}};
  const PortKey key{n.guid, ref.port};
  const telemetry::PortSample* sample = s.counters ? s.counters->find(key) : nullptr;
  if (sample) {
    const auto lastOk = lastOkTime(*s.counters, *sample);
    j["sample"] = {{"status", std::string(toString(sample->status))},
                   {"detail", sample->detail},
                   {"sequence", s.counters->sequence},
                   {"time", epochSeconds(s.counters->wallTime)},
                   {"stale", sample->stale()},
                   {"last_ok_time", timeJson(lastOk)},
                   {"counters", countersJson(sample->counters)}};
    // Age of what is shown, now: a port that failed the last sweeps keeps its last reading.
    j["sample"]["last_ok_age_seconds"] =
        lastOk
            ? json(
                  std::chrono::duration<double>(std::chrono::system_clock::now() - *lastOk).count())
            : json();
  } else {
    j["sample"] = json();
  }
  const auto r = s.ratesOf(key);
  j["rates"] = r ? ratesJson(*r) : json();
  const auto* health = findHealth(s, n.guid, ref.port);
  j["health"] = health ? healthReportJson(*health) : json();
  json hist = json::array();
  for (const auto& h : history.points(key)) {
    hist.push_back({{"at_ns", h.at.time_since_epoch().count()},
                    {"interval_seconds", h.seconds},
                    {"tx_utilization", optNum(h.txUtilization)},
                    {"rx_utilization", optNum(h.rxUtilization)},
                    {"congestion", optNum(h.congestion)},
                    {"reset", h.reset}});
  }
  j["history"] = hist;
  return j;
}

json eventJson(const telemetry::Event& e) {
  json j = {{"id", e.id},
            {"type", std::string(toString(e.type))},
            {"time", epochSeconds(e.time)},
            {"guid", toString(e.end.node)},
            {"node", e.end.description},
            {"port", e.end.port.value()},
            {"message", e.message}};
  j["remote"] = e.remote ? json{{"guid", toString(e.remote->node)},
                                {"node", e.remote->description},
                                {"port", e.remote->port.value()}}
                         : json();
  return j;
}

nlohmann::json trapsJson(const std::optional<mad::TrapSubscriptionStatus>& traps) {
  if (!traps) return {{"enabled", false}};
  const auto& t = *traps;
  json reports = json::object();
  for (const auto& [trap, n] : t.reports) reports[std::to_string(trap)] = n;
  auto time = [](const auto& at) { return at ? json(epochSeconds(*at)) : json(); };
  return {{"enabled", true},
          {"port_open", t.portOpen},
          {"subscribed", t.subscribed},
          {"sm_lid", t.smLid.value()},
          {"rounds", t.rounds},
          {"failures", t.failures},
          {"last_error", t.lastError},
          {"reports", reports},
          {"duplicate_reports", t.duplicates},
          {"subscribed_at", time(t.subscribedAt)},
          {"last_report", time(t.lastReport)}};
}

nlohmann::json osmJson(const OsmState& osm, std::chrono::system_clock::time_point now) {
  const OsmLinkStatus& l = osm.link;
  // Port probes run without the plugin too (after sweeps: api/service/sweep_suspects.h).
  if (!l.enabled)
    return {{"enabled", false},
            {"port_probes", osm.portProbes},
            {"port_probe_fallbacks", osm.portProbeFailures}};
  json j = {{"enabled", true},
            {"socket", l.socketPath},
            {"connected", l.connected},
            {"connections", l.connections},
            {"events", l.eventsByType},
            {"malformed_lines", l.malformed},
            {"plugin_dropped", l.pluginDropped},
            {"last_seq", l.lastSeq},
            {"osm_version", l.osmVersion},
            {"sm_state", l.smState},
            {"port_probes", osm.portProbes},
            {"port_probe_fallbacks", osm.portProbeFailures},
            {"route_refresh_requests", osm.routeRefreshRequests},
            {"last_route_refresh_reason", osm.lastRouteRefreshReason},
            {"coalescing",
             {{"events", osm.coalescing.events},
              {"runs", osm.coalescing.runs},
              {"coalesced", osm.coalescing.coalesced()},
              {"bursts", osm.coalescing.bursts}}},
            {"last_error", l.lastError}};
  // Full precision (not epochSeconds' milliseconds), as this field always had.
  j["connected_since"] =
      l.connectedSince
          ? json(std::chrono::duration<double>(l.connectedSince->time_since_epoch()).count())
          : nullptr;
  j["last_event_age_seconds"] =
      l.lastEvent ? json(std::chrono::duration<double>(now - *l.lastEvent).count()) : nullptr;
  return j;
}

}  // namespace ibfabric::api
