#include "discovery/topology_compare.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "discovery/net_topology.h"
#include "discovery/node_name_map.h"
#include "discovery/topology_edit.h"

namespace ibfabric {
namespace {

constexpr std::size_t kListedAttachments = 4;

// One planned cable, listed once.
struct PlanCable {
  std::size_t a = 0;
  PortNum pa;
  std::size_t b = 0;
  PortNum pb;
  int lineA = 0;
  int lineB = 0;
  std::optional<LinkRate> rate;
};

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string plannedLabel(const NetNode& n, PortNum p) {
  return quoted(n.name()) + "[" + toString(p) + "]";
}

std::string where(const std::string& file, int line) {
  return line > 0 ? " (" + file + ":" + std::to_string(line) + ")" : std::string();
}

LiveEnd liveEnd(const Topology& t, PortRef ref) {
  const Node& n = t.node(ref.node);
  return LiveEnd{ref, n.guid, n.description, ref.port};
}

PlannedEnd plannedEnd(const NetNode& n, PortNum port, int line) {
  return PlannedEnd{n.id, n.name(), port, line > 0 ? line : n.line};
}

bool slower(const LinkRate& x, const LinkRate& y) {
  return lanes(x.width) < lanes(y.width) || x.speed < y.speed;
}

// The GUIDs ibsim gives nodes a file does not give one (the parser fills them in; fabrics built
// in memory may lack them).
std::vector<Guid> plannedGuids(const NetFabric& f) {
  std::vector<Guid> out;
  out.reserve(f.nodes.size());
  std::uint64_t nextSwitch = 0x200000, nextCa = 0x100000;
  for (const NetNode& n : f.nodes) {
    if (n.guid) {
      out.push_back(*n.guid);
    } else if (n.type == NodeType::kSwitch) {
      out.push_back(Guid{nextSwitch++});
    } else {
      out.push_back(Guid{nextCa});
      nextCa += std::uint64_t(n.numPorts) + 1;
    }
  }
  return out;
}

class Comparer {
 public:
  Comparer(const NetFabric& e, const Topology& l, const CompareOptions& o)
      : exp_(e), live_(l), opt_(o) {}

  CompareResult run() {
    result_.match = opt_.match;
    result_.expectedName = opt_.expectedName;
    result_.liveSource = live_.stats().source;
    result_.expectedNodes = exp_.nodes.size();
    result_.liveNodes = live_.nodes().size();
    result_.liveLinks = live_.links().size();
    indexPlan();
    result_.expectedLinks = cables_.size();
    matchNodes();
    nodeFindings();
    cableFindings();
    unexpectedLinks();
    if (opt_.linkHealth) healthFindings();
    return std::move(result_);
  }

 private:
  void add(CompareFinding f) { result_.findings.push_back(std::move(f)); }

  void indexPlan() {
    ids_.reserve(exp_.nodes.size());
    for (std::size_t i = 0; i < exp_.nodes.size(); ++i) ids_.emplace(exp_.nodes[i].id, i);
    std::set<std::tuple<std::size_t, std::uint8_t, std::size_t, std::uint8_t>> seen;
    for (std::size_t i = 0; i < exp_.nodes.size(); ++i) {
      for (const NetPort& p : exp_.nodes[i].ports) {
        auto it = ids_.find(p.remoteId);
        if (it == ids_.end()) continue;  // the parser rejects these; in-memory fabrics may not
        std::size_t j = it->second;
        auto x = std::pair(i, p.port.value());
        auto y = std::pair(j, p.remotePort.value());
        if (y < x) std::swap(x, y);
        if (!seen.emplace(x.first, x.second, y.first, y.second).second) continue;
        PlanCable c;
        c.a = i;
        c.pa = p.port;
        c.b = j;
        c.pb = p.remotePort;
        c.lineA = p.line;
        const NetPort* back = exp_.nodes[j].port(p.remotePort);
        c.lineB = back ? back->line : 0;
        c.rate = p.rate ? p.rate : (back ? back->rate : std::nullopt);
        cables_.push_back(c);
      }
    }
  }

  void matchNodes() {
    match_.assign(exp_.nodes.size(), std::nullopt);
    liveMatch_.assign(live_.nodes().size(), std::nullopt);
    auto take = [&](std::size_t i, NodeIndex n) {
      match_[i] = n;
      liveMatch_[n] = i;
      ++result_.matchedNodes;
    };
    if (opt_.match == MatchBy::kGuid) {
      std::vector<Guid> guids = plannedGuids(exp_);
      for (std::size_t i = 0; i < exp_.nodes.size(); ++i) {
        const Node* n = live_.findNode(guids[i]);
        if (n && n->type == exp_.nodes[i].type && !liveMatch_[n->index]) take(i, n->index);
      }
      return;
    }
    std::unordered_map<std::string_view, std::vector<NodeIndex>> byName;
    byName.reserve(live_.nodes().size());
    for (const Node& n : live_.nodes())
      if (!n.description.empty()) byName[n.description].push_back(n.index);
    std::unordered_set<std::string_view> reported;
    for (std::size_t i = 0; i < exp_.nodes.size(); ++i) {
      const NetNode& en = exp_.nodes[i];
      std::vector<std::string_view> keys;
      if (!en.desc.empty()) keys.push_back(en.desc);
      if (en.id != en.desc) keys.push_back(en.id);
      for (std::string_view key : keys) {
        auto it = byName.find(key);
        if (it == byName.end()) continue;
        std::vector<NodeIndex> sameType;
        for (NodeIndex n : it->second)
          if (live_.node(n).type == en.type) sameType.push_back(n);
        if (sameType.size() > 1 && reported.insert(key).second) duplicate(i, key, sameType);
        auto free = std::find_if(sameType.begin(), sameType.end(),
                                 [&](NodeIndex n) { return !liveMatch_[n]; });
        if (free == sameType.end()) continue;
        take(i, *free);
        break;
      }
    }
  }

  void duplicate(std::size_t i, std::string_view key, const std::vector<NodeIndex>& nodes) {
    CompareFinding f;
    f.kind = CompareKind::kDuplicateName;
    f.plannedA = plannedEnd(exp_.nodes[i], PortNum{0}, 0);
    std::string guids;
    for (NodeIndex n : nodes) guids += (guids.empty() ? "" : ", ") + toString(live_.node(n).guid);
    f.text = "duplicate name: " + std::to_string(nodes.size()) + " live nodes are described " +
             quoted(std::string(key)) + " (" + guids + "); matched in GUID order" +
             where(opt_.expectedName, exp_.nodes[i].line);
    add(std::move(f));
  }

  void nodeFindings() {
    for (std::size_t i = 0; i < exp_.nodes.size(); ++i) {
      if (match_[i]) continue;
      const NetNode& en = exp_.nodes[i];
      CompareFinding f;
      f.kind = CompareKind::kMissingNode;
      f.plannedA = plannedEnd(en, PortNum{0}, 0);
      std::string text = "missing node: " + std::string(toString(en.type)) + " " +
                         quoted(en.name()) + where(opt_.expectedName, en.line);
      std::vector<std::string> peers;
      for (const NetPort& p : en.ports) {
        auto it = ids_.find(p.remoteId);
        if (it == ids_.end()) continue;
        peers.push_back(plannedLabel(exp_.nodes[it->second], p.remotePort));
      }
      text += attachments(", planned cables to ", peers);
      f.text = std::move(text);
      add(std::move(f));
    }
    for (const Node& n : live_.nodes()) {
      if (liveMatch_[n.index]) continue;
      CompareFinding f;
      f.kind = CompareKind::kUnexpectedNode;
      f.liveA = liveEnd(live_, PortRef{n.index, PortNum{0}});
      std::string text = "unexpected node: " + std::string(toString(n.type)) + " " +
                         quoted(n.description) + " " + toString(n.guid);
      std::vector<std::string> peers;
      for (const auto& p : n.ports)
        if (p && p->remote) peers.push_back(portLabel(live_, *p->remote));
      text += attachments(", cabled to ", peers);
      f.text = std::move(text);
      add(std::move(f));
    }
  }

  static std::string attachments(const std::string& lead, const std::vector<std::string>& peers) {
    if (peers.empty()) return std::string();
    std::string out = lead;
    for (std::size_t k = 0; k < peers.size() && k < kListedAttachments; ++k)
      out += (k ? ", " : "") + peers[k];
    if (peers.size() > kListedAttachments)
      out += " and " + std::to_string(peers.size() - kListedAttachments) + " more";
    return out;
  }

  std::optional<PortRef> liveRemote(NodeIndex n, PortNum p) const {
    const Port* port = live_.port(n, p);
    if (!port || !port->remote) return std::nullopt;
    return port->remote;
  }

  void markUsed(NodeIndex n, PortNum p) {
    const Port* port = live_.port(n, p);
    if (port && port->link) usedLinks_.insert(*port->link);
  }

  void cableFindings() {
    for (const PlanCable& c : cables_) {
      if (!match_[c.a] || !match_[c.b]) continue;  // summarised by the missing-node finding
      const NodeIndex la = *match_[c.a];
      const NodeIndex lb = *match_[c.b];
      const NetNode& ea = exp_.nodes[c.a];
      const NetNode& eb = exp_.nodes[c.b];
      CompareFinding f;
      f.plannedA = plannedEnd(ea, c.pa, c.lineA);
      f.plannedB = plannedEnd(eb, c.pb, c.lineB);
      f.liveA = liveEnd(live_, PortRef{la, c.pa});
      f.liveB = liveEnd(live_, PortRef{lb, c.pb});
      f.plannedRate = c.rate;
      const std::string planned = plannedLabel(ea, c.pa) + " <-> " + plannedLabel(eb, c.pb) +
                                  where(opt_.expectedName, c.lineA);
      auto ra = liveRemote(la, c.pa);
      auto rb = liveRemote(lb, c.pb);
      if (ra && *ra == PortRef{lb, c.pb}) {
        ++result_.intactLinks;
        const Port* pa = live_.port(la, c.pa);
        const Link& link = live_.links()[*pa->link];
        usedLinks_.insert(*pa->link);
        if (c.rate && link.rate) planRated_.insert(*pa->link);
        if (c.rate && link.rate && *c.rate == *link.rate) rateMet_.insert(*pa->link);
        if (c.rate && link.rate && *c.rate != *link.rate) {
          f.kind = CompareKind::kRateMismatch;
          f.liveRate = link.rate;
          f.text = "rate mismatch: " + planned + " runs " + rateLabel(*link.rate) +
                   (slower(*link.rate, *c.rate) ? ", below the planned " : ", planned ") +
                   rateLabel(*c.rate);
          add(std::move(f));
        }
        continue;
      }
      if (!ra && !rb) {
        f.kind = CompareKind::kMissingLink;
        f.text = "missing link: " + planned;
        add(std::move(f));
        continue;
      }
      f.kind = CompareKind::kMiswired;
      auto describeEnd = [&](const NetNode& en, PortNum p, const std::optional<PortRef>& r) {
        return plannedLabel(en, p) +
               (r ? " now goes to " + portLabel(live_, *r) : std::string(" is unconnected"));
      };
      if (ra) {
        f.actualRemoteA = liveEnd(live_, *ra);
        markUsed(la, c.pa);
      }
      if (rb) {
        f.actualRemoteB = liveEnd(live_, *rb);
        markUsed(lb, c.pb);
      }
      f.text = "miswired: planned " + planned + ": " + describeEnd(ea, c.pa, ra) + "; " +
               describeEnd(eb, c.pb, rb);
      add(std::move(f));
    }
  }

  void unexpectedLinks() {
    const auto& links = live_.links();
    for (std::uint32_t li = 0; li < links.size(); ++li) {
      if (usedLinks_.count(li)) continue;
      const Link& l = links[li];
      if (!liveMatch_[l.a.node] || !liveMatch_[l.b.node]) continue;  // unexpected-node finding
      CompareFinding f;
      f.kind = CompareKind::kUnexpectedLink;
      f.liveA = liveEnd(live_, l.a);
      f.liveB = liveEnd(live_, l.b);
      f.liveRate = l.rate;
      f.text = "unexpected link: " + portLabel(live_, l.a) + " <-> " + portLabel(live_, l.b);
      add(std::move(f));
    }
  }

  void healthFindings() {
    for (const LinkHealthIssue& issue : checkLinkHealth(live_)) {
      if (issue.kind == LinkHealthKind::kEnableMismatch && issue.link &&
          rateMet_.count(*issue.link))
        continue;
      // The plan is the better judge of a link's intended rate than its tier's majority: a
      // planned slower link is fine, and a slower-than-planned one is a rate mismatch already.
      if (issue.kind == LinkHealthKind::kBelowPeers && issue.link && planRated_.count(*issue.link))
        continue;
      CompareFinding f;
      f.kind = CompareKind::kDegraded;
      f.health = issue.kind;
      f.liveA = liveEnd(live_, issue.port);
      if (issue.remote) f.liveB = liveEnd(live_, *issue.remote);
      f.liveRate = issue.active;
      f.text = "degraded (" + std::string(toString(issue.kind)) + "): " + issue.text;
      add(std::move(f));
    }
  }

  const NetFabric& exp_;
  const Topology& live_;
  const CompareOptions& opt_;
  CompareResult result_;
  std::unordered_map<std::string_view, std::size_t> ids_;
  std::vector<PlanCable> cables_;
  std::vector<std::optional<NodeIndex>> match_;
  std::vector<std::optional<std::size_t>> liveMatch_;
  std::unordered_set<std::uint32_t> usedLinks_;
  std::unordered_set<std::uint32_t> rateMet_;
  std::unordered_set<std::uint32_t> planRated_;  // links whose rate the plan states
};

nlohmann::json plannedJson(const PlannedEnd& e) {
  return {{"id", e.id}, {"name", e.name}, {"port", e.port.value()}, {"line", e.line}};
}

nlohmann::json liveJson(const LiveEnd& e) {
  return {{"guid", toString(e.guid)}, {"description", e.description}, {"port", e.port.value()}};
}

}  // namespace

std::string_view toString(MatchBy m) { return m == MatchBy::kGuid ? "guid" : "desc"; }

std::optional<MatchBy> parseMatchBy(std::string_view text) {
  if (text == "desc" || text == "description") return MatchBy::kDescription;
  if (text == "guid") return MatchBy::kGuid;
  return std::nullopt;
}

std::string_view toString(CompareKind k) {
  switch (k) {
    case CompareKind::kMissingNode:
      return "missing-node";
    case CompareKind::kUnexpectedNode:
      return "unexpected-node";
    case CompareKind::kDuplicateName:
      return "duplicate-name";
    case CompareKind::kMissingLink:
      return "missing-link";
    case CompareKind::kUnexpectedLink:
      return "unexpected-link";
    case CompareKind::kMiswired:
      return "miswired";
    case CompareKind::kRateMismatch:
      return "rate-mismatch";
    case CompareKind::kDegraded:
      return "degraded";
  }
  return "unknown";
}

CompareCounts CompareResult::counts() const {
  CompareCounts c;
  for (const auto& f : findings) {
    switch (f.kind) {
      case CompareKind::kMissingNode:
        ++c.missingNodes;
        break;
      case CompareKind::kUnexpectedNode:
        ++c.unexpectedNodes;
        break;
      case CompareKind::kDuplicateName:
        ++c.duplicateNames;
        break;
      case CompareKind::kMissingLink:
        ++c.missingLinks;
        break;
      case CompareKind::kUnexpectedLink:
        ++c.unexpectedLinks;
        break;
      case CompareKind::kMiswired:
        ++c.miswired;
        break;
      case CompareKind::kRateMismatch:
        ++c.rateMismatches;
        break;
      case CompareKind::kDegraded:
        ++c.degraded;
        break;
    }
  }
  return c;
}

CompareResult compareTopology(const NetFabric& expected, const Topology& live,
                              const CompareOptions& options) {
  return Comparer(expected, live, options).run();
}

TopologyPtr topologyAsCrawled(NetFabric fabric, std::shared_ptr<const NodeNameMap> map,
                              std::string source) {
  for (NetNode& n : fabric.nodes)
    if (n.desc.empty()) n.desc = n.id;
  fabric.reindex();
  TopologyPtr plain = topologyFromNetFabric(fabric, source);
  if (!map) return plain;
  // Rebuild with the map applied, keeping the reported NodeDescription.
  TopologyBuilder b;
  b.reserve(plain->nodes().size());
  for (const Node& n : plain->nodes()) {
    b.addNode(nodeInfoOf(n));
    for (const auto& p : n.ports)
      if (p) b.addPort(n.guid, *p);
  }
  for (const Link& l : plain->links())
    b.connect(plain->node(l.a.node).guid, l.a.port, plain->node(l.b.node).guid, l.b.port);
  b.setNodeNameMap(std::move(map));
  CrawlStats stats = plain->stats();
  b.setStats(std::move(stats));
  return b.build();
}

std::string formatCompareText(const CompareResult& r) {
  std::string out = "expected " + r.expectedName + " (" + std::to_string(r.expectedNodes) +
                    " nodes, " + std::to_string(r.expectedLinks) + " links) vs live " +
                    r.liveSource + " (" + std::to_string(r.liveNodes) + " nodes, " +
                    std::to_string(r.liveLinks) + " links), matched by " +
                    std::string(toString(r.match)) + ": " + std::to_string(r.matchedNodes) +
                    " nodes matched, " + std::to_string(r.intactLinks) + " cables in place\n";
  for (const auto& f : r.findings) out += f.text + "\n";
  CompareCounts c = r.counts();
  auto item = [](std::size_t n, const char* what) { return std::to_string(n) + " " + what; };
  out += item(c.missingNodes, "missing nodes") + ", " +
         item(c.unexpectedNodes, "unexpected nodes") + ", " +
         item(c.missingLinks, "missing links") + ", " +
         item(c.unexpectedLinks, "unexpected links") + ", " + item(c.miswired, "miswired") + ", " +
         item(c.rateMismatches, "rate mismatches") + ", " + item(c.degraded, "degraded");
  if (c.duplicateNames) out += ", " + item(c.duplicateNames, "duplicate names");
  out += "\n";
  out += r.identical() ? "result: identical\n" : "result: different\n";
  return out;
}

nlohmann::json compareToJson(const CompareResult& r) {
  CompareCounts c = r.counts();
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings) {
    nlohmann::json j = {{"kind", toString(f.kind)}, {"text", f.text}};
    if (f.plannedA) j["planned_a"] = plannedJson(*f.plannedA);
    if (f.plannedB) j["planned_b"] = plannedJson(*f.plannedB);
    if (f.liveA) j["live_a"] = liveJson(*f.liveA);
    if (f.liveB) j["live_b"] = liveJson(*f.liveB);
    if (f.kind == CompareKind::kMiswired) {
      j["actual_remote_a"] = f.actualRemoteA ? liveJson(*f.actualRemoteA) : nlohmann::json();
      j["actual_remote_b"] = f.actualRemoteB ? liveJson(*f.actualRemoteB) : nlohmann::json();
    }
    if (f.plannedRate) j["planned_rate"] = f.plannedRate->toString();
    if (f.liveRate) j["live_rate"] = f.liveRate->toString();
    if (f.health) j["health"] = toString(*f.health);
    findings.push_back(std::move(j));
  }
  return {
      {"schema", kCompareJsonSchema},
      {"identical", r.identical()},
      {"match", toString(r.match)},
      {"expected",
       {{"source", r.expectedName}, {"nodes", r.expectedNodes}, {"links", r.expectedLinks}}},
      {"live", {{"source", r.liveSource}, {"nodes", r.liveNodes}, {"links", r.liveLinks}}},
      {"matched_nodes", r.matchedNodes},
      {"intact_links", r.intactLinks},
      {"counts",
       {{"missing_nodes", c.missingNodes},
        {"unexpected_nodes", c.unexpectedNodes},
        {"duplicate_names", c.duplicateNames},
        {"missing_links", c.missingLinks},
        {"unexpected_links", c.unexpectedLinks},
        {"miswired", c.miswired},
        {"rate_mismatches", c.rateMismatches},
        {"degraded", c.degraded}}},
      {"findings", std::move(findings)},
  };
}

}  // namespace ibfabric
