#include "api/service/crawl_check.h"

#include <algorithm>
#include <set>

#include "discovery/topology_delta.h"
#include "discovery/topology_edit.h"

namespace ibfabric::api {
namespace {

bool linkUp(const Port& p) {
  return p.state == PortState::kActive || p.physState == PhysPortState::kLinkUp;
}

/// The cables of `t` that were seen (remembered missing ones left out).
std::set<LinkKey> cablesOf(const Topology& t) {
  std::set<LinkKey> out;
  for (const Link& l : t.links()) {
    if (l.missing) continue;
    const Node& a = t.node(l.a.node);
    const Node& b = t.node(l.b.node);
    out.insert(LinkKey::of(a.guid, l.a.port, b.guid, l.b.port));
  }
  return out;
}

/// The port of `now` at (guid, port) reads as not up: the cable's removal is confirmed there.
bool readsDown(const Topology& now, Guid guid, PortNum port) {
  const Node* n = now.findNode(guid);
  const Port* p = n ? n->port(port) : nullptr;
  return p && !linkUp(*p);
}

}  // namespace

CrawlGaps crawlGaps(const Topology& t) {
  CrawlGaps g;
  g.empty = t.nodes().empty();
  for (const Node& n : t.nodes()) {
    for (int i = 1; i <= n.numPorts; ++i) {
      const Port* p = n.port(PortNum{static_cast<std::uint8_t>(i)});
      if (!p) {
        // libibnetdisc reads every port of a switch, and only the port it entered a CA by.
        if (n.isSwitch()) ++g.unreadPorts;
        continue;
      }
      if (!p->remote && linkUp(*p)) ++g.unexploredPorts;
    }
  }
  return g;
}

double CrawlLoss::fraction() const {
  const double nodes = nodesBefore ? static_cast<double>(nodesLost) / nodesBefore : 0.0;
  const double links = linksBefore ? static_cast<double>(linksLost) / linksBefore : 0.0;
  return std::max(nodes, links);
}

CrawlLoss crawlLoss(const Topology& before, const Topology& now) {
  CrawlLoss loss;
  // What was seen before: hardware already missing then is no loss now.
  for (const Node& n : before.nodes()) {
    if (n.missing) continue;
    ++loss.nodesBefore;
    if (!now.findNode(n.guid)) ++loss.nodesLost;
  }
  const auto cables = cablesOf(now);
  const auto seen = cablesOf(before);
  loss.linksBefore = seen.size();
  for (const LinkKey& k : seen)
    if (!cables.count(k)) ++loss.linksLost;
  return loss;
}

CrawlVerdict judgeCrawl(const Topology& believed, const Topology& now,
                        const CrawlCheckOptions& options) {
  CrawlVerdict v;
  v.loss = crawlLoss(believed, now);
  v.gaps = crawlGaps(now);
  if (!options.enabled || v.gaps.total() == 0 || v.loss.fraction() <= options.maxLoss) return v;
  v.plausible = false;
  v.reason = std::string(v.gaps.empty ? "crawl found not even the local node: " : "") +
             "crawl lost " + std::to_string(v.loss.nodesLost) + " of " +
             std::to_string(v.loss.nodesBefore) + " nodes and " + std::to_string(v.loss.linksLost) +
             " of " + std::to_string(v.loss.linksBefore) + " links while " +
             std::to_string(v.gaps.unreadPorts) + " switch port(s) went unread and " +
             std::to_string(v.gaps.unexploredPorts) + " linked port(s) unexplored (MADs failing)";
  return v;
}

CrawlChecker::Kept CrawlChecker::keep(const TopologyPtr& believed, const Topology& now) {
  std::map<Guid, std::uint32_t> absent;
  for (const Node& n : believed->nodes())
    if (!n.missing && !now.findNode(n.guid)) absent[n.guid] = absent_[n.guid] + 1;
  absent_ = std::move(absent);
  auto gone = [&](Guid g) {
    auto it = absent_.find(g);
    return it != absent_.end() && it->second >= options_.removalAfter;
  };

  const auto cables = cablesOf(now);
  TopologyEdit edit;
  for (const Link& l : believed->links()) {
    if (l.missing) continue;  // known missing already
    const Node& a = believed->node(l.a.node);
    const Node& b = believed->node(l.b.node);
    const LinkKey key = LinkKey::of(a.guid, l.a.port, b.guid, l.b.port);
    if (cables.count(key)) continue;
    const bool confirmed = gone(a.guid) || gone(b.guid) || readsDown(now, a.guid, l.a.port) ||
                           readsDown(now, b.guid, l.b.port);
    if (!confirmed) continue;
    edit.removeLinks.push_back(key);
    for (const auto& [node, port] : {std::pair{&a, l.a.port}, std::pair{&b, l.b.port}}) {
      PortStateUpdate u;
      u.node = node->guid;
      u.port = port;
      const Node* n = now.findNode(node->guid);
      if (const Port* p = n ? n->port(port) : nullptr) {
        u.state = p->state;
        u.physState = p->physState;
      }
      edit.ports.push_back(u);
    }
  }
  if (edit.empty()) return {believed, 0};
  return {applyTopologyEdit(*believed, edit), edit.removeLinks.size()};
}

}  // namespace ibfabric::api
