// The rails of an alltoall host set, and the source leaves of a rail.
//
// An alltoall runs rail by rail: every HCA talks to the HCAs of the same HCA index. RailGroups
// splits a host set's HCAs by rail (the cabled ones, and a count of those without a cable);
// LeafCounter counts a rail's members per leaf switch (the sources whose flows merge into one
// walk per destination). Scratch owned by one scorer, reused between evaluations; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "routing/placement/epoch_marks.h"
#include "routing/placement/host_order.h"
#include "routing/placement_engine.h"

namespace ibfabric::routing::placement {

using Column = std::uint32_t;  ///< a switch, by PlacementIndex::switchColumn()
using Hca = PlacementIndex::Hca;
using Members = std::vector<const Hca*>;
/// Source leaves with their member counts, in first-appearance order.
using Leaves = std::vector<std::pair<Column, std::uint32_t>>;

struct RailGroups {
  std::vector<int> ids;                 ///< the rails (HCA indices), ascending
  std::vector<Members> members;         ///< per rail (index into ids): cabled HCAs, in order
  std::vector<std::uint32_t> uncabled;  ///< per rail: HCAs without a link (no route at all)

  /// The rails of `order`'s hosts; `members` keeps spare (empty) entries beyond ids.size().
  void group(const PlacementIndex& ix, const Order& order);
};

class LeafCounter {
 public:
  /// Source leaves of `members` (first appearance order) with their counts, into `out`.
  void count(const PlacementIndex& ix, const Members& members, Leaves& out);

 private:
  std::vector<std::uint32_t> perLeaf_;  // valid where seen_ is marked
  EpochMarks seen_;
};

}  // namespace ibfabric::routing::placement
