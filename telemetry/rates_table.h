// RatesTable: the rates of one sweep (every port's PortRates) in a compact, sorted, read-only
// table — what the daemon's published state holds between sweeps and what readers look up.
//
// A PortRates is a convenient value (~560 bytes: 17 counters with their delta, rate per second
// and state, and seven optional derived values); 61,440 of them in a std::map held ~37 MB at
// 10,240 HCAs, twice during every sweep. The table keeps what cannot be derived — per counter
// the delta and the state (2 bits) and whether it saturated (1 bit); the interval; the derived
// values as doubles (NaN: none) and the XmitWait tick — ~240 bytes per port in one vector, and
// rebuilds the PortRates on read. Rebuilt values equal the originals exactly: a counter's rate
// per second is its delta over the interval, computed as counterDelta() computes it
// (tests/unit/rates_table_test.cpp).
//
// Built once (from PortRates in any order; keys must be unique), then immutable: thread-safe
// for readers. Iteration yields PortRates values in key order.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <vector>

#include "telemetry/port_rates.h"

namespace ibfabric::telemetry {

class RatesTable {
  struct Entry;

 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = PortRates;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = PortRates;
    const_iterator() = default;
    PortRates operator*() const;
    const_iterator& operator++() {
      ++at_;
      return *this;
    }
    const_iterator operator++(int) {
      auto before = *this;
      ++at_;
      return before;
    }
    friend bool operator==(const const_iterator&, const const_iterator&) = default;

   private:
    friend class RatesTable;
    explicit const_iterator(const Entry* at) : at_(at) {}
    const Entry* at_ = nullptr;
  };

  RatesTable() = default;
  /// Sorts by key; throws std::invalid_argument on a repeated key.
  explicit RatesTable(const std::vector<PortRates>& rates);

  /// Appends one port's rates; keys must come in increasing order (the snapshot's port order),
  /// else std::invalid_argument.
  void append(const PortRates& rates);
  void reserve(std::size_t ports) { entries_.reserve(ports); }
  /// Gives back the spare capacity of a table built with append() (no copy when there is none).
  void shrinkToFit() { entries_.shrink_to_fit(); }

  std::optional<PortRates> find(PortKey key) const;
  bool contains(PortKey key) const { return locate(key) != nullptr; }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const_iterator begin() const { return const_iterator(entries_.data()); }
  const_iterator end() const { return const_iterator(entries_.data() + entries_.size()); }
  /// Bytes held by the entries (capacity included).
  std::size_t bytes() const { return entries_.capacity() * sizeof(Entry); }

 private:
  struct Entry {
    PortKey key;
    double intervalSeconds = 0.0;
    double xmitWaitTickSeconds = 0.0;
    std::array<std::uint64_t, kCounterCount> deltas{};
    std::uint64_t states = 0;         // 2 bits of DeltaState per counter, then 1 saturated bit each
    std::array<double, 7> derived{};  // tx/rx bytes, tx/rx packets, tx/rx utilization, congestion
    bool xmitWaitTickFromDevice = false;
  };
  static Entry encode(const PortRates& rates);
  static PortRates decode(const Entry& entry);
  const Entry* locate(PortKey key) const;

  std::vector<Entry> entries_;
};

}  // namespace ibfabric::telemetry
