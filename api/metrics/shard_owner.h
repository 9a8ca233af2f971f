// Shard owners: the switch GUID that decides which MetricsShard exports a port's, a cable's or a
// node's series (metrics_shard.h). A switch port goes with its switch; a CA (or router) port and
// its cable go with the node at the other end of the cable (the leaf), an unlinked CA port with
// the CA itself; a cable goes with the owner of its `a` end's port (topology.h: the CA of a CA
// link, the lower-level switch of a switch-switch link); a node with its own GUID when it is a
// switch, else with the owner of its first linked port. So a leaf's shard has the leaf's ports,
// the HCA ports cabled to it, those cables and those HCAs' node series.
//
// Pure functions; thread-safe.
#pragma once

#include <optional>

#include "discovery/topology.h"
#include "telemetry/counter_sweep.h"

namespace ibfabric::api {

/// The owner of a port of a node of type `type` (GUID `node`) whose cable ends at `remote`.
Guid portShardOwner(NodeType type, Guid node, std::optional<Guid> remote);
/// The owner of a polled port.
Guid portShardOwner(const telemetry::PortSample& sample);
/// The owner of the port `end` of the fabric `t` (its own GUID when `t` does not have it).
Guid portShardOwner(const Topology& t, const telemetry::PortKey& end);
/// The owner of a node's series.
Guid nodeShardOwner(const Topology& t, const Node& node);

}  // namespace ibfabric::api
