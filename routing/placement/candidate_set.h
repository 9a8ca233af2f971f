// CandidateSet: the candidate host sets of one request, and their exact evaluation under bounds.
//
// Each candidate is kept once per host set, in rank order (canonicalize()), with an upper bound of
// its objective. evaluateBest() scores them exactly, best bound first, only while they can still
// rank among the best: a candidate whose bound is below the `keep`-th best exact objective (or
// within PlacementLimits::nearTie above it, never the topology-only baseline) is skipped, and
// beyond the `keep` best candidates are scored only within one work budget. Owned by the request
// being answered, it borrows the request's Evaluator; not thread-safe.
#pragma once

#include <cstddef>
#include <limits>
#include <set>
#include <vector>

#include "routing/placement/evaluator.h"
#include "routing/placement/host_order.h"
#include "routing/placement/objective.h"

namespace ibfabric::routing::placement {

struct Candidate {
  Order order;
  Eval eval;  // exact, when evaluated
  double bound = std::numeric_limits<double>::infinity();
  bool evaluated = false;
  bool baseline = false;  ///< topology-only best fit: never skipped on a near tie
};

/// Puts `order` in the canonical rank order: blocks by (group, block), hosts by name (ring
/// neighbours share a leaf).
void canonicalize(const PlacementIndex& ix, Order& order);

class CandidateSet {
 public:
  CandidateSet(Evaluator& evaluator, CommPattern pattern) : ev_(evaluator), pattern_(pattern) {}

  /// Adds `order` (put in rank order) with its upper bound, unless its host set is already in.
  void consider(Order order, bool baseline = false);
  /// Exact evaluation of the candidates not evaluated yet: all of them but those whose bound is
  /// below the `keep`-th best exact objective (they could not be among the answer's or the local
  /// search's candidates). Unevaluated ones keep their default objective.
  void evaluateBest(std::size_t keep);
  /// Best first: evaluated ones by objective, then the rest; ties by order.
  void sortBest();
  /// Adds the improved sets whose host set is new; one already in is replaced when it was not
  /// evaluated or scores below. Then sortBest().
  void merge(const std::vector<Candidate>& improved);

  bool empty() const { return all_.empty(); }
  std::size_t size() const { return all_.size(); }
  const Candidate& operator[](std::size_t i) const { return all_[i]; }

 private:
  /// The unevaluated candidates' positions, best bound first.
  std::vector<std::size_t> pendingByBound() const;
  /// The `keep` best exact objectives so far, descending.
  std::vector<double> bestExact(std::size_t keep) const;
  /// True when `c` cannot beat `kth` (the `keep`-th best exact objective): by its bound, then,
  /// for an alltoall, by its sharper first-hop bound (kept in c.bound).
  bool ruledOut(Candidate& c, double kth);

  Evaluator& ev_;
  CommPattern pattern_;
  std::vector<Candidate> all_;
  std::set<std::vector<HostId>> seen_;  // host sets, sorted by id
};

}  // namespace ibfabric::routing::placement
