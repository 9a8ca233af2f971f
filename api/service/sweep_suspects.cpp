#include "api/service/sweep_suspects.h"

#include <algorithm>
#include <vector>

namespace ibfabric::api {
namespace {

using telemetry::Counter;
using telemetry::PortKey;
using telemetry::PortStatus;

/// The switch a port's trouble is seen from: its own node when a switch, else the switch at the
/// other end of its cable; LID 0 when there is none.
Lid switchOf(const Topology& t, PortKey key) {
  const Node* n = t.findNode(key.node);
  if (!n || n->missing) return Lid{};
  if (n->isSwitch()) return n->lid();
  const Port* p = n->port(key.port);
  if (!p || !p->remote) return Lid{};
  const Node& r = t.node(p->remote->node);
  return r.isSwitch() && !r.missing ? r.lid() : Lid{};
}

}  // namespace

std::set<Lid> sweepSuspects(const Topology& topology, const telemetry::CounterSnapshot* previous,
                            const telemetry::CounterSnapshot& now,
                            const telemetry::RatesTable& rates, std::size_t maxRechecks,
                            std::size_t maxProbes, std::size_t rotationPorts) {
  std::set<Lid> out;
  // First the switches holding an end of a missing cable, or of one not yet Active: what the
  // model knows is broken is re-checked every sweep (in turn beyond maxRechecks) even when a
  // burst of newly silent ports (an SM rerouting around a dead cable) fills the rest.
  std::set<Lid> holding;
  for (const Link& l : topology.links()) {
    if (topology.activity(l) == LinkActivity::kActive) continue;
    for (PortRef end : {l.a, l.b}) {
      const Node& n = topology.node(end.node);
      if (n.isSwitch() && !n.missing && n.lid().value() != 0) holding.insert(n.lid());
    }
  }
  if (!holding.empty() && maxRechecks > 0) {
    const std::vector<Lid> all(holding.begin(), holding.end());
    const std::size_t take = std::min({maxRechecks, all.size(), maxProbes});
    const std::size_t start = take == 0 ? 0 : (now.sequence * take) % all.size();
    for (std::size_t i = 0; i < take; ++i) out.insert(all[(start + i) % all.size()]);
  }
  auto add = [&](PortKey key) {
    if (const Lid lid = switchOf(topology, key); lid.value() != 0 && out.size() < maxProbes)
      out.insert(lid);
  };
  if (previous) {
    for (const auto& s : now.ports) {
      if (s.status == PortStatus::kOk) continue;
      const auto* before = previous->find(s.key);
      if (before && before->status == PortStatus::kOk) add(s.key);
    }
  }
  for (const auto& r : rates) {
    const auto& downed = r[Counter::kLinkDowned];
    if (downed.ok() && downed.delta > 0) add(r.key);
  }
  // The periodic check: every switch in turn, as many a sweep as `rotationPorts` PortInfo
  // reads pay for (counted at the widest switch's ports, so the take is the same every sweep).
  std::vector<Lid> switches;
  std::size_t widest = 1;
  for (const Node& n : topology.nodes()) {
    if (!n.isSwitch() || n.missing || n.lid().value() == 0) continue;
    switches.push_back(n.lid());
    widest = std::max(widest, static_cast<std::size_t>(std::max(n.numPorts, 1)));
  }
  std::sort(switches.begin(), switches.end());
  const std::size_t fit = rotationPorts == 0 ? 0 : std::max<std::size_t>(1, rotationPorts / widest);
  const std::size_t take = std::min(fit, switches.size());
  const std::size_t start = take == 0 ? 0 : (now.sequence * take) % switches.size();
  for (std::size_t i = 0; i < take && out.size() < maxProbes; ++i)
    out.insert(switches[(start + i) % switches.size()]);
  return out;
}

}  // namespace ibfabric::api
