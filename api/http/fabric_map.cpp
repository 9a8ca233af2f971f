#include "api/http/fabric_map.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>

#include "api/http/json_views.h"
#include "discovery/formats.h"

namespace ibfabric::api {
namespace {

using nlohmann::json;
using telemetry::PortKey;

/// Cable states (linkStateName()), least to most severe: a trunk shows its worst cable's.
constexpr std::array<std::string_view, 4> kStates = {"ok", "degraded", "faulty", "down"};
int severity(std::string_view s) {
  const auto it = std::find(kStates.begin(), kStates.end(), s);
  return it == kStates.end() ? 0 : static_cast<int>(it - kStates.begin());
}

/// What one cable contributes to its trunk or host: load, congestion, errors.
struct Load {
  double utilization = 0;  ///< busiest direction of either end, 0..1
  double congestion = 0;   ///< worst end, 0..1
  double errors = 0;       ///< error counter increments per second, both ends
  void add(const Load& o) {
    utilization = std::max(utilization, o.utilization);
    congestion = std::max(congestion, o.congestion);
    errors += o.errors;
  }
};

Load endLoad(const ServiceState& s, const Node& n, PortNum p) {
  Load l;
  const auto r = s.ratesOf(PortKey{n.guid, p});
  if (!r) return l;
  l.utilization = std::max(r->txUtilization.value_or(0), r->rxUtilization.value_or(0));
  l.congestion = r->congestion.value_or(0);
  for (telemetry::Counter c : telemetry::kAllCounters)
    if (telemetry::isErrorCounter(c) && (*r)[c].ok()) l.errors += (*r)[c].perSecond;
  return l;
}

Load cableLoad(const ServiceState& s, const Link& link) {
  const Topology& t = *s.topology;
  Load l = endLoad(s, t.node(link.a.node), link.a.port);
  l.add(endLoad(s, t.node(link.b.node), link.b.port));
  return l;
}

/// Rounded to 4 decimals: the map shows colours, not digits (and stays small).
double rounded(double v) { return std::round(v * 10000.0) / 10000.0; }

json loadJson(const Load& l) {
  return {{"util", rounded(l.utilization)},
          {"cong", rounded(l.congestion)},
          {"err", rounded(l.errors)}};
}

/// One switch pair's cables.
struct Trunk {
  NodeIndex a = kNoNode, b = kNoNode;
  std::map<std::string_view, int> byState;
  int worst = 0;
  int missing = 0;  // cables remembered, not seen by the last crawl (down)
  Load load;
  json cables = json::array();  // [a port, b port, state]
};

struct HostAcc {
  int worst = 0;
  int down = 0;  // HCA cables not ok
  Load load;
  json ports = json::array();  // [leaf switch index, leaf port, state]
};

json switchesJson(const Topology& t, const std::vector<int>& worst,
                  const std::vector<int>& badCables, const std::vector<std::uint32_t>& pos) {
  json out = json::array();
  for (const Node& n : t.nodes()) {
    if (!n.isSwitch()) continue;
    const int w = worst[n.index];
    const std::string_view state = n.missing ? "missing" : w == 0 ? "ok" : "degraded";
    out.push_back({{"i", pos[n.index]},
                   {"guid", toString(n.guid)},
                   {"name", n.description},
                   {"lid", n.lid().value()},
                   {"level", n.level},
                   {"level_name", levelName(n.level)},
                   {"group", n.group},
                   {"rail", n.rail},
                   {"ports", n.numPorts},
                   {"state", state},
                   {"bad_cables", badCables[n.index]}});
  }
  return out;
}

json trunkJson(const Trunk& tr, const std::vector<std::uint32_t>& pos) {
  int n = 0;
  for (const auto& [state, count] : tr.byState) n += count;
  json j = {{"a", pos[tr.a]},
            {"b", pos[tr.b]},
            {"n", n},
            {"state", kStates[tr.worst]},
            {"by_state", tr.byState},
            {"missing", tr.missing},
            {"cables", tr.cables}};
  j.update(loadJson(tr.load));
  return j;
}

}  // namespace

json fabricMapJson(const ServiceState& s, const HostLayout& hostHealth, const ListIndex& index,
                   bool pool) {
  const Topology& t = *s.topology;
  std::vector<std::uint32_t> pos(t.nodes().size(), 0);  // a switch's place in "switches"
  std::uint32_t next = 0;
  for (const Node& n : t.nodes())
    if (n.isSwitch()) pos[n.index] = next++;
  std::vector<int> worst(t.nodes().size(), 0), badCables(t.nodes().size(), 0);
  std::map<std::pair<NodeIndex, NodeIndex>, Trunk> trunks;
  std::vector<HostAcc> hosts(t.hosts().size());
  std::map<std::string_view, std::size_t> cablesByState;
  std::size_t cablesMissing = 0;
  for (std::uint32_t i = 0; i < t.links().size(); ++i) {
    const Link& l = t.links()[i];
    const Node& na = t.node(l.a.node);
    const Node& nb = t.node(l.b.node);
    // The map draws a cable that carries no traffic as down, whether linked (init) or not.
    const std::string_view linkState = index.linkFacts(s, i).state;
    const std::string_view state = linkState == "init" ? "down" : linkState;
    const int sev = severity(state);
    ++cablesByState[state];
    if (l.missing) ++cablesMissing;
    for (const Node* n : {&na, &nb}) {
      worst[n->index] = std::max(worst[n->index], sev);
      if (sev > 0) ++badCables[n->index];
    }
    const Load load = cableLoad(s, l);
    if (na.isSwitch() && nb.isSwitch()) {
      Trunk& tr = trunks[{l.a.node, l.b.node}];
      tr.a = l.a.node;
      tr.b = l.b.node;
      ++tr.byState[state];
      if (l.missing) ++tr.missing;
      tr.worst = std::max(tr.worst, sev);
      tr.load.add(load);
      tr.cables.push_back({l.a.port.value(), l.b.port.value(), state});
    } else if (na.isCa() && na.host && nb.isSwitch()) {
      HostAcc& h = hosts[*na.host];
      h.worst = std::max(h.worst, sev);
      if (sev > 0) ++h.down;
      h.load.add(load);
      h.ports.push_back({pos[nb.index], l.b.port.value(), state});
    }
  }
  json trunkList = json::array();
  for (const auto& [key, tr] : trunks) trunkList.push_back(trunkJson(tr, pos));

  json hostList = json::array();
  std::map<int, std::map<std::string, int>> blocks;  // group -> health -> hosts
  std::map<std::string, std::size_t> hostsByHealth;
  for (std::uint32_t h = 0; h < t.hosts().size(); ++h) {
    const Host& host = t.hosts()[h];
    int group = -1;
    for (NodeIndex c : host.hcas)
      for (const auto& p : t.node(c).ports)
        if (group < 0 && p && p->remote) group = t.node(p->remote->node).group;
    const auto it = hostHealth.health.find(host.name);
    const std::string health(
        it == hostHealth.health.end() ? "ok" : scheduler_hooks::toString(it->second.health));
    ++blocks[group][health];
    ++hostsByHealth[health];
    json j = {{"name", host.name},
              {"group", group},
              {"hcas", host.hcas.size()},
              {"state", health},
              {"reason", it == hostHealth.health.end() ? "" : it->second.reason},
              {"cables_not_ok", hosts[h].down},
              {"ports", hosts[h].ports}};
    j.update(loadJson(hosts[h].load));
    hostList.push_back(std::move(j));
  }
  json blockList = json::array();
  for (const auto& [group, byHealth] : blocks) {
    int n = 0;
    for (const auto& [health, count] : byHealth) n += count;
    blockList.push_back({{"group", group}, {"hosts", n}, {"by_health", byHealth}});
  }
  std::map<std::string, std::size_t> switchesPerLevel;
  for (const Node& n : t.nodes())
    if (n.isSwitch()) ++switchesPerLevel[levelName(n.level)];
  return {
      {"generated_at", epochSeconds(std::chrono::system_clock::now())},
      {"sweep_sequence", s.counters ? json(s.counters->sequence) : json()},
      {"crawl_source", t.stats().source},
      {"max_level", t.maxLevel()},
      {"groups", t.groups().size()},
      {"pool", pool},
      {"rails", t.rails().size()},
      {"counts",
       {{"switches", t.switchCount()},
        {"switches_per_level", switchesPerLevel},
        {"cas", t.caCount()},
        {"hosts", t.hosts().size()},
        {"hosts_by_health", hostsByHealth},
        {"cables", t.links().size()},
        {"cables_by_state", cablesByState},
        {"cables_missing", cablesMissing},
        {"trunks", trunks.size()}}},
      {"switches", switchesJson(t, worst, badCables, pos)},
      {"trunks", std::move(trunkList)},
      {"hosts", std::move(hostList)},
      {"host_blocks", std::move(blockList)},
  };
}

}  // namespace ibfabric::api
