#include "api/metrics/shard_owner.h"

namespace ibfabric::api {

Guid portShardOwner(NodeType type, Guid node, std::optional<Guid> remote) {
  if (type == NodeType::kSwitch || !remote) return node;
  return *remote;
}

Guid portShardOwner(const telemetry::PortSample& s) {
  return portShardOwner(s.nodeType, s.key.node,
                        s.remote ? std::optional<Guid>(s.remote->node) : std::nullopt);
}

Guid portShardOwner(const Topology& t, const telemetry::PortKey& end) {
  const Node* n = t.findNode(end.node);
  const Port* p = n ? n->port(end.port) : nullptr;
  if (!n || !p) return end.node;
  return portShardOwner(
      n->type, n->guid,
      p->remote ? std::optional<Guid>(t.node(p->remote->node).guid) : std::nullopt);
}

Guid nodeShardOwner(const Topology& t, const Node& n) {
  if (n.isSwitch()) return n.guid;
  for (const auto& p : n.ports)
    if (p && p->remote) return portShardOwner(n.type, n.guid, t.node(p->remote->node).guid);
  return n.guid;
}

}  // namespace ibfabric::api
