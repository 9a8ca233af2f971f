#include "discovery/fabric_memory.h"

#include <functional>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "discovery/topology_edit.h"

namespace ibfabric {
namespace {

using SysTime = std::chrono::system_clock::time_point;

/// Adds `n` as it is shown: its name, and missing with `missing` when set.
void addNodeAs(TopologyBuilder& b, const Node& n, const std::optional<Absence>& missing) {
  b.addNode(nodeInfoOf(n));
  b.setDescription(n.guid, n.description);
  if (missing) b.markMissing(n.guid, *missing);
}

/// A port as a missing node keeps it: identity only, Down, no LID, no rate.
Port missingPort(const Port& p) {
  Port out;
  out.num = p.num;
  out.guid = p.guid;
  out.state = PortState::kDown;
  out.physState = PhysPortState::kPolling;
  out.widthSupported = p.widthSupported;
  out.widthEnabled = p.widthEnabled;
  out.speedSupported = p.speedSupported;
  out.speedEnabled = p.speedEnabled;
  return out;
}

/// Copies the nodes of `t` that `keepNode` keeps (missing ones with missingPort()) and the cables
/// between them that `keepLink` keeps, flags included.
void copyInto(TopologyBuilder& b, const Topology& t,
              const std::function<bool(const Node&)>& keepNode,
              const std::function<bool(const Link&)>& keepLink) {
  for (const Node& n : t.nodes()) {
    if (!keepNode(n)) continue;
    addNodeAs(b, n, n.missing);
    for (const auto& p : n.ports)
      if (p) b.addPort(n.guid, n.missing ? missingPort(*p) : *p);
  }
  for (const Link& l : t.links()) {
    const Node& a = t.node(l.a.node);
    const Node& z = t.node(l.b.node);
    if (!keepNode(a) || !keepNode(z) || !keepLink(l)) continue;
    if (l.missing)
      b.connectMissing(a.guid, l.a.port, z.guid, l.b.port, *l.missing);
    else
      b.connect(a.guid, l.a.port, z.guid, l.b.port);
  }
}

bool expired(const std::optional<Absence>& a, SysTime now, const RememberOptions& o) {
  return a && o.forgetAfter.count() > 0 && now - a->since > o.forgetAfter;
}

}  // namespace

TopologyPtr rememberMissing(const Topology& remembered, SysTime rememberedAt, TopologyPtr live,
                            SysTime now, const RememberOptions& options) {
  const Topology& l = *live;
  const Absence fresh{now, rememberedAt};

  std::vector<const Node*> nodes;  // remembered nodes the crawl lacks
  std::unordered_set<Guid> carried;
  for (const Node& n : remembered.nodes()) {
    if (l.findNode(n.guid) || expired(n.missing, now, options)) continue;
    nodes.push_back(&n);
    carried.insert(n.guid);
  }
  // A cable end that can be kept: a carried node's port, or a live port without a cable.
  auto freeEnd = [&](const Node& n, PortNum p) {
    if (carried.count(n.guid)) return n.port(p) != nullptr;
    const Node* ln = l.findNode(n.guid);
    const Port* lp = ln ? ln->port(p) : nullptr;
    return lp && !lp->remote;
  };
  struct Cable {
    const Node* a;
    PortNum pa;
    const Node* b;
    PortNum pb;
    Absence absence;
  };
  std::vector<Cable> cables;
  for (const Link& link : remembered.links()) {
    const Node& a = remembered.node(link.a.node);
    const Node& b = remembered.node(link.b.node);
    if (expired(link.missing, now, options)) continue;
    if (!freeEnd(a, link.a.port) || !freeEnd(b, link.b.port)) continue;  // seen, moved or gone
    cables.push_back({&a, link.a.port, &b, link.b.port, link.missing.value_or(fresh)});
  }
  if (nodes.empty() && cables.empty()) return live;

  TopologyBuilder b;
  b.reserve(l.nodes().size() + nodes.size());
  const auto all = [](const auto&) { return true; };
  copyInto(b, l, all, all);
  for (const Node* n : nodes) {
    addNodeAs(b, *n, n->missing.value_or(fresh));
    for (const auto& p : n->ports)
      if (p) b.addPort(n->guid, missingPort(*p));
  }
  for (const Cable& c : cables) b.connectMissing(c.a->guid, c.pa, c.b->guid, c.pb, c.absence);
  CrawlStats stats = l.stats();
  stats.buildTime = {};
  b.setStats(std::move(stats));
  return b.build();
}

TopologyPtr forgetMissing(const Topology& t, Guid node, std::optional<PortNum> port) {
  const Node* n = t.findNode(node);
  if (!n) throw std::invalid_argument("no node " + toString(node) + " in the fabric model");
  if (port) {
    const Port* p = n->port(*port);
    if (!p || !p->link)
      throw std::invalid_argument("no cable at port " + toString(*port) + " of " + n->description);
    const Link& cable = t.links()[*p->link];
    if (!cable.missing)
      throw std::invalid_argument("the cable at port " + toString(*port) + " of " + n->description +
                                  " is present, not missing");
    const Link* drop = &cable;
    TopologyBuilder b;
    b.reserve(t.nodes().size());
    copyInto(
        b, t, [](const Node&) { return true; }, [&](const Link& l) { return &l != drop; });
    b.setStats(t.stats());
    return b.build();
  }
  if (!n->missing)
    throw std::invalid_argument(n->description + " (" + toString(node) +
                                ") is present, not missing");
  TopologyBuilder b;
  b.reserve(t.nodes().size());
  copyInto(
      b, t, [&](const Node& x) { return x.guid != node; }, [](const Link&) { return true; });
  b.setStats(t.stats());
  return b.build();
}

MissingCounts countMissing(const Topology& t) {
  MissingCounts c;
  for (const Node& n : t.nodes()) {
    if (!n.missing) continue;
    if (n.isSwitch())
      ++c.switches;
    else if (n.isCa())
      ++c.cas;
    else
      ++c.routers;
  }
  for (const Link& l : t.links()) c.links += l.missing ? 1 : 0;
  return c;
}

}  // namespace ibfabric
