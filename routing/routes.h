// Routes: the hop-by-hop path a packet takes between two LIDs on the real forwarding tables, and
// fabric-wide validation (reachability, loops, black holes) and per-leaf route balance.
//
// Pure functions over (Topology, ForwardingTables); thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "discovery/topology.h"
#include "routing/forwarding.h"

namespace ibfabric::routing {

/// A directed use of a link: `from` transmits onto the cable towards `to`.
struct DirectedHop {
  PortRef from;
  PortRef to;
  std::uint32_t link = 0;  ///< index into Topology::links()
  friend bool operator==(const DirectedHop&, const DirectedHop&) = default;
};

struct Route {
  enum class Status {
    kOk,
    kUnknownLid,  ///< source or destination LID not in the topology
    kNoTable,     ///< a switch on the way has no forwarding table
    kBlackHole,   ///< a switch has no entry for the destination, or its egress port is down
    kLoop,        ///< the path revisits a switch
  };
  Status status = Status::kOk;
  Lid src;
  Lid dst;
  /// Every cable crossed, in order, starting with the source port's own link.
  std::vector<DirectedHop> hops;
  std::string problem;  ///< one line when status != kOk (which switch, which LID, which port)
  bool ok() const { return status == Status::kOk; }
  /// Switches crossed.
  int switchHops() const { return hops.empty() ? 0 : static_cast<int>(hops.size()) - 1; }
};
std::string_view toString(Route::Status s);  // "ok", "unknown_lid", "no_table", ...

/// The route from the port `src` (a CA port or a switch port 0) to destination LID `dst`.
Route traceRoute(const Topology& topology, const ForwardingTables& tables, PortRef src, Lid dst);

struct RouteProblem {
  Route::Status status = Route::Status::kOk;
  Lid src;
  Lid dst;
  std::string detail;
};

struct ValidationReport {
  std::uint64_t pairsChecked = 0;
  std::uint64_t pairsOk = 0;
  /// Problems, each reported once per (src, dst); capped at `maxProblems` (counts stay exact).
  std::vector<RouteProblem> problems;
  std::uint64_t loops = 0;
  std::uint64_t blackHoles = 0;
  std::uint64_t missingTables = 0;
};
/// Every CA port reaches every CA port (LID-routed, base LIDs).
ValidationReport validateRoutes(const Topology& topology, const ForwardingTables& tables,
                                std::size_t maxProblems = 1000);

/// Per leaf: how many destination LIDs each up-port carries (from the leaf's LFT, over the CA
/// LIDs not attached to the leaf itself). imbalance = max / mean over up-ports (1.0 = perfect).
struct LeafBalance {
  NodeIndex leaf = kNoNode;
  std::vector<std::pair<PortNum, std::uint32_t>> destinationsPerUpPort;
  double imbalance = 1.0;
};
std::vector<LeafBalance> routeBalance(const Topology& topology, const ForwardingTables& tables);

}  // namespace ibfabric::routing
