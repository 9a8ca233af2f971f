#include "telemetry/link_health_eval.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "discovery/link_health.h"

namespace ibfabric::telemetry {

std::string_view toString(LinkState s) {
  switch (s) {
    case LinkState::kOk:
      return "ok";
    case LinkState::kDegraded:
      return "degraded";
    case LinkState::kFaulty:
      return "faulty";
    case LinkState::kDown:
      return "down";
  }
  return "?";
}

HealthThresholds HealthThresholds::defaults() {
  HealthThresholds t;
  auto set = [&](Counter c, double perHour) { t.errorsPerHour[index(c)] = perHour; };
  // ibqueryerrors' suggested thresholds (counts), read as "per hour".
  set(Counter::kSymbolErrors, 10);
  set(Counter::kLinkErrorRecovery, 10);
  set(Counter::kLinkDowned, 10);
  set(Counter::kRcvErrors, 10);
  set(Counter::kRcvRemotePhysicalErrors, 100);
  set(Counter::kRcvSwitchRelayErrors, 100);
  set(Counter::kXmitDiscards, 100);
  set(Counter::kXmitConstraintErrors, 100);
  set(Counter::kRcvConstraintErrors, 100);
  set(Counter::kLocalLinkIntegrityErrors, 10);
  set(Counter::kExcessiveBufferOverrunErrors, 10);
  set(Counter::kVl15Dropped, 100);
  return t;
}

bool isIntegrityCounter(Counter c) {
  switch (c) {
    case Counter::kSymbolErrors:
    case Counter::kLinkErrorRecovery:
    case Counter::kLinkDowned:
    case Counter::kRcvErrors:
    case Counter::kLocalLinkIntegrityErrors:
    case Counter::kExcessiveBufferOverrunErrors:
      return true;
    default:
      return false;
  }
}

bool isRoutingSymptom(Counter c, bool linkDown) {
  return c == Counter::kRcvSwitchRelayErrors || (c == Counter::kXmitDiscards && linkDown);
}

std::optional<double> PortWindow::perHour(Counter c) const {
  const auto& d = deltas[index(c)];
  if (!d || seconds <= 0) return std::nullopt;
  return static_cast<double>(*d) * 3600.0 / seconds;
}

PortWindow summarize(const std::vector<PortSample>& samples, std::chrono::nanoseconds window,
                     std::chrono::nanoseconds flapWindow, const RateOptions& rates) {
  PortWindow w;
  if (samples.empty()) return w;
  w.key = samples.back().key;
  const auto newest = samples.back().at;
  for (std::size_t i = 1; i < samples.size(); ++i) {
    const PortSample& a = samples[i - 1];
    const PortSample& b = samples[i];
    const bool inWindow = newest - a.at <= window;
    const bool inFlap = newest - a.at <= flapWindow;
    if (!inWindow && !inFlap) continue;
    PortRates r = computeRates(a, b, rates);
    if (!r.resets().empty()) ++w.resets;
    if (inFlap && r[Counter::kLinkDowned].ok())
      w.linkDownedInFlapWindow += r[Counter::kLinkDowned].delta;
    if (i == samples.size() - 1) w.congestion = r.congestion;
    if (!inWindow) continue;
    w.seconds += r.intervalSeconds;
    for (Counter c : kAllCounters) {
      if (!r[c].ok()) continue;
      auto& d = w.deltas[index(c)];
      d = d.value_or(0) + r[c].delta;
    }
  }
  return w;
}

namespace {

void worsen(LinkHealthReport& r, LinkState s) {
  if (static_cast<int>(s) > static_cast<int>(r.state)) r.state = s;
}

std::string fmt(const char* f, double a, double b) {
  char buf[128];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

}  // namespace

std::vector<LinkHealthReport> evaluateLinkHealth(
    const Topology& topology, const std::function<const PortWindow*(PortKey)>& windowOf,
    const HealthThresholds& t) {
  std::multimap<std::uint32_t, LinkHealthIssue> findings;
  for (auto& issue : checkLinkHealth(topology))
    if (issue.link) findings.emplace(*issue.link, std::move(issue));

  std::vector<LinkHealthReport> out;
  out.reserve(topology.links().size());
  for (std::uint32_t li = 0; li < topology.links().size(); ++li) {
    const Link& link = topology.links()[li];
    LinkHealthReport r;
    r.link = li;
    const Node& na = topology.node(link.a.node);
    const Node& nb = topology.node(link.b.node);
    r.a = {na.guid, link.a.port};
    r.b = {nb.guid, link.b.port};
    r.aDescription = na.description;
    r.bDescription = nb.description;

    for (const auto& [ref, key] : {std::pair{link.a, r.a}, std::pair{link.b, r.b}}) {
      const Port* p = topology.port(ref);
      if (!p || p->state != PortState::kActive) {
        worsen(r, LinkState::kDown);
        r.reasons.push_back(
            {"down", key, "port state " + std::string(p ? toString(p->state) : "absent")});
      }
    }
    auto range = findings.equal_range(li);
    for (auto it = range.first; it != range.second; ++it) {
      const LinkHealthIssue& issue = it->second;
      worsen(r, LinkState::kDegraded);
      const Node& n = topology.node(issue.port.node);
      r.reasons.push_back(
          {std::string(toString(issue.kind)), {n.guid, issue.port.port}, issue.text});
    }
    for (PortKey key : {r.a, r.b}) {
      const PortWindow* w = windowOf ? windowOf(key) : nullptr;
      if (!w) continue;
      if (w->linkDownedInFlapWindow >= t.flapCount && t.flapCount > 0) {
        worsen(r, LinkState::kFaulty);
        r.reasons.push_back({"flapping", key,
                             std::to_string(w->linkDownedInFlapWindow) +
                                 " LinkDowned increments within " +
                                 std::to_string(t.flapWindow.count()) + " s"});
      }
      for (Counter c : kAllCounters) {
        const double limit = t.errorsPerHour[index(c)];
        if (limit <= 0) continue;
        auto rate = w->perHour(c);
        if (!rate || *rate <= limit || w->deltas[index(c)].value_or(0) == 0) continue;
        if (isRoutingSymptom(c, r.state == LinkState::kDown)) {
          r.reasons.push_back(
              {kUnreachableTrafficReason, key,
               std::string(ibName(c)) +
                   fmt(" %.1f/h over %.1f/h: traffic to an unreachable destination dropped "
                       "here (not a fault of this cable)",
                       *rate, limit)});
          continue;
        }
        worsen(r, isIntegrityCounter(c) ? LinkState::kFaulty : LinkState::kDegraded);
        r.reasons.push_back(
            {"errors", key,
             std::string(ibName(c)) + fmt(" %.1f/h over the threshold %.1f/h", *rate, limit)});
      }
      if (w->congestion) {
        r.congestion = std::max(r.congestion.value_or(0.0), *w->congestion);
        if (*w->congestion >= t.congestionHigh && t.congestionHigh > 0) {
          worsen(r, LinkState::kDegraded);
          r.reasons.push_back({"congestion", key,
                               fmt("congestion %.1f%% at or over %.1f%%", *w->congestion * 100,
                                   t.congestionHigh * 100)});
        }
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace ibfabric::telemetry
