// MetricsShard: which part of the fabric one /metrics scrape exports, so that a fabric too large
// for one Prometheus can be split across several scrape jobs (`/metrics?shard=I&shards=N`).
//
// A shard keeps the per-port, per-link and per-node series of the switches whose GUID hashes to
// it (splitmix64(guid) % count == index: stable across restarts, versions and fabric changes; a
// CA port and its cable go with the switch at the other end). Fabric-wide families (readiness,
// sweep and crawl status, collector status, counts) are in every shard, so every scrape job has
// what the alert rules join on. A value type; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "discovery/types.h"

namespace ibfabric::api {

struct MetricsShard {
  /// Largest accepted shard count.
  static constexpr unsigned kMaxCount = 1024;

  unsigned index = 0;
  unsigned count = 1;

  /// The whole fabric (one shard).
  bool whole() const { return count <= 1; }
  /// Whether this shard exports the series of switch `switchGuid` (always, for the whole).
  bool keeps(Guid switchGuid) const;
  /// "shard=I&shards=N" parameters: both absent = the whole fabric; otherwise both must be
  /// decimal integers with 1 <= N <= kMaxCount and 0 <= I < N. nullopt + `error` when not.
  static std::optional<MetricsShard> parse(std::optional<std::string_view> shard,
                                           std::optional<std::string_view> shards,
                                           std::string& error);
};

}  // namespace ibfabric::api
