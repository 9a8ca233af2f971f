// Text renderings of a Topology snapshot, as `ibfabric discover --format ...` prints them:
//   summary        a few lines for a person (counts per level, hosts, rails, groups, degraded
//                  links from checkLinkHealth(), crawl cost);
//   json           the whole model, schema in docs/discovery-json.md ("ibfabric.topology/1"),
//                  with checkLinkHealth()'s findings;
//   ibnetdiscover  that tool's text, which ibsim loads back;
//   dot            Graphviz, one rank per fat-tree level.
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "discovery/topology.h"

namespace ibfabric {

enum class TopologyFormat { kSummary, kJson, kIbnetdiscover, kDot };
std::optional<TopologyFormat> parseTopologyFormat(std::string_view text);

/// "switch", "ca", "router": how the JSON model names node types.
std::string nodeTypeName(NodeType type);

/// "leaf", "spine", "core" for levels 1..3, "ca" for 0, "level-N" above, "unknown".
std::string levelName(int level);

inline constexpr std::string_view kTopologyJsonSchema = "ibfabric.topology/1";

/// How many of checkLinkHealth()'s findings the summary lists (the rest are counted).
inline constexpr std::size_t kSummaryFindings = 5;

std::string formatSummary(const Topology& topology);
nlohmann::json toJson(const Topology& topology);
/// {"since", "last_seen"} (Unix seconds) of remembered hardware the last crawl did not see
/// (discovery/fabric_memory.h); null when it is present.
nlohmann::json absenceJson(const std::optional<Absence>& absence);
/// toJson(topology).dump(), byte for byte, written to `out` in pieces (a node or a cable at a
/// time): never the whole document in memory, as text or as a JSON tree.
void writeJson(const Topology& topology, const std::function<void(std::string_view)>& out);
std::string formatDot(const Topology& topology);
std::string formatIbnetdiscover(const Topology& topology);

std::string formatTopology(const Topology& topology, TopologyFormat format);

}  // namespace ibfabric
