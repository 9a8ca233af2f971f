// A fabric that remembers: hardware seen before and not by the newest crawl stays in the model,
// marked missing (Node::missing, Link::missing) with since-when and when it was last seen.
//
// Why: a crawl only finds what answers. A host whose only cable is pulled vanishes from the
// crawl with its HCA; a pulled switch-to-switch cable leaves two Down ports without a remote.
// Taken as the truth, the cable leaves /links, its series leave /metrics, the host leaves the
// scheduler exports and a rail-optimised host with 7 of 8 HCAs looks healthy. Kept as missing, the
// cable is a link with Down ends (health "down"), the host keeps its 8 HCAs (one of them down),
// every export keeps its place in the tree, and nothing needs `absent()` to be noticed.
//
// How a missing node is kept: its identity, description and port GUIDs as last seen; every port
// Down, without LID and rate (no sweep polls it, no LID lookup finds it, routes do not use it). A
// missing cable is kept when both of its ends still exist (seen, or themselves missing) and
// neither live end is cabled to something else (a cable moved to another port is the new cable).
// Missing hardware older than RememberOptions::forgetAfter is forgotten; an operator forgets
// hardware removed on purpose with forgetMissing().
//
// Pure functions on immutable snapshots; thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

#include "discovery/topology.h"

namespace ibfabric {

struct RememberOptions {
  /// Missing hardware missing for longer than this is forgotten; zero: kept until forgotten.
  std::chrono::system_clock::duration forgetAfter{};
};

/// `live` (crawled at `now`) with what `remembered` (the model before it, as of `rememberedAt`)
/// had and `live` lacks, kept as missing. Hardware that turns missing now gets
/// Absence{now, rememberedAt}; hardware missing before keeps its Absence. Returns `live` itself
/// when nothing is kept.
TopologyPtr rememberMissing(const Topology& remembered,
                            std::chrono::system_clock::time_point rememberedAt, TopologyPtr live,
                            std::chrono::system_clock::time_point now,
                            const RememberOptions& options = {});

/// `t` without a missing node (and its cables) — or, with `port`, without the missing cable at
/// that port of `node`. Throws std::invalid_argument, saying why, when `t` has no such node or
/// cable, or when it is not missing (present hardware is never forgotten).
TopologyPtr forgetMissing(const Topology& t, Guid node, std::optional<PortNum> port = std::nullopt);

struct MissingCounts {
  std::size_t switches = 0;
  std::size_t cas = 0;
  std::size_t routers = 0;
  std::size_t links = 0;
  std::size_t nodes() const { return switches + cas + routers; }
};
MissingCounts countMissing(const Topology& t);

}  // namespace ibfabric
