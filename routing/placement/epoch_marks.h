// EpochMarks: marks over a fixed range of indices, all cleared at once.
//
// Starting a new epoch clears every mark in O(1) (a full clear only when the 32-bit epoch wraps),
// so the scorers can mark links, leaves or hosts once per evaluation without clearing arrays of
// the fabric's size. Owned by the scorer that uses it; not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibfabric::routing::placement {

struct EpochMarks {
  std::vector<std::uint32_t> stamp;
  std::uint32_t epoch = 0;
  /// Starts a new epoch over `size` entries: nothing is marked.
  void clear(std::size_t size) {
    if (stamp.size() != size) stamp.assign(size, 0);
    if (++epoch == 0) {
      std::fill(stamp.begin(), stamp.end(), 0);
      epoch = 1;
    }
  }
  bool marked(std::size_t i) const { return stamp[i] == epoch; }
  /// Marks `i`; true when it was not marked yet in this epoch.
  bool mark(std::size_t i) {
    if (stamp[i] == epoch) return false;
    stamp[i] = epoch;
    return true;
  }
  /// Takes the mark of `i` off (it may be marked again in this epoch).
  void unmark(std::size_t i) { stamp[i] = 0; }
};

}  // namespace ibfabric::routing::placement
