// Placement: the request a scheduler (or the GPU pool allocator) asks, and the ranked answer.
//
// This header is the contract between routing (which implements the engine: routes + link load
// + health -> ranked host sets) and its users (REST, CLI, scheduler_hooks). The engine itself is
// a pure function of (topology, routes, link load, health, request); scheduler_hooks reach it
// through a `Placer`, so they can be tested with any placer.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ibfabric::routing {

/// The traffic the job will run; it decides which flows are routed to predict bandwidth.
enum class CommPattern {
  kNone,           ///< no inter-host traffic worth modelling: fewest leaves, healthy links
  kRingAllreduce,  ///< rank i -> rank i+1 (mod n), rail by rail for multi-HCA hosts
  kAllToAll,       ///< every rank to every other rank, rail by rail
};
std::string_view toString(CommPattern p);  // "none", "ring_allreduce", "alltoall"
std::optional<CommPattern> parseCommPattern(std::string_view s);

struct PlacementRequest {
  /// Hosts wanted. When 0, derived from gpus / gpusPerHost (rounded up).
  int hosts = 0;
  int gpus = 0;
  int gpusPerHost = 0;
  CommPattern pattern = CommPattern::kRingAllreduce;
  /// The scheduler's free list; empty = every host of the fabric.
  std::vector<std::string> candidates;
  std::vector<std::string> exclude;
  /// Accept hosts whose HCA links are degraded (never down or faulty ones).
  bool allowDegraded = false;
  /// How many ranked alternatives to return (>= 1).
  int alternatives = 1;
};

/// A directed link the answer would load: the `from` port transmits.
struct LinkLoad {
  std::string fromNode;  ///< description of the transmitting node
  std::uint64_t fromGuid = 0;
  int fromPort = 0;
  std::string toNode;
  std::uint64_t toGuid = 0;
  int toPort = 0;
  double utilization = 0.0;             ///< current, smoothed, [0,1]
  double congestion = 0.0;              ///< current XmitWait ratio, smoothed, [0,1]
  double residualBytesPerSecond = 0.0;  ///< capacity * (1 - utilization)
  int jobFlows = 0;                     ///< flows of this job that cross it
};

struct PlacementScore {
  int leafSwitches = 0;  ///< distinct leaf switches the hosts' HCAs attach to
  int maxHops = 0;       ///< longest route (switch hops) among the pattern's flows
  /// Predicted per-flow bottleneck of the pattern on the real routes: for each link, its residual
  /// capacity shared among the job's flows on it; the minimum over links. For kNone, the minimum
  /// residual capacity of the hosts' own HCA links.
  double bottleneckBytesPerSecond = 0.0;
  /// The hottest links the job would cross (highest utilization first), at most a few.
  std::vector<LinkLoad> hottestLinks;
  /// The objective the engine maximizes (higher is better); comparable within one answer.
  double objective = 0.0;
  std::string explanation;  ///< one line
};

struct PlacementOption {
  std::vector<std::string> hosts;  ///< in rank order
  PlacementScore score;
};

struct PlacementAnswer {
  std::vector<PlacementOption> options;  ///< best first; never empty on success
  /// Hosts left out and why ("dgx0007: HCA mlx5_2 link down"), candidates unknown to the fabric.
  std::vector<std::string> warnings;
};

/// A request that cannot be answered. `reason` is one line for the 4xx body.
class PlacementError : public std::runtime_error {
 public:
  enum class Kind {
    kInvalidRequest,  ///< 400: malformed numbers, unknown pattern, ...
    kUnsatisfiable,   ///< 409/422: not enough healthy hosts among the candidates
    kNotReady,        ///< 503: no topology or no routes yet
  };
  PlacementError(Kind kind, const std::string& reason) : std::runtime_error(reason), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

/// Answers a request against the current fabric state; throws PlacementError.
using Placer = std::function<PlacementAnswer(const PlacementRequest&)>;

}  // namespace ibfabric::routing
