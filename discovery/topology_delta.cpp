#include "discovery/topology_delta.h"

#include <tuple>
#include <utility>

#include "discovery/link_health.h"

namespace ibfabric {
namespace {

LinkEnd endOf(const Topology& t, PortRef ref) {
  LinkEnd e;
  e.node = NodeSummary::of(t.node(ref.node));
  e.port = ref.port;
  if (const Port* p = t.port(ref)) {
    e.portGuid = p->guid;
    e.lid = p->lid;
    e.state = p->state;
    e.physState = p->physState;
    e.activeRate = p->activeRate;
  }
  return e;
}

// The link of `t` between (g1, p1) and (g2, p2), if that cable exists there.
const Link* findLink(const Topology& t, Guid g1, PortNum p1, Guid g2, PortNum p2) {
  const Node* n = t.findNode(g1);
  if (!n) return nullptr;
  const Port* p = n->port(p1);
  if (!p || !p->remote || !p->link) return nullptr;
  const Node& r = t.node(p->remote->node);
  if (r.guid != g2 || p->remote->port != p2) return nullptr;
  return &t.links()[*p->link];
}

std::string name(const NodeSummary& n) {
  return "\"" + (n.description.empty() ? toString(n.guid) : n.description) + "\"";
}

std::string label(const LinkEnd& e) { return name(e.node) + "[" + toString(e.port) + "]"; }

std::string ends(const LinkSnapshot& l) { return label(l.a) + " <-> " + label(l.b); }

std::string status(const LinkSnapshot& l) {
  std::string s(toString(l.a.state));
  if (l.a.state != l.b.state) s += "/" + std::string(toString(l.b.state));
  if (l.rate) s += " " + rateLabel(*l.rate);
  return s;
}

bool sameEnds(const LinkSnapshot& x, const LinkSnapshot& y) {
  return x.a.node.guid == y.a.node.guid && x.a.port == y.a.port;
}

LinkSnapshot flipped(LinkSnapshot l) {
  std::swap(l.a, l.b);
  l.rate = l.a.activeRate;
  return l;
}

std::optional<LinkWidth> widthOf(const std::optional<LinkRate>& r) {
  return r ? std::optional(r->width) : std::nullopt;
}
std::optional<LinkSpeed> speedOf(const std::optional<LinkRate>& r) {
  return r ? std::optional(r->speed) : std::nullopt;
}

}  // namespace

NodeSummary NodeSummary::of(const Node& node) {
  NodeSummary s;
  s.guid = node.guid;
  s.type = node.type;
  s.description = node.description;
  s.nodeDescription = node.nodeDescription;
  s.lid = node.lid();
  s.numPorts = node.numPorts;
  return s;
}

LinkKey LinkKey::of(Guid g1, PortNum p1, Guid g2, PortNum p2) {
  if (std::tie(g2, p2) < std::tie(g1, p1)) return LinkKey{g2, p2, g1, p1};
  return LinkKey{g1, p1, g2, p2};
}

LinkSnapshot LinkSnapshot::of(const Topology& topology, const Link& link) {
  LinkSnapshot s;
  s.a = endOf(topology, link.a);
  s.b = endOf(topology, link.b);
  s.rate = link.rate;
  s.enabledRate = link.enabledRate;
  s.missing = link.missing.has_value();
  s.nodeMissing = topology.node(link.a.node).missing || topology.node(link.b.node).missing;
  return s;
}

TopologyDelta::TopologyDelta(TopologyPtr before, TopologyPtr after)
    : before_(std::move(before)), after_(std::move(after)) {
  static const TopologyPtr kEmpty = TopologyBuilder().build();
  const Topology& o = before_ ? *before_ : *kEmpty;
  const Topology& n = after_ ? *after_ : *kEmpty;

  // Nodes and the LIDs of the ports that own one.
  for (const Node& on : o.nodes()) {
    const Node* nn = n.findNode(on.guid);
    if (!nn) {
      nodesRemoved_.push_back({NodeSummary::of(on)});
      continue;
    }
    if (on.description != nn->description || on.nodeDescription != nn->nodeDescription)
      descriptionsChanged_.push_back({NodeSummary::of(on), NodeSummary::of(*nn)});
    for (const auto& op : on.ports) {
      if (!op) continue;
      if (on.isSwitch() ? op->num.value() != 0 : op->num.value() == 0) continue;
      const Port* np = nn->port(op->num);
      if (!np || np->lid == op->lid) continue;
      lidsChanged_.push_back({NodeSummary::of(*nn), op->num, np->guid, op->lid, np->lid});
    }
  }
  for (const Node& nn : n.nodes())
    if (!o.findNode(nn.guid)) nodesAdded_.push_back({NodeSummary::of(nn)});

  // Links: each cable of either side looked up on the other by both ends' (GUID, port). A node is
  // gone when the new snapshot lacks it or only remembers it (Node::missing).
  auto gone = [&](Guid g) {
    const Node* x = n.findNode(g);
    return !x || x->missing.has_value();
  };
  for (const Link& ol : o.links()) {
    const Node& oa = o.node(ol.a.node);
    const Node& ob = o.node(ol.b.node);
    const Link* nl = findLink(n, oa.guid, ol.a.port, ob.guid, ol.b.port);
    if (!nl) {
      linksRemoved_.push_back({LinkSnapshot::of(o, ol), gone(oa.guid), gone(ob.guid)});
      continue;
    }
    const Port* opa = o.port(ol.a);
    const Port* opb = o.port(ol.b);
    const Port* npa = nullptr;
    const Port* npb = nullptr;
    // Align the new link's ends with the old one's.
    if (n.node(nl->a.node).guid == oa.guid && nl->a.port == ol.a.port) {
      npa = n.port(nl->a);
      npb = n.port(nl->b);
    } else {
      npa = n.port(nl->b);
      npb = n.port(nl->a);
    }
    if (!opa || !opb || !npa || !npb) continue;
    LinkChanged c;
    c.stateChanged = opa->state != npa->state || opb->state != npb->state ||
                     opa->physState != npa->physState || opb->physState != npb->physState;
    c.widthChanged = widthOf(opa->activeRate) != widthOf(npa->activeRate) ||
                     widthOf(opb->activeRate) != widthOf(npb->activeRate);
    c.speedChanged = speedOf(opa->activeRate) != speedOf(npa->activeRate) ||
                     speedOf(opb->activeRate) != speedOf(npb->activeRate);
    if (!c.stateChanged && !c.widthChanged && !c.speedChanged) continue;
    c.before = LinkSnapshot::of(o, ol);
    c.after = LinkSnapshot::of(n, *nl);
    if (!sameEnds(c.before, c.after)) c.after = flipped(std::move(c.after));
    linksChanged_.push_back(std::move(c));
  }
  for (const Link& nl : n.links()) {
    const Node& na = n.node(nl.a.node);
    const Node& nb = n.node(nl.b.node);
    if (findLink(o, na.guid, nl.a.port, nb.guid, nl.b.port)) continue;
    linksAdded_.push_back(
        {LinkSnapshot::of(n, nl), o.findNode(na.guid) == nullptr, o.findNode(nb.guid) == nullptr});
  }
}

void TopologyDelta::forEachLinkChange(
    const std::function<void(const LinkAdded&)>& added,
    const std::function<void(const LinkRemoved&)>& removed,
    const std::function<void(const LinkChanged&)>& changed) const {
  if (removed)
    for (const auto& c : linksRemoved_) removed(c);
  if (added)
    for (const auto& c : linksAdded_) added(c);
  if (changed)
    for (const auto& c : linksChanged_) changed(c);
}

void TopologyDelta::forEachNodeChange(
    const std::function<void(const NodeAdded&)>& added,
    const std::function<void(const NodeRemoved&)>& removed,
    const std::function<void(const NodeDescriptionChanged&)>& changed) const {
  if (removed)
    for (const auto& c : nodesRemoved_) removed(c);
  if (added)
    for (const auto& c : nodesAdded_) added(c);
  if (changed)
    for (const auto& c : descriptionsChanged_) changed(c);
}

std::vector<std::string> TopologyDelta::describeAll() const {
  std::vector<std::string> out;
  out.reserve(size());
  forEachChange([&](const auto& c) { out.push_back(describe(c)); });
  return out;
}

std::string describe(const NodeAdded& c) {
  return "node added: " + std::string(toString(c.node.type)) + " " + name(c.node) + " " +
         toString(c.node.guid);
}

std::string describe(const NodeRemoved& c) {
  return "node removed: " + std::string(toString(c.node.type)) + " " + name(c.node) + " " +
         toString(c.node.guid);
}

std::string describe(const NodeDescriptionChanged& c) {
  std::string out = "node description changed: " + toString(c.after.guid) + " \"" +
                    c.before.nodeDescription + "\" -> \"" + c.after.nodeDescription + "\"";
  if (c.before.description != c.after.description &&
      (c.before.description != c.before.nodeDescription ||
       c.after.description != c.after.nodeDescription))
    out += " (shown as \"" + c.before.description + "\" -> \"" + c.after.description + "\")";
  return out;
}

std::string describe(const LinkAdded& c) {
  std::string out = "link added: " + ends(c.link) + " (" + status(c.link) + ")";
  if (c.aNodeNew || c.bNodeNew) out += " [new node]";
  return out;
}

std::string describe(const LinkRemoved& c) {
  std::string out = "link removed: " + ends(c.link) + " (was " + status(c.link) + ")";
  if (c.aNodeGone || c.bNodeGone) out += " [node gone]";
  return out;
}

std::string describe(const LinkChanged& c) {
  std::string what;
  auto add = [&](const std::string& s) { what += (what.empty() ? "" : ", ") + s; };
  if (c.stateChanged) add("state");
  if (c.widthChanged) add("width");
  if (c.speedChanged) add("speed");
  std::string out = "link changed (" + what + "): " + ends(c.after) + " " + status(c.before) +
                    " -> " + status(c.after);
  if (c.after.missing && !c.before.missing)
    out += c.after.nodeMissing ? " [missing: node gone]" : " [missing: not seen by the crawl]";
  else if (c.before.missing && !c.after.missing)
    out += " [seen again]";
  return out;
}

std::string describe(const PortLidChanged& c) {
  return "LID changed: " + name(c.node) + "[" + toString(c.port) + "] " + toString(c.before) +
         " -> " + toString(c.after);
}

}  // namespace ibfabric
