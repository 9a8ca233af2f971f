// Topology edits: a new snapshot derived from an existing one with a few ports' states changed
// and a few cables removed or added, without a crawl.
//
// Used when a subnet manager reports a port state change: the daemon re-reads just the affected
// switch's PortInfo and publishes the edited snapshot at once (the next crawl confirms it).
// Node identities, descriptions (node-name map names included), LIDs, rates and every
// unchanged port are copied; the fat-tree analysis runs again on the result.
//
// Pure function of its inputs; thread-safe.
#pragma once

#include <optional>
#include <stdexcept>
#include <vector>

#include "discovery/topology.h"
#include "discovery/topology_delta.h"

namespace ibfabric {

/// New state of one port (what its PortInfo says now).
struct PortStateUpdate {
  Guid node;
  PortNum port;
  PortState state = PortState::kDown;
  PhysPortState physState = PhysPortState::kPolling;
  /// Active width and speed; nullopt while the link is not up.
  std::optional<LinkRate> activeRate;
  /// The port's LID, when known to have changed (a CA port back from missing); nullopt: kept.
  std::optional<Lid> lid = std::nullopt;
};

struct TopologyEdit {
  std::vector<PortStateUpdate> ports;
  /// Cables to drop (both ends stay, without a remote).
  std::vector<LinkKey> removeLinks;
  /// Cables to add between existing ports.
  std::vector<LinkKey> addLinks;
  /// Nodes the model remembers as missing that answered again (their identity confirmed by
  /// NodeInfo): present from now on. Their cables come back as added or updated.
  std::vector<Guid> nodesBack;
  bool empty() const {
    return ports.empty() && removeLinks.empty() && addLinks.empty() && nodesBack.empty();
  }
};

/// The builder's description of `node` (to copy a snapshot or a part of it; its shown name and
/// Node::missing are set on the builder separately).
TopologyBuilder::NodeInfo nodeInfoOf(const Node& node);

/// Applies `edit` to `before`. Missing hardware (discovery/fabric_memory.h) is copied as missing,
/// except a node in `nodesBack`, and a missing cable that is added, or whose both ends are
/// updated to Active: it is back.
/// Throws std::invalid_argument when an update or cable names a node or port that `before` does not
/// have, an added cable's end is already cabled, or a node back is not a missing node.
TopologyPtr applyTopologyEdit(const Topology& before, const TopologyEdit& edit);

}  // namespace ibfabric
