// The PlacementScore of an evaluated host set (score_report.h).
#include "routing/placement/score_report.h"

#include <cstdio>
#include <string>

namespace ibfabric::routing::placement {

namespace {

std::string gbps(double bytesPerSecond) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytesPerSecond / 1e9);
  return buf;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", fraction * 100.0);
  return buf;
}

std::string linkName(const ScoringContext& ctx, DirectedLinkId d) {
  const Topology& t = ctx.ix.topology();
  PortRef s = ctx.load.sender(d);
  PortRef r = ctx.load.receiver(d);
  return t.node(s.node).description + "[" + std::to_string(s.port.value()) + "] -> " +
         t.node(r.node).description + "[" + std::to_string(r.port.value()) + "]";
}

LinkLoad linkLoad(const ScoringContext& ctx, DirectedLinkId d, std::uint32_t jobFlows) {
  const Topology& t = ctx.ix.topology();
  PortRef s = ctx.load.sender(d);
  PortRef r = ctx.load.receiver(d);
  LinkLoad l;
  l.fromNode = t.node(s.node).description;
  l.fromGuid = t.node(s.node).guid.value();
  l.fromPort = s.port.value();
  l.toNode = t.node(r.node).description;
  l.toGuid = t.node(r.node).guid.value();
  l.toPort = r.port.value();
  l.utilization = ctx.load.at(d).utilization;
  l.congestion = ctx.load.at(d).congestion;
  l.residualBytesPerSecond = ctx.residual[d];
  l.jobFlows = static_cast<int>(jobFlows);
  return l;
}

std::string explanation(const ScoringContext& ctx, const Order& order, CommPattern pattern,
                        const Eval& e) {
  std::string text =
      std::to_string(order.size()) + (order.size() == 1 ? " host" : " hosts") + " on " +
      std::to_string(e.leafSwitches) + " leaf switch" + (e.leafSwitches == 1 ? "" : "es") + " in " +
      std::to_string(e.leafGroups) + " leaf group" + (e.leafGroups == 1 ? "" : "s") + "; " +
      std::string(toString(pattern)) + " bottleneck " + gbps(e.bottleneck) + " GB/s per flow";
  if (e.bottleneckLink != PlacementIndex::kNoLink) {
    text += " at " + linkName(ctx, e.bottleneckLink) + " (" +
            percent(ctx.load.at(e.bottleneckLink).utilization) + " used, " +
            std::to_string(e.bottleneckFlows) + " job flow" + (e.bottleneckFlows == 1 ? "" : "s") +
            ")";
  }
  text += "; max " + std::to_string(e.maxHops) + " switch hop" + (e.maxHops == 1 ? "" : "s");
  if (e.unroutedFlows > 0) {
    text += "; " + std::to_string(e.unroutedFlows) + " flows have no route";
  }
  return text;
}

}  // namespace

PlacementScore scoreReport(const ScoringContext& ctx, const Order& order, CommPattern pattern,
                           const Eval& e) {
  PlacementScore s;
  s.leafSwitches = e.leafSwitches;
  s.maxHops = e.maxHops;
  s.bottleneckBytesPerSecond = e.bottleneck;
  s.objective = e.objective;
  for (const auto& [d, n] : e.hottest) s.hottestLinks.push_back(linkLoad(ctx, d, n));
  s.explanation = explanation(ctx, order, pattern, e);
  return s;
}

}  // namespace ibfabric::routing::placement
