#include "api/service/host_health.h"

#include <algorithm>

namespace ibfabric::api {

namespace sh = scheduler_hooks;

sh::HostHealthMap hostHealthOf(const ServiceState& s) {
  sh::HostHealthMap out;
  if (s.topology) out = sh::hostHealthFromTopology(*s.topology);
  if (!s.counters || !s.counters->topology || !s.health) return out;
  const Topology& ct = *s.counters->topology;
  // Hosts with an HCA link down but another one up run on fewer rails: degraded, not down.
  auto othersUp = [&](const Host& host, NodeIndex except) {
    for (NodeIndex i : host.hcas) {
      if (i == except) continue;
      for (const auto& p : ct.node(i).ports)
        if (p && p->remote && p->state == PortState::kActive) return true;
    }
    return false;
  };
  for (const auto& report : *s.health) {
    if (report.state == telemetry::LinkState::kOk || report.link >= ct.links().size()) continue;
    const Link& link = ct.links()[report.link];
    const sh::HostHealth h = report.state == telemetry::LinkState::kDown ? sh::HostHealth::kDown
                             : report.state == telemetry::LinkState::kFaulty
                                 ? sh::HostHealth::kFaulty
                                 : sh::HostHealth::kDegraded;
    std::string why = report.aDescription + " <-> " + report.bDescription + ": " +
                      std::string(telemetry::toString(report.state));
    if (!report.reasons.empty()) why += " (" + report.reasons.front().text + ")";
    for (PortRef end : {link.a, link.b}) {
      const Node& n = ct.node(end.node);
      if (!n.isCa() || !n.host) continue;
      const Host& host = ct.hosts()[*n.host];
      const bool partial = h == sh::HostHealth::kDown && othersUp(host, n.index);
      sh::mergeHostStatus(out, host.name,
                          {partial ? sh::HostHealth::kDegraded : h, why,
                           report.state == telemetry::LinkState::kDown});
    }
  }
  if (s.topology && s.topology != s.counters->topology) {
    for (const Host& h : ct.hosts())
      if (!s.topology->findHost(h.name))
        sh::mergeHostStatus(out, h.name,
                            {sh::HostHealth::kDown, "not seen by the last crawl", true});
  }
  return out;
}

std::optional<double> leafUplinkUtilization(const ServiceState& s, NodeIndex leaf) {
  if (!s.topology || leaf >= s.topology->nodes().size()) return std::nullopt;
  const Node& n = s.topology->node(leaf);
  double sum = 0;
  int count = 0;
  for (const auto& p : n.ports) {
    if (!p || p->direction != PortDirection::kUp) continue;
    const auto r = s.ratesOf(telemetry::PortKey{n.guid, p->num});
    if (!r) continue;
    std::optional<double> u;
    for (const auto& v : {r->txUtilization, r->rxUtilization})
      if (v) u = std::max(u.value_or(0.0), *v);
    if (u) {
      sum += *u;
      ++count;
    }
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

}  // namespace ibfabric::api
