// Merged route trees towards one destination: the walk at the heart of the alltoall scoring.
//
// LID routing depends only on the destination, so the flows to one destination form a tree: all
// flows from one source leaf share the path from that leaf on, and flows from different leaves
// merge where their paths meet. Per destination, each source leaf's path is walked only until it
// meets a switch already reached for that destination; the flow counts are then pushed down the
// tree once, farthest switch first. Exact: the same flows per link as tracing every (source,
// destination) pair.
//
// DestinationTrees holds the per-switch walk state and charges every switch walked to the
// request's JobFlows::work. Owned by the request's Evaluator, shared by the full and the
// incremental alltoall scoring; not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "routing/placement/alltoall_rails.h"
#include "routing/placement/job_flows.h"

namespace ibfabric::routing::placement {

class DestinationTrees {
 public:
  DestinationTrees(const PlacementIndex& ix, JobFlows& flows) : ix_(ix), flows_(flows) {}

  /// The flows from `leaves` (source leaf, sources on it; minus `dst` itself when it is one of
  /// the sources) to `dst`, merged per switch: onLink(directed link, flows) once per link of the
  /// tree, onSource(flows, switches to the destination, routed) once per source leaf.
  /// Counts may be negative (a change of the sources: flows that cancel are not pushed on).
  template <typename LeafList, typename OnLink, typename OnSource>
  void route(const Hca& dst, const LeafList& leaves, bool dstIsSource, OnLink&& onLink,
             OnSource&& onSource);

  /// Calls f(HCA) for `hcas` in the order of their rows in the LFT copy (an alltoall's flows do
  /// not depend on the order of destinations), the next row prefetched: the walks stream through
  /// the copy.
  template <typename F>
  void forEachInRowOrder(const Members& hcas, F&& f);

 private:
  static constexpr Column kNoColumn = PlacementIndex::kNoColumn;
  struct Walk {  // per switch column, for the current destination (valid when stamp == stamp_)
    std::uint32_t stamp = 0;
    std::int64_t acc = 0;  // flows that leave this switch towards the destination
    DirectedLinkId tx = PlacementIndex::kNoLink;
    Column next = kNoColumn;  // the next switch, kNoColumn at the end of the path
    int height = 0;           // switches from here to the end of the path (0 = being walked)
    bool routed = false;      // the path from here reaches the destination
  };

  /// Starts the tree of `dst`: no switch reached yet. Returns its row of egress ports.
  const std::uint8_t* begin(const Hca& dst);
  /// Walks from `leaf` until a switch already reached for this destination (or the end of the
  /// path), then sets the heights back along the new part of the path.
  void walkFrom(Column leaf, const std::uint8_t* row, const Hca& dst);
  /// Pushes the counts down the tree. A walk's new switches lead only to themselves or to
  /// switches of earlier walks: the walks in reverse order, each from its source on, is a
  /// topological order.
  template <typename OnLink>
  void pushDown(OnLink&& onLink);

  const PlacementIndex& ix_;
  JobFlows& flows_;
  std::vector<Walk> walk_;
  std::uint32_t stamp_ = 0;
  std::vector<Column> walked_, path_;
  std::vector<std::uint32_t> segments_;  // start of each walk's switches in walked_
  std::vector<std::uint8_t> rowScratch_;
  std::vector<const Hca*> dsts_;
};

// --- Inline: the walks are the alltoall's inner loop.

inline const std::uint8_t* DestinationTrees::begin(const Hca& dst) {
  if (walk_.empty()) walk_.resize(ix_.switchCount());
  if (++stamp_ == 0) {
    for (auto& w : walk_) w.stamp = 0;
    stamp_ = 1;
  }
  const std::uint8_t* row = ix_.destinationRow(dst.lid);
  if (!row) {
    rowScratch_.resize(ix_.switchCount());
    ix_.fillRow(dst.lid, rowScratch_.data());
    row = rowScratch_.data();
  }
  walked_.clear();
  segments_.clear();
  return row;
}

inline void DestinationTrees::walkFrom(Column leaf, const std::uint8_t* row, const Hca& dst) {
  path_.clear();
  segments_.push_back(static_cast<std::uint32_t>(walked_.size()));
  Column cur = leaf;
  while (walk_[cur].stamp != stamp_) {
    Walk& w = walk_[cur];
    w = Walk{};
    w.stamp = stamp_;
    path_.push_back(cur);
    walked_.push_back(cur);
    ++flows_.work;
    const PlacementIndex::Hop* h =
        row[cur] == SwitchTable::kNoPort ? nullptr : ix_.hop(cur, row[cur]);
    if (!h || h->tx == PlacementIndex::kNoLink) {
      w.height = 1;
      break;
    }
    w.tx = h->tx;
    if (!h->toSwitch()) {
      w.height = 1;
      w.routed = h->toCa(dst.node);
      break;
    }
    w.next = h->remote;
    cur = h->remote;
  }
  for (std::size_t i = path_.size(); i-- > 0;) {
    Walk& w = walk_[path_[i]];
    if (w.height != 0) continue;
    const Walk& n = walk_[w.next];
    if (n.height == 0) {  // a loop back into this path: it ends here, unrouted
      w.next = kNoColumn;
      w.height = 1;
    } else {
      w.height = n.height + 1;
      w.routed = n.routed && w.height <= PlacementIndex::kMaxSwitchHops;
    }
  }
}

template <typename OnLink>
void DestinationTrees::pushDown(OnLink&& onLink) {
  segments_.push_back(static_cast<std::uint32_t>(walked_.size()));
  for (std::size_t k = segments_.size() - 1; k-- > 0;) {
    for (std::uint32_t i = segments_[k]; i < segments_[k + 1]; ++i) {
      const Walk& w = walk_[walked_[i]];
      if (w.acc == 0) continue;
      if (w.tx != PlacementIndex::kNoLink) onLink(w.tx, w.acc);
      if (w.next != kNoColumn) walk_[w.next].acc += w.acc;
    }
  }
}

template <typename LeafList, typename OnLink, typename OnSource>
void DestinationTrees::route(const Hca& dst, const LeafList& leaves, bool dstIsSource,
                             OnLink&& onLink, OnSource&& onSource) {
  const std::uint8_t* row = begin(dst);
  for (const auto& [leaf, count] : leaves) {
    const std::int64_t c =
        static_cast<std::int64_t>(count) - (dstIsSource && dst.leafColumn == leaf ? 1 : 0);
    if (c == 0) continue;
    walkFrom(leaf, row, dst);
    Walk& src = walk_[leaf];
    src.acc += c;
    onSource(c, src.height, src.routed);
  }
  pushDown(onLink);
}

template <typename F>
void DestinationTrees::forEachInRowOrder(const Members& hcas, F&& f) {
  dsts_.assign(hcas.begin(), hcas.end());
  std::sort(dsts_.begin(), dsts_.end(), [&](const auto* x, const auto* y) {
    return ix_.rowPosition(x->lid) < ix_.rowPosition(y->lid);
  });
  for (std::size_t i = 0; i < dsts_.size(); ++i) {
    if (i + 1 < dsts_.size()) {
      if (const std::uint8_t* next = ix_.destinationRow(dsts_[i + 1]->lid)) {
        for (std::size_t b = 0; b < ix_.switchCount(); b += 64) __builtin_prefetch(next + b);
      }
    }
    f(*dsts_[i]);
  }
}

}  // namespace ibfabric::routing::placement
