#include "routing/routes.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

namespace ibfabric::routing {
namespace {

// Longest path we follow before calling it a loop even without a revisit (a safety net: a
// revisit is found first on any real table).
constexpr int kMaxSwitchHops = 64;

bool portUp(const Port* p) {
  return p != nullptr && p->connected() && p->state == PortState::kActive;
}

bool lidMatches(const Port& p, Lid lid) {
  if (p.lid.value() == 0) return false;
  const unsigned span = 1u << std::min<unsigned>(p.lmc, 7);
  return lid.value() >= p.lid.value() && lid.value() < p.lid.value() + span;
}

std::string describeNode(const Topology& t, NodeIndex n) {
  const Node& node = t.node(n);
  std::string s = "\"" + node.description + "\" (" + toString(node.guid);
  if (node.isSwitch() && node.lid().value() != 0) s += ", lid " + toString(node.lid());
  return s + ")";
}

DirectedHop hopFrom(const Topology& t, PortRef from) {
  const Port* p = t.port(from);
  return DirectedHop{from, *p->remote, p->link.value_or(0)};
}

}  // namespace

std::string_view toString(Route::Status s) {
  switch (s) {
    case Route::Status::kOk:
      return "ok";
    case Route::Status::kUnknownLid:
      return "unknown_lid";
    case Route::Status::kNoTable:
      return "no_table";
    case Route::Status::kBlackHole:
      return "black_hole";
    case Route::Status::kLoop:
      return "loop";
  }
  return "?";
}

Route traceRoute(const Topology& topology, const ForwardingTables& tables, PortRef src, Lid dst) {
  Route r;
  r.dst = dst;
  const Port* srcPort = topology.port(src);
  if (srcPort) r.src = srcPort->lid;
  auto fail = [&](Route::Status s, std::string why) {
    r.status = s;
    r.problem = std::move(why);
    return r;
  };
  if (!srcPort) return fail(Route::Status::kUnknownLid, "source port not in the topology");
  if (!topology.findLid(dst)) {
    return fail(Route::Status::kUnknownLid, "LID " + toString(dst) + " not in the topology");
  }
  const Node& srcNode = topology.node(src.node);
  if (lidMatches(*srcPort, dst)) return r;  // to itself: no cable crossed

  NodeIndex at = src.node;
  if (!srcNode.isSwitch()) {
    if (!portUp(srcPort)) {
      return fail(Route::Status::kBlackHole, "source port " + toString(src.port) + " of " +
                                                 describeNode(topology, src.node) + " is not up");
    }
    r.hops.push_back(hopFrom(topology, src));
    const PortRef next = r.hops.back().to;
    const Node& n = topology.node(next.node);
    if (!n.isSwitch()) {
      const Port* p = topology.port(next);
      if (p && lidMatches(*p, dst)) return r;
      return fail(Route::Status::kBlackHole, "source is cabled to " +
                                                 describeNode(topology, next.node) +
                                                 ", not a switch and not the destination");
    }
    at = next.node;
  }

  std::unordered_set<NodeIndex> visited;
  for (int step = 0;; ++step) {
    if (!visited.insert(at).second || step > kMaxSwitchHops) {
      return fail(Route::Status::kLoop, "loop: the path to LID " + toString(dst) + " returns to " +
                                            describeNode(topology, at));
    }
    const Node& sw = topology.node(at);
    if (const Port* p0 = sw.port(PortNum{0}); p0 && lidMatches(*p0, dst)) return r;
    const SwitchTable* table = tables.table(at);
    if (!table) {
      return fail(Route::Status::kNoTable, "no forwarding table for " + describeNode(topology, at));
    }
    auto egress = table->egress(dst);
    if (!egress) {
      return fail(Route::Status::kBlackHole,
                  describeNode(topology, at) + " has no LFT entry for LID " + toString(dst));
    }
    if (egress->value() == 0) {
      return fail(Route::Status::kBlackHole, describeNode(topology, at) + " forwards LID " +
                                                 toString(dst) + " to its management port 0");
    }
    const PortRef out{at, *egress};
    const Port* outPort = topology.port(out);
    if (!portUp(outPort)) {
      return fail(Route::Status::kBlackHole, describeNode(topology, at) + " forwards LID " +
                                                 toString(dst) + " to port " + toString(*egress) +
                                                 ", which is " + (outPort ? "down" : "absent"));
    }
    r.hops.push_back(hopFrom(topology, out));
    const PortRef next = r.hops.back().to;
    const Node& n = topology.node(next.node);
    if (!n.isSwitch()) {
      const Port* p = topology.port(next);
      if (p && lidMatches(*p, dst)) return r;
      return fail(Route::Status::kBlackHole, describeNode(topology, at) + " forwards LID " +
                                                 toString(dst) + " to port " + toString(*egress) +
                                                 ", which leads to " +
                                                 describeNode(topology, next.node) + " instead");
    }
    at = next.node;
  }
}

namespace {

// Per-destination outcome of following the LFTs from one switch.
enum class Reach : std::uint8_t { kUnknown, kOnStack, kOk, kBlackHole, kLoop, kNoTable };

Route::Status statusOf(Reach r) {
  switch (r) {
    case Reach::kOk:
      return Route::Status::kOk;
    case Reach::kLoop:
      return Route::Status::kLoop;
    case Reach::kNoTable:
      return Route::Status::kNoTable;
    default:
      return Route::Status::kBlackHole;
  }
}

struct CaPort {
  PortRef ref;
  Lid lid;
  NodeIndex attachedSwitch = kNoNode;  ///< kNoNode: cabled to a CA (or not a switch)
};

}  // namespace

ValidationReport validateRoutes(const Topology& topology, const ForwardingTables& tables,
                                std::size_t maxProblems) {
  ValidationReport report;
  const auto& nodes = topology.nodes();

  std::vector<CaPort> cas;
  for (const Node& n : nodes) {
    if (!n.isCa()) continue;
    for (const auto& p : n.ports) {
      if (!p || !portUp(&*p) || p->lid.value() == 0) continue;
      CaPort c{{n.index, p->num}, p->lid, kNoNode};
      if (topology.node(p->remote->node).isSwitch()) c.attachedSwitch = p->remote->node;
      cas.push_back(c);
    }
  }

  // For destination d, reach[s] is what happens to a packet for d entering switch s; `culprit`
  // is the switch where it went wrong (for the problem text).
  std::vector<Reach> reach(nodes.size());
  std::vector<NodeIndex> culprit(nodes.size(), kNoNode);
  std::vector<NodeIndex> stack;

  auto addProblem = [&](const CaPort& src, const CaPort& dst, Reach r, NodeIndex where) {
    switch (r) {
      case Reach::kLoop:
        ++report.loops;
        break;
      case Reach::kNoTable:
        ++report.missingTables;
        break;
      default:
        ++report.blackHoles;
        break;
    }
    if (report.problems.size() >= maxProblems) return;
    RouteProblem p;
    p.status = statusOf(r);
    p.src = src.lid;
    p.dst = dst.lid;
    // The full trace gives the precise reason; only done for the problems we list.
    Route route = traceRoute(topology, tables, src.ref, dst.lid);
    p.detail = route.ok() ? "at " + (where == kNoNode ? std::string("source")
                                                      : describeNode(topology, where))
                          : route.problem;
    report.problems.push_back(std::move(p));
  };

  for (const CaPort& dst : cas) {
    std::fill(reach.begin(), reach.end(), Reach::kUnknown);
    std::fill(culprit.begin(), culprit.end(), kNoNode);
    // Resolve switch `start` iteratively: follow the LFT until a known outcome, then unwind.
    auto resolve = [&](NodeIndex start) {
      NodeIndex at = start;
      Reach outcome = Reach::kOk;
      NodeIndex where = kNoNode;
      while (true) {
        if (reach[at] == Reach::kOnStack) {
          outcome = Reach::kLoop;
          where = at;
          break;
        }
        if (reach[at] != Reach::kUnknown) {
          outcome = reach[at];
          where = culprit[at];
          break;
        }
        reach[at] = Reach::kOnStack;
        stack.push_back(at);
        const Node& sw = nodes[at];
        if (const Port* p0 = sw.port(PortNum{0}); p0 && lidMatches(*p0, dst.lid)) {
          outcome = Reach::kBlackHole;  // a CA LID on a switch port 0: inconsistent topology
          where = at;
          break;
        }
        const SwitchTable* table = tables.table(at);
        if (!table) {
          outcome = Reach::kNoTable;
          where = at;
          break;
        }
        auto egress = table->egress(dst.lid);
        const Port* out = egress && egress->value() != 0 ? sw.port(*egress) : nullptr;
        if (!portUp(out)) {
          outcome = Reach::kBlackHole;
          where = at;
          break;
        }
        const NodeIndex next = out->remote->node;
        if (!nodes[next].isSwitch()) {
          const Port* rp = topology.port(*out->remote);
          outcome = rp && lidMatches(*rp, dst.lid) ? Reach::kOk : Reach::kBlackHole;
          where = outcome == Reach::kOk ? kNoNode : at;
          break;
        }
        if (stack.size() > nodes.size()) {  // cannot happen; guards a broken invariant
          outcome = Reach::kLoop;
          where = at;
          break;
        }
        at = next;
      }
      for (NodeIndex s : stack) {
        reach[s] = outcome;
        culprit[s] = where;
      }
      stack.clear();
    };

    for (const CaPort& src : cas) {
      if (src.ref == dst.ref) continue;
      ++report.pairsChecked;
      if (src.attachedSwitch == kNoNode) {
        // CA cabled straight to a CA: only the peer itself is reachable.
        const Port* p = topology.port(src.ref);
        if (p->remote == dst.ref) {
          ++report.pairsOk;
        } else {
          addProblem(src, dst, Reach::kBlackHole, kNoNode);
        }
        continue;
      }
      if (reach[src.attachedSwitch] == Reach::kUnknown) resolve(src.attachedSwitch);
      Reach r = reach[src.attachedSwitch];
      if (r == Reach::kOk) {
        ++report.pairsOk;
      } else {
        addProblem(src, dst, r, culprit[src.attachedSwitch]);
      }
    }
  }
  return report;
}

std::vector<LeafBalance> routeBalance(const Topology& topology, const ForwardingTables& tables) {
  std::vector<Lid> caLids;
  std::vector<NodeIndex> caSwitch;
  for (const Node& n : topology.nodes()) {
    if (!n.isCa()) continue;
    for (const auto& p : n.ports) {
      if (!p || !p->connected() || p->lid.value() == 0) continue;
      caLids.push_back(p->lid);
      caSwitch.push_back(p->remote->node);
    }
  }
  std::vector<LeafBalance> out;
  for (NodeIndex leaf : topology.nodesAtLevel(kLeafLevel)) {
    const Node& n = topology.node(leaf);
    const SwitchTable* table = tables.table(leaf);
    if (!n.isSwitch() || !table) continue;
    LeafBalance b;
    b.leaf = leaf;
    std::vector<int> slot(n.ports.size(), -1);
    for (const auto& p : n.ports) {
      if (!p || p->direction != PortDirection::kUp || !p->connected()) continue;
      slot[p->num.value()] = static_cast<int>(b.destinationsPerUpPort.size());
      b.destinationsPerUpPort.emplace_back(p->num, 0);
    }
    for (std::size_t i = 0; i < caLids.size(); ++i) {
      if (caSwitch[i] == leaf) continue;
      auto e = table->egress(caLids[i]);
      if (e && e->value() < slot.size() && slot[e->value()] >= 0) {
        ++b.destinationsPerUpPort[static_cast<std::size_t>(slot[e->value()])].second;
      }
    }
    std::uint64_t total = 0, max = 0;
    for (const auto& [port, count] : b.destinationsPerUpPort) {
      total += count;
      max = std::max<std::uint64_t>(max, count);
    }
    if (total > 0) {
      const double mean =
          static_cast<double>(total) / static_cast<double>(b.destinationsPerUpPort.size());
      b.imbalance = static_cast<double>(max) / mean;
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace ibfabric::routing
