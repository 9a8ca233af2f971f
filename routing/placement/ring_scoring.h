// Ring allreduce scoring: the flows of a ring order (rank i -> rank i + 1 mod n, rail by rail) on
// the forwarding tables.
//
// In full, or incrementally: the flows of the last ring order scored stay in place. An order of
// the same host count that differs from it in a few positions changes only the edges next to
// those positions: their old flows come off, the new ones go on, and the bottleneck is read over
// the links touched. The same numbers as a full evaluation (PlacementLimits::incrementalRing).
//
// RingScorer puts its flows into the request's JobFlows and keeps the last order's per-edge
// state between evaluations. Owned by the request's Evaluator; not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "routing/placement/epoch_marks.h"
#include "routing/placement/host_order.h"
#include "routing/placement/job_flows.h"
#include "routing/placement/objective.h"
#include "routing/placement/scoring_context.h"

namespace ibfabric::routing::placement {

/// Calls f(HCA of `from`, HCA of `to`) for every rail both hosts have (HCAs matched by HCA index),
/// in rail order, while f returns true. False when f stopped it.
template <typename F>
bool forEachRail(const PlacementIndex& ix, HostId from, HostId to, F&& f) {
  const auto& a = ix.hosts()[from].hcas;
  const auto& b = ix.hosts()[to].hcas;
  std::size_t x = 0, y = 0;
  while (x < a.size() && y < b.size()) {
    if (a[x].hcaIndex < b[y].hcaIndex) {
      ++x;
    } else if (b[y].hcaIndex < a[x].hcaIndex) {
      ++y;
    } else if (!f(a[x++], b[y++])) {
      return false;
    }
  }
  return true;
}

class RingScorer {
 public:
  RingScorer(const ScoringContext& ctx, JobFlows& flows) : ctx_(ctx), flows_(flows) {}

  /// One ring edge, host `from` to host `to`, rail by rail (HCA k of one host to HCA k of the
  /// next, merged by HCA index): adds its flows (`sign` > 0) or takes them off. Returns the most
  /// switches any of its routes crosses; counts its flows without a route into `unrouted`.
  int edge(HostId from, HostId to, int sign, std::uint32_t& unrouted);
  /// Adds the flows of `order` (to clear JobFlows) and keeps its edges as the state; sets the
  /// unrouted flows and the hop count of `e`.
  void addFull(const Order& order, Eval& e);
  /// Moves the flows in place to `order` when it differs from the state's order in at most
  /// kMaxChanges positions (false, nothing changed, otherwise); sets `e` as addFull() does.
  bool fromState(const Order& order, Eval& e);

  /// True when the flows in place are the state's order (the incremental step is possible).
  bool valid() const { return state_.valid; }
  /// The flows in place are no longer the state's.
  void invalidate() { state_.valid = false; }

  static constexpr std::size_t kMaxChanges = 8;

 private:
  struct State {
    bool valid = false;
    Order order;
    std::vector<int> edgeHops;                // per edge i (order[i] -> order[i + 1])
    std::vector<std::uint32_t> edgeUnrouted;  // per edge
    std::array<std::uint32_t, PlacementIndex::kMaxSwitchHops + 1> edgesByHops{};
    std::uint64_t unrouted = 0;
    std::uint64_t work = 0;  // of its full evaluation
  };

  /// The edges next to the positions where `order` differs from the state's (false when more
  /// than kMaxChanges positions do), into changedEdges_.
  bool changedEdges(const Order& order);
  void putEdge(const Order& order, std::size_t k);
  void dropEdge(std::size_t k);
  /// Links whose flows came off entirely leave JobFlows::touched; links put back are listed once.
  void compactTouched();
  void read(Eval& e) const;

  ScoringContext ctx_;
  JobFlows& flows_;
  State state_;
  std::vector<std::size_t> changedEdges_;
  EpochMarks linkSeen_;
};

}  // namespace ibfabric::routing::placement
