#include "routing/forwarding.h"

#include <unordered_map>

namespace ibfabric::routing {

const char* toString(TableState state) {
  switch (state) {
    case TableState::kOk:
      return "ok";
    case TableState::kStale:
      return "stale";
    case TableState::kMissing:
      return "missing";
  }
  return "unknown";
}

ForwardingTablesPtr rebaseTables(const ForwardingTables& tables, TopologyPtr topology) {
  std::vector<std::optional<SwitchTable>> byNode(topology ? topology->nodes().size() : 0);
  std::vector<std::string> failures = tables.failures;
  if (topology && tables.topology()) {
    for (const Node& old : tables.topology()->nodes()) {
      const SwitchTable* t = tables.table(old.index);
      if (!t) continue;
      const Node* now = topology->findNode(t->switchGuid);
      if (now && now->isSwitch()) byNode[now->index] = *t;
    }
  }
  auto out =
      std::make_shared<ForwardingTables>(std::move(topology), std::move(byNode), tables.source());
  out->readTime = tables.readTime;
  out->madsUsed = tables.madsUsed;
  out->failures = std::move(failures);
  out->refreshTime = tables.refreshTime;
  out->refreshMads = tables.refreshMads;
  out->fullRead = tables.fullRead;
  if (out->topology() && tables.topology()) {
    for (const SwitchTableStatus& s : tables.switchStatus) {
      const Node* now = out->topology()->findNode(tables.topology()->node(s.node).guid);
      if (!now || !now->isSwitch()) continue;
      out->switchStatus.push_back(s);
      out->switchStatus.back().node = now->index;
    }
  }
  return out;
}

std::vector<std::string> tableDifferences(const ForwardingTables& a, const ForwardingTables& b,
                                          std::size_t limit) {
  auto index = [](const ForwardingTables& t) {
    std::unordered_map<Guid, const SwitchTable*> m;
    if (!t.topology()) return m;
    for (const Node& n : t.topology()->nodes()) {
      if (const SwitchTable* s = t.table(n.index)) m[s->switchGuid] = s;
    }
    return m;
  };
  const auto ia = index(a);
  const auto ib = index(b);
  std::vector<std::string> out;
  auto add = [&](Guid g, const char* why) {
    if (out.size() < limit) out.push_back(toString(g) + ": " + why);
  };
  for (const auto& [guid, ta] : ia) {
    auto it = ib.find(guid);
    if (it == ib.end()) {
      add(guid, "table only in the first");
    } else if (ta->ports != it->second->ports) {
      add(guid, "entries differ");
    }
  }
  for (const auto& [guid, tb] : ib) {
    if (!ia.contains(guid)) add(guid, "table only in the second");
  }
  return out;
}

}  // namespace ibfabric::routing
