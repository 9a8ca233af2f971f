// Loading a Topology back from its JSON model ("ibfabric.topology/1", docs/discovery-json.md):
// the inverse of toJson() in formats.h.
//
// The loader reads what a crawl observed — nodes (NodeInfo, descriptions), their ports (GUIDs,
// LIDs, states, enabled/supported widths and speeds, active rates) and the cables — and rebuilds
// the snapshot with TopologyBuilder, so every derived field (levels, directions, hosts, rails,
// groups, indexes) is computed again rather than trusted. Descriptions that differ from the
// reported NodeDescription (a node-name map was applied) are kept. Crawl statistics are restored.
//
// Used by the daemon to receive a crawl from a short-lived child process, and by tests.
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string_view>

#include "discovery/topology.h"

namespace ibfabric {

/// The document is not a valid "ibfabric.topology/1" model. what() names the offending field.
class TopologyJsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Rebuilds a snapshot from toJson()'s output; throws TopologyJsonError.
TopologyPtr topologyFromJson(const nlohmann::json& document);
/// Parses the text first; throws TopologyJsonError (also for malformed JSON).
TopologyPtr topologyFromJsonText(std::string_view text);

}  // namespace ibfabric
