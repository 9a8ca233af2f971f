#include "api/http/list_index.h"

#include <algorithm>

#include "api/http/json_views.h"
#include "discovery/formats.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using telemetry::LinkHealthReport;
using telemetry::PortKey;

std::uint8_t typeRank(NodeType t) {
  switch (t) {
    case NodeType::kSwitch:
      return 0;
    case NodeType::kCa:
      return 1;
    default:
      return 2;
  }
}

/// A non-negative integer up to `max` (the parser gives unsigned numbers, a built key signed ones).
std::optional<unsigned> smallUint(const json& j, unsigned max) {
  if (!j.is_number_integer() || j.get<std::int64_t>() < 0 || j.get<std::int64_t>() > max)
    return std::nullopt;
  return j.get<unsigned>();
}

std::optional<Guid> guidOf(const json& j) {
  if (!j.is_string()) return std::nullopt;
  return parseGuid(j.get<std::string>());
}

}  // namespace

NodeKey nodeKey(const Node& n) { return {typeRank(n.type), n.guid}; }

LinkKey linkKey(const Topology& t, std::uint32_t link) {
  const PortRef& a = t.links()[link].a;
  return {nodeKey(t.node(a.node)), a.port};
}

json toJson(const NodeKey& k) { return json::array({k.rank, toString(k.guid)}); }

json toJson(const LinkKey& k) {
  return json::array({k.node.rank, toString(k.node.guid), k.port.value()});
}

std::optional<NodeKey> nodeKeyFromJson(const json& k) {
  if (!k.is_array() || k.size() != 2) return std::nullopt;
  auto rank = smallUint(k[0], 2);
  auto g = guidOf(k[1]);
  if (!rank || !g) return std::nullopt;
  return NodeKey{static_cast<std::uint8_t>(*rank), *g};
}

std::optional<LinkKey> linkKeyFromJson(const json& k) {
  if (!k.is_array() || k.size() != 3) return std::nullopt;
  auto node = nodeKeyFromJson(json::array({k[0], k[1]}));
  auto port = smallUint(k[2], 255);
  if (!node || !port) return std::nullopt;
  return LinkKey{*node, PortNum(static_cast<std::uint8_t>(*port))};
}

TopologyOrder orderOf(const Topology& t) {
  TopologyOrder o;
  o.links.resize(t.links().size());
  for (std::uint32_t i = 0; i < o.links.size(); ++i) o.links[i] = i;
  std::vector<LinkKey> keys(o.links.size());
  for (std::uint32_t i = 0; i < keys.size(); ++i) keys[i] = linkKey(t, i);
  // Already in key order when the builder listed the links by their `a` end.
  if (!std::is_sorted(keys.begin(), keys.end()))
    std::sort(o.links.begin(), o.links.end(),
              [&](std::uint32_t x, std::uint32_t y) { return keys[x] < keys[y]; });
  o.hosts.resize(t.hosts().size());
  for (std::uint32_t i = 0; i < o.hosts.size(); ++i) o.hosts[i] = i;
  std::sort(o.hosts.begin(), o.hosts.end(), [&](std::uint32_t x, std::uint32_t y) {
    return t.hosts()[x].name < t.hosts()[y].name;
  });
  return o;
}

HealthLookup::HealthLookup(const std::vector<LinkHealthReport>& reports, const Topology* t) {
  if (t) {
    byLink_.assign(t->links().size(), kNone);
    for (std::uint32_t i = 0; i < reports.size(); ++i) {
      const LinkHealthReport& r = reports[i];
      if (r.link < byLink_.size() && byLink_[r.link] == kNone) byLink_[r.link] = i;
    }
    return;
  }
  byPort_.reserve(reports.size() * 2);
  for (std::uint32_t i = 0; i < reports.size(); ++i) {
    byPort_.emplace_back(reports[i].a, i);
    byPort_.emplace_back(reports[i].b, i);
  }
  // By key, then by position: the first match of a linear search comes first.
  std::sort(byPort_.begin(), byPort_.end());
}

const LinkHealthReport* HealthLookup::find(const std::vector<LinkHealthReport>* reports,
                                           const Topology& t, Guid guid, PortNum port) const {
  if (!reports) return nullptr;
  if (!byLink_.empty()) {
    // Reports of this topology: a port's report is its link's (a port is in one link).
    const Node* n = t.findNode(guid);
    const Port* p = n ? n->port(port) : nullptr;
    return p && p->link ? ofLink(reports, t, *p->link) : nullptr;
  }
  const PortKey key{guid, port};
  auto it = std::lower_bound(byPort_.begin(), byPort_.end(), std::pair(key, std::uint32_t{0}));
  if (it == byPort_.end() || it->first != key || it->second >= reports->size()) return nullptr;
  return &(*reports)[it->second];
}

const LinkHealthReport* HealthLookup::ofLink(const std::vector<LinkHealthReport>* reports,
                                             const Topology& t, std::uint32_t index) const {
  if (!reports) return nullptr;
  if (byLink_.empty()) {
    const PortRef& a = t.links()[index].a;
    return find(reports, t, t.node(a.node).guid, a.port);
  }
  const std::uint32_t r = index < byLink_.size() ? byLink_[index] : kNone;
  return r < reports->size() ? &(*reports)[r] : nullptr;
}

LinkFacts ListIndex::linkFacts(const ServiceState& s, std::uint32_t index) const {
  const Topology& t = *s.topology;
  const Link& l = t.links()[index];
  const Node& na = t.node(l.a.node);
  LinkFacts f;
  f.level = std::max(na.level, t.node(l.b.node).level);
  f.activity = t.activity(l);
  f.health = healthOfLink(s, index);
  f.state = linkStateName(l, f.activity, f.health);
  return f;
}

ListIndex ListIndexCache::get(const ServiceState& s) {
  std::lock_guard lock(mu_);
  if (!order_ || topology_.lock() != s.topology) {
    order_ = std::make_shared<const TopologyOrder>(orderOf(*s.topology));
    topology_ = s.topology;
    ++builds_;
  }
  const bool none = !s.health;
  if (!health_ || none != noReports_ || (!none && reports_.lock() != s.health) ||
      healthTopology_.lock() != s.topology) {
    // Reports index the links of the topology the sweep polled.
    const bool sameTopology = s.counters && s.counters->topology == s.topology;
    health_ = none ? std::make_shared<const HealthLookup>()
                   : std::make_shared<const HealthLookup>(
                         *s.health, sameTopology ? s.topology.get() : nullptr);
    reports_ = s.health;
    healthTopology_ = s.topology;
    noReports_ = none;
    ++builds_;
  }
  return {order_, health_};
}

std::uint64_t ListIndexCache::builds() const {
  std::lock_guard lock(mu_);
  return builds_;
}

}  // namespace ibfabric::api
