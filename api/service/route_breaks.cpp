#include "api/service/route_breaks.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "routing/routes.h"

namespace ibfabric::api {

std::vector<Lid> lostLids(const telemetry::CounterSnapshot* previous,
                          const telemetry::CounterSnapshot& now) {
  std::vector<Lid> out;
  if (!previous) return out;
  std::set<Lid> seen;
  for (const auto& s : now.ports) {
    if (s.status == telemetry::PortStatus::kOk || s.lid.value() == 0) continue;
    const auto* before = previous->find(s.key);
    if (!before || before->status != telemetry::PortStatus::kOk) continue;
    if (seen.insert(s.lid).second) out.push_back(s.lid);
  }
  return out;
}

std::vector<RouteBreakProbe> routeBreakProbes(const routing::ForwardingTables& tables, Lid local,
                                              const std::vector<Lid>& lost, std::size_t maxRoutes,
                                              std::size_t maxProbes) {
  std::vector<RouteBreakProbe> out;
  const TopologyPtr& t = tables.topology();
  if (!t || lost.empty() || maxRoutes == 0) return out;
  const auto src = t->findLid(local);
  if (!src) return out;
  // Sampled across the lost set: a burst's first entries are often one switch's ports.
  const std::size_t take = std::min(maxRoutes, lost.size());
  std::map<std::pair<Guid, PortNum>, RouteBreakProbe> hops;
  for (std::size_t i = 0; i < take; ++i) {
    const Lid dst = lost[i * lost.size() / take];
    const routing::Route r = routing::traceRoute(*t, tables, *src, dst);
    if (!r.ok()) continue;
    mad::DirectedPath path;
    for (std::size_t h = 0; h < r.hops.size(); ++h) {
      const PortRef from = r.hops[h].from;
      if (h > 0 && path.ports.size() <= mad::DirectedPath::kMaxHops) {
        const Node& sw = t->node(from.node);
        auto [it, added] = hops.try_emplace({sw.guid, from.port});
        if (added) it->second = RouteBreakProbe{sw.guid, from.port, path, 0};
        ++it->second.routes;
      }
      path.ports.push_back(from.port.value());
    }
  }
  for (auto& [key, probe] : hops) out.push_back(std::move(probe));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.routes != b.routes) return a.routes > b.routes;
    return a.path.ports.size() < b.path.ports.size();
  });
  if (out.size() > maxProbes) out.resize(maxProbes);
  return out;
}

std::set<Lid> probeRouteBreaks(CounterSource& source, const Topology& model,
                               const std::vector<RouteBreakProbe>& probes) {
  std::set<Lid> out;
  if (probes.empty()) return out;
  std::vector<CounterSource::DirectedPortProbe> targets;
  for (const auto& p : probes) targets.push_back({p.path, p.port});
  std::vector<std::optional<mad::PortInfo>> infos;
  try {
    infos = source.probePortInfoDirected(targets);
  } catch (const std::exception& e) {
    spdlog::debug("route breaks: {}", e.what());
    return out;
  }
  for (std::size_t i = 0; i < infos.size() && i < probes.size(); ++i) {
    if (!infos[i]) continue;
    const auto state = static_cast<PortState>(infos[i]->portState & 0xF);
    if (state == PortState::kActive) continue;
    const Node* sw = model.findNode(probes[i].switchGuid);
    const Port* p = sw ? sw->port(probes[i].port) : nullptr;
    if (!sw || !sw->isSwitch() || sw->missing || !p || !p->remote ||
        p->state != PortState::kActive || sw->lid().value() == 0)
      continue;
    spdlog::info("route break: {} port {} reads {} by directed route {} (on {} lost route(s))",
                 sw->description, probes[i].port.value(), toString(state),
                 probes[i].path.toString(), probes[i].routes);
    out.insert(sw->lid());
  }
  return out;
}

}  // namespace ibfabric::api
