// Compare a live fabric (a Topology snapshot, usually a fresh crawl) to the fabric it is meant to
// be (a planned net file: `topo gen` output, hand-written ibsim file or an old ibnetdiscover dump).
//
// Nodes are matched first:
//   - by description (default): a planned node's description, or its id when it has none (or
//     when no live node carries the description), against the live Node::description (the
//     NodeDescription, or the node-name map's name). A plan written before the hardware exists
//     has no GUIDs, and `topo gen` files describe HCAs as "<host> mlx5_<n>" and switches as
//     "MF0;<name>:<part>/U1", which is what the real devices (and ibsim) report.
//   - by GUID: the planned node GUID (given in the file, or the one ibsim assigns) against the
//     live node GUID.
// A match also needs the same node type. Then cables, each identified by its two planned ends:
//   - intact: both planned ends are cabled to each other. Its live rate is checked against the
//     planned rate when the file gives one;
//   - missing: both planned ends are matched but unconnected;
//   - miswired: at least one planned end is cabled to some other port (e.g. a cable moved to
//     another spine port). One finding per planned cable, naming where each end went; the live
//     cables it explains are not reported again;
//   - cables of a missing node are summarised in the missing-node finding; live cables of an
//     unexpected node in the unexpected-node finding;
//   - unexpected: a live cable between matched nodes that no planned cable explains.
// Finally the live snapshot's link health (discovery/link_health.h) is added as degraded
// findings, except enable-mismatch on a cable whose planned rate is given and met (the plan says
// what the link should run at).
//
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "discovery/link_health.h"
#include "discovery/link_rate.h"
#include "discovery/netfile.h"
#include "discovery/topology.h"

namespace ibfabric {

class NodeNameMap;

enum class MatchBy : std::uint8_t { kDescription, kGuid };
std::string_view toString(MatchBy m);                        // "desc", "guid"
std::optional<MatchBy> parseMatchBy(std::string_view text);  // "desc"/"description", "guid"

struct CompareOptions {
  MatchBy match = MatchBy::kDescription;
  /// Add the live fabric's link-health findings (kDegraded).
  bool linkHealth = true;
  /// Name of the expected file in texts ("fabric.net").
  std::string expectedName = "expected";
};

enum class CompareKind : std::uint8_t {
  kMissingNode,
  kUnexpectedNode,
  kDuplicateName,  // several live nodes carry one planned name: matched in GUID order
  kMissingLink,
  kUnexpectedLink,
  kMiswired,
  kRateMismatch,  // an intact cable runs at another rate than planned
  kDegraded,      // a link-health finding on the live fabric (see `health`)
};
/// "missing-node", "unexpected-node", "duplicate-name", "missing-link", "unexpected-link",
/// "miswired", "rate-mismatch", "degraded".
std::string_view toString(CompareKind k);

/// A planned node or port.
struct PlannedEnd {
  std::string id;    // NetNode::id
  std::string name;  // NetNode::name(): the description, else the id
  PortNum port;      // 0 for node findings
  int line = 0;      // line of the node record, or of the port line, in the expected file
};

/// A live node or port.
struct LiveEnd {
  PortRef ref;
  Guid guid;  // node GUID
  std::string description;
  PortNum port;  // 0 for node findings
};

struct CompareFinding {
  CompareKind kind = CompareKind::kMissingNode;
  /// Planned node (node findings) or the planned ends of a cable (link findings).
  std::optional<PlannedEnd> plannedA, plannedB;
  /// Live node (node findings), or the live ends of a cable (unexpected/intact cables; for a
  /// miswired or missing cable the live ports matched to plannedA/plannedB).
  std::optional<LiveEnd> liveA, liveB;
  /// Miswired: where each planned end is cabled now (nullopt: unconnected, or not in the crawl).
  std::optional<LiveEnd> actualRemoteA, actualRemoteB;
  std::optional<LinkRate> plannedRate, liveRate;
  std::optional<LinkHealthKind> health;  // kDegraded only
  /// One line, e.g. `miswired: planned "leaf-01"[3] <-> "spine-01"[1] (fabric.net:12):
  /// "leaf-01"[3] now goes to "spine-01"[5]; "spine-01"[1] is unconnected`.
  std::string text;
};

struct CompareCounts {
  std::size_t missingNodes = 0, unexpectedNodes = 0, duplicateNames = 0;
  std::size_t missingLinks = 0, unexpectedLinks = 0, miswired = 0;
  std::size_t rateMismatches = 0, degraded = 0;
};

struct CompareResult {
  MatchBy match = MatchBy::kDescription;
  std::string expectedName;
  std::string liveSource;  // CrawlStats::source of the live snapshot
  std::size_t expectedNodes = 0, expectedLinks = 0;
  std::size_t liveNodes = 0, liveLinks = 0;
  std::size_t matchedNodes = 0, intactLinks = 0;
  /// Node findings first, then link findings, then degraded links; each group in plan order
  /// (or live order for unexpected items).
  std::vector<CompareFinding> findings;

  bool identical() const { return findings.empty(); }
  CompareCounts counts() const;
};

CompareResult compareTopology(const NetFabric& expected, const Topology& live,
                              const CompareOptions& options = {});

/// The snapshot a crawl of ibsim running `fabric` would give, as far as the file says: nodes
/// without a description report their id (ibsim does that), then the node-name map (if any)
/// renames. Used for `topo compare --live FILE` and in tests.
TopologyPtr topologyAsCrawled(NetFabric fabric, std::shared_ptr<const NodeNameMap> map = nullptr,
                              std::string source = "netfile");

inline constexpr std::string_view kCompareJsonSchema = "ibfabric.topology-compare/1";

/// Header line, one line per finding, a count line and "result: identical|different".
std::string formatCompareText(const CompareResult& result);
/// {"schema", "identical", "match", "expected": {...}, "live": {...}, "counts": {...},
///  "findings": [{"kind", "text", "planned_a", ...}]}; docs/topology-compare.md.
nlohmann::json compareToJson(const CompareResult& result);

}  // namespace ibfabric
