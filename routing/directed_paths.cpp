#include "routing/directed_paths.h"

#include <deque>

namespace ibfabric::routing {

std::vector<std::optional<mad::DirectedPath>> directedPaths(const Topology& topology,
                                                            Guid localPort) {
  const auto start = topology.findPort(localPort);
  if (!start) return {};
  std::vector<std::optional<mad::DirectedPath>> paths(topology.nodes().size());
  const Node& self = topology.node(start->node);
  paths[self.index] = mad::DirectedPath{};
  auto usable = [](const Port* p) { return p && p->remote && p->state != PortState::kDown; };

  std::deque<NodeIndex> queue;
  // First hop: out of our own port (a CA sends only through the port the SMP is submitted on).
  const Port* out = self.isSwitch() ? nullptr : self.port(start->port);
  if (self.isSwitch()) {
    queue.push_back(self.index);
  } else if (usable(out)) {
    const Port* in = topology.port(*out->remote);
    const NodeIndex next = out->remote->node;
    if (in && in->state != PortState::kDown && topology.node(next).isSwitch()) {
      paths[next] = mad::DirectedPath{{start->port.value()}};
      queue.push_back(next);
    }
  }
  while (!queue.empty()) {
    const Node& sw = topology.node(queue.front());
    queue.pop_front();
    const auto& here = *paths[sw.index];
    if (here.ports.size() >= mad::DirectedPath::kMaxHops) continue;
    for (std::size_t p = 1; p < sw.ports.size(); ++p) {
      const Port* port = sw.port(PortNum(static_cast<std::uint8_t>(p)));
      if (!usable(port)) continue;
      const NodeIndex next = port->remote->node;
      const Node& nn = topology.node(next);
      const Port* in = topology.port(*port->remote);
      if (paths[next] || !nn.isSwitch() || !in || in->state == PortState::kDown) continue;
      mad::DirectedPath path = here;
      path.ports.push_back(static_cast<std::uint8_t>(p));
      paths[next] = std::move(path);
      queue.push_back(next);
    }
  }
  return paths;
}

}  // namespace ibfabric::routing
