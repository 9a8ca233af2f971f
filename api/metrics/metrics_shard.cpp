#include "api/metrics/metrics_shard.h"

#include <charconv>

namespace ibfabric::api {
namespace {

// splitmix64's finaliser: every GUID bit moves every shard, so sequential GUIDs spread evenly.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::optional<unsigned> decimal(std::string_view s) {
  unsigned v = 0;
  if (s.empty() || s.size() > 9) return std::nullopt;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

bool MetricsShard::keeps(Guid switchGuid) const {
  return whole() || mix(switchGuid.value()) % count == index;
}

std::optional<MetricsShard> MetricsShard::parse(std::optional<std::string_view> shard,
                                                std::optional<std::string_view> shards,
                                                std::string& error) {
  if (!shard && !shards) return MetricsShard{};
  if (!shard || !shards) {
    error = "shard and shards go together (shard=I&shards=N)";
    return std::nullopt;
  }
  const auto n = decimal(*shards);
  if (!n || *n < 1 || *n > kMaxCount) {
    error = "shards must be an integer from 1 to " + std::to_string(kMaxCount);
    return std::nullopt;
  }
  const auto i = decimal(*shard);
  if (!i || *i >= *n) {
    error = "shard must be an integer from 0 to shards-1";
    return std::nullopt;
  }
  return MetricsShard{*i, *n};
}

}  // namespace ibfabric::api
