// ListIndex: what the list endpoints (/links, /nodes, /switches, /hosts) page and filter with,
// built once per snapshot instead of per request, so that a page of 100 links costs a binary
// search and 100 renderings, not a walk over the fabric:
//   - the order of each list by its stable key (LinkKey, NodeKey, host name), per Topology;
//   - the health report of a port, per sweep (ServiceState::health is a vector; a link's report
//     was a linear search, once per rendered link);
//   - LinkFacts: what the link filters look at, without rendering the link.
//
// ListIndexCache (owned by the Router) keeps the index of the newest topology and health it was
// asked for, by weak pointer: it never keeps an old snapshot alive. Concurrent first requests for
// a new snapshot share one build. Thread-safe (get() locks); a ListIndex is immutable.
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "api/service/service_state.h"

namespace ibfabric::api {

/// A node's position in /nodes and /switches: type (switches, CAs, routers) then GUID — the
/// order of Topology::nodes().
struct NodeKey {
  std::uint8_t rank = 0;  ///< 0 switch, 1 CA, 2 router
  Guid guid;
  friend auto operator<=>(const NodeKey&, const NodeKey&) = default;
};
/// A link's position in /links: its `a` end (the lower-level one), as a NodeKey and a port.
struct LinkKey {
  NodeKey node;
  PortNum port;
  friend auto operator<=>(const LinkKey&, const LinkKey&) = default;
};

NodeKey nodeKey(const Node& node);
LinkKey linkKey(const Topology& topology, std::uint32_t link);
/// Cursor keys as JSON ([rank, "0x<guid>", port] for a link, [rank, "0x<guid>"] for a node) and
/// back; nullopt for a key of another shape.
nlohmann::json toJson(const NodeKey& key);
nlohmann::json toJson(const LinkKey& key);
std::optional<NodeKey> nodeKeyFromJson(const nlohmann::json& key);
std::optional<LinkKey> linkKeyFromJson(const nlohmann::json& key);

/// The orders of one Topology's lists.
struct TopologyOrder {
  std::vector<std::uint32_t> links;  ///< link indices by LinkKey
  std::vector<std::uint32_t> hosts;  ///< host indices by name
};
TopologyOrder orderOf(const Topology& topology);

/// Health report by link or port for one ServiceState::health vector. When the reports are of
/// the state's own topology (counters->topology == topology: the usual case) they are indexed by
/// link, in one pass; else (a crawl newer than the last sweep) by port GUID, sorted.
class HealthLookup {
 public:
  HealthLookup() = default;
  /// `topology`: the state's topology when the reports index its links, else nullptr.
  HealthLookup(const std::vector<telemetry::LinkHealthReport>& reports, const Topology* topology);
  /// The first report with an end (guid, port) — what findHealth() finds — in `reports` (the
  /// vector this lookup was built from) for a port of `topology` (the state's); nullptr when none.
  const telemetry::LinkHealthReport* find(const std::vector<telemetry::LinkHealthReport>* reports,
                                          const Topology& topology, Guid guid, PortNum port) const;
  /// The same for link `index` of `topology` (by its `a` end).
  const telemetry::LinkHealthReport* ofLink(const std::vector<telemetry::LinkHealthReport>* reports,
                                            const Topology& topology, std::uint32_t index) const;

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  std::vector<std::uint32_t> byLink_;  // report per link index (kNone: none); or empty
  std::vector<std::pair<telemetry::PortKey, std::uint32_t>> byPort_;  // sorted by key
};

/// The link fields the /links filters and sorts read.
struct LinkFacts {
  int level = kUnknownLevel;  ///< of the higher end
  LinkActivity activity = LinkActivity::kDown;
  /// linkStateName(): "down" or "init" while not Active, else the report's state, else the ports'.
  std::string_view state;
  const telemetry::LinkHealthReport* health = nullptr;
};

struct ListIndex {
  std::shared_ptr<const TopologyOrder> order;
  std::shared_ptr<const HealthLookup> health;

  /// The facts of link `index` of `state.topology` (the state this index was built for).
  LinkFacts linkFacts(const ServiceState& state, std::uint32_t index) const;
  const telemetry::LinkHealthReport* healthOf(const ServiceState& state, Guid guid,
                                              PortNum port) const {
    return health->find(state.health.get(), *state.topology, guid, port);
  }
  const telemetry::LinkHealthReport* healthOfLink(const ServiceState& state,
                                                  std::uint32_t index) const {
    return health->ofLink(state.health.get(), *state.topology, index);
  }
};

class ListIndexCache {
 public:
  /// The index of `state` (which has a topology).
  ListIndex get(const ServiceState& state);
  /// Builds so far (tests).
  std::uint64_t builds() const;

 private:
  mutable std::mutex mu_;
  std::weak_ptr<const Topology> topology_;
  std::shared_ptr<const TopologyOrder> order_;
  std::weak_ptr<const std::vector<telemetry::LinkHealthReport>> reports_;
  std::weak_ptr<const Topology> healthTopology_;  // the topology health_ was built with
  bool noReports_ = false;                        // health_ was built for a state without health
  std::shared_ptr<const HealthLookup> health_;
  std::uint64_t builds_ = 0;
};

}  // namespace ibfabric::api
