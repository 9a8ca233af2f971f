#include "tools/ibfabric/counters/counters_json.h"

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

namespace ibfabric::cli {
namespace {

using nlohmann::json;
using namespace ibfabric::telemetry;

std::string hex(Guid g) { return toString(g); }

json optNum(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::optional<Counter> counterByName(const std::string& name) {
  for (Counter c : kAllCounters)
    if (toString(c) == name) return c;
  return std::nullopt;
}

}  // namespace

json sampleJson(const PortSample& s) {
  json j;
  j["node_guid"] = hex(s.key.node);
  j["node"] = s.nodeDescription;
  j["port"] = s.key.port.value();
  j["lid"] = s.lid.value();
  j["type"] = s.nodeType == NodeType::kSwitch ? "switch" : "ca";
  j["status"] = std::string(toString(s.status));
  if (!s.detail.empty()) j["detail"] = s.detail;
  j["at_ns"] = s.at.time_since_epoch().count();
  if (s.rate) j["rate"] = s.rate->toString();
  if (s.remote) {
    j["remote"] = {{"node_guid", hex(s.remote->node)},
                   {"node", s.remoteDescription},
                   {"port", s.remote->port.value()}};
  }
  json counters = json::object(), bits = json::object(), saturated = json::array();
  for (Counter c : kAllCounters) {
    if (!s.counters.has(c)) continue;
    counters[std::string(toString(c))] = s.counters.get(c);
    bits[std::string(toString(c))] = s.counters.bits[index(c)];
    if (s.counters.saturated(c)) saturated.push_back(std::string(toString(c)));
  }
  j["counters"] = counters;
  j["bits"] = bits;
  j["saturated"] = saturated;
  if (!s.clearedAfterRead.empty()) {
    json cl = json::array();
    for (Counter c : s.clearedAfterRead) cl.push_back(std::string(toString(c)));
    j["cleared_after_read"] = cl;
  }
  return j;
}

PortSample sampleFromJson(const json& j) {
  PortSample s;
  auto guid = parseGuid(j.at("node_guid").get<std::string>());
  if (!guid) throw std::runtime_error("bad node_guid");
  s.key = {*guid, PortNum(j.at("port").get<std::uint8_t>())};
  s.nodeDescription = j.value("node", "");
  s.lid = Lid(j.value("lid", std::uint16_t{0}));
  const std::string status = j.value("status", "ok");
  s.status = status == "ok" ? PortStatus::kOk : PortStatus::kTimeout;
  s.at = mad::Clock::time_point(mad::Clock::duration(j.at("at_ns").get<std::int64_t>()));
  if (j.contains("rate")) s.rate = parseLinkRate(j["rate"].get<std::string>());
  for (auto& [name, v] : j.at("counters").items()) {
    auto c = counterByName(name);
    if (!c) continue;
    s.counters.set(*c, v.get<std::uint64_t>(), j.at("bits").at(name).get<int>());
  }
  if (j.contains("cleared_after_read")) {
    for (const auto& n : j["cleared_after_read"])
      if (auto c = counterByName(n.get<std::string>())) s.clearedAfterRead.push_back(*c);
  }
  return s;
}

json sweepSummaryJson(const CounterSnapshot& snap) {
  json j;
  j["sequence"] = snap.sequence;
  j["started_ns"] = snap.started.time_since_epoch().count();
  j["duration_s"] = std::chrono::duration<double>(snap.stats.duration).count();
  j["ports_polled"] = snap.stats.ports;
  j["ports_ok"] = snap.stats.portsOk;
  j["requests"] = snap.stats.requests;
  j["attempts"] = snap.stats.attempts;
  j["retries"] = snap.stats.retries;
  j["failed_requests"] = snap.stats.failedRequests;
  j["class_port_info_queries"] = snap.stats.classPortInfoQueries;
  json failures = json::array();
  for (const auto& f : snap.failures) {
    failures.push_back({{"lid", f.lid.value()},
                        {"node_guid", hex(f.node)},
                        {"node", f.nodeDescription},
                        {"failed_requests", f.failedRequests},
                        {"requests", f.requests},
                        {"attempts", f.attempts},
                        {"reason", f.reason}});
  }
  j["failures"] = failures;
  return j;
}

json ratesJson(const PortRates& r, const PortSample* s) {
  json j;
  j["node_guid"] = hex(r.key.node);
  if (s) j["node"] = s->nodeDescription;
  j["port"] = r.key.port.value();
  j["interval_s"] = r.intervalSeconds;
  j["tx_bytes_per_s"] = optNum(r.txBytesPerSecond);
  j["rx_bytes_per_s"] = optNum(r.rxBytesPerSecond);
  j["tx_packets_per_s"] = optNum(r.txPacketsPerSecond);
  j["rx_packets_per_s"] = optNum(r.rxPacketsPerSecond);
  j["tx_utilization"] = optNum(r.txUtilization);
  j["rx_utilization"] = optNum(r.rxUtilization);
  j["congestion"] = optNum(r.congestion);
  json deltas = json::object();
  for (Counter c : kAllCounters) {
    const CounterDelta& d = r[c];
    json x = {{"state", std::string(toString(d.state))}};
    if (d.ok()) {
      x["delta"] = d.delta;
      x["per_s"] = d.perSecond;
    }
    if (d.saturated) x["saturated"] = true;
    deltas[std::string(toString(c))] = x;
  }
  j["deltas"] = deltas;
  json resets = json::array(), saturated = json::array();
  for (Counter c : r.resets()) resets.push_back(std::string(toString(c)));
  for (Counter c : r.saturated()) saturated.push_back(std::string(toString(c)));
  j["resets"] = resets;
  j["saturated"] = saturated;
  return j;
}

json healthJson(const LinkHealthReport& r) {
  json reasons = json::array();
  for (const auto& x : r.reasons) {
    reasons.push_back({{"code", x.code},
                       {"node_guid", hex(x.port.node)},
                       {"port", x.port.port.value()},
                       {"text", x.text}});
  }
  return {
      {"a", {{"node_guid", hex(r.a.node)}, {"node", r.aDescription}, {"port", r.a.port.value()}}},
      {"b", {{"node_guid", hex(r.b.node)}, {"node", r.bDescription}, {"port", r.b.port.value()}}},
      {"state", std::string(toString(r.state))},
      {"congestion", optNum(r.congestion)},
      {"reasons", reasons}};
}

json eventJson(const Event& e) {
  json j = {
      {"id", e.id},
      {"type", std::string(toString(e.type))},
      {"time",
       std::chrono::duration_cast<std::chrono::milliseconds>(e.time.time_since_epoch()).count()},
      {"node_guid", hex(e.end.node)},
      {"node", e.end.description},
      {"port", e.end.port.value()},
      {"message", e.message}};
  if (e.remote) {
    j["remote"] = {{"node_guid", hex(e.remote->node)},
                   {"node", e.remote->description},
                   {"port", e.remote->port.value()}};
  }
  return j;
}

json engineJson(const mad::MadEngineStats& st) {
  return {{"sent", st.sent},
          {"retries", st.retries},
          {"timeouts", st.timeouts},
          {"lost_reported", st.lostReported},
          {"failed", st.failed},
          {"completed_ok", st.completedOk},
          {"policy", mad::toString(st.policy)},
          {"window", st.window},
          {"window_decreases", st.windowDecreases},
          {"spurious_timeouts", st.spuriousTimeouts},
          {"rtt_smoothed_seconds", std::chrono::duration<double>(st.srtt).count()},
          {"rto_seconds", std::chrono::duration<double>(st.rto).count()},
          {"retries_refused", st.retriesRefused},
          {"breaker_opens", st.breakerOpens},
          {"breaker_open_targets", st.openBreakers},
          {"target_down", st.targetDown}};
}

}  // namespace ibfabric::cli
