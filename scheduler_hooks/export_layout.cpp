#include "scheduler_hooks/export_layout.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "discovery/link_health.h"

namespace ibfabric::scheduler_hooks {
namespace {

bool plainChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

std::string hcaLabel(const Host& h, const Node& hca) {
  // "dgx0007 mlx5_2" already names host and HCA; otherwise "<host> <guid>".
  if (hca.description.find(h.name) != std::string::npos) return hca.description;
  return h.name + " " + toString(hca.guid);
}

std::string numbered(std::string_view prefix, std::size_t n, std::size_t count) {
  std::string digits = std::to_string(n);
  const std::size_t width = std::max<std::size_t>(2, std::to_string(count).size());
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return std::string(prefix) + digits;
}

}  // namespace

std::string_view toString(HostHealth h) {
  switch (h) {
    case HostHealth::kOk:
      return "ok";
    case HostHealth::kDegraded:
      return "degraded";
    case HostHealth::kFaulty:
      return "faulty";
    case HostHealth::kDown:
      return "down";
  }
  return "ok";
}

void mergeHostStatus(HostHealthMap& map, const std::string& host, const HostStatus& status) {
  if (status.health == HostHealth::kOk) return;
  auto [it, inserted] = map.try_emplace(host, status);
  if (inserted) return;
  HostStatus& cur = it->second;
  const bool hcaDown = cur.hcaDown || status.hcaDown;
  if (status.health > cur.health) {
    cur = status;
  } else if (status.health == cur.health && cur.reason.find(status.reason) == std::string::npos) {
    cur.reason += "; " + status.reason;
  }
  cur.hcaDown = hcaDown;
}

namespace {

/// Why an HCA of `h` carries no traffic ("" when one of its cabled ports is Active).
std::string hcaDownReason(const Host& h, const Node& hca) {
  std::string name = hcaLabel(h, hca);
  if (hca.rail >= 0) name += " (rail " + std::to_string(hca.rail) + ")";
  if (hca.missing) return name + ": missing (not seen by the last crawl)";
  std::string why;
  for (const auto& p : hca.ports) {
    if (!p || p->num.value() == 0 || !p->remote) continue;
    if (p->state == PortState::kActive) return "";
    why = name + " port " + toString(p->num) + ": link " + std::string(toString(p->state));
  }
  return why.empty() ? name + ": no link" : why;
}

}  // namespace

HostHealthMap hostHealthFromTopology(const Topology& t) {
  HostHealthMap out;
  // A host with some of its HCAs down is degraded (it runs, on fewer rails); with all, down.
  for (const Host& h : t.hosts()) {
    std::vector<std::string> down;
    for (NodeIndex i : h.hcas)
      if (auto why = hcaDownReason(h, t.node(i)); !why.empty()) down.push_back(std::move(why));
    if (down.empty()) continue;
    const HostHealth health =
        down.size() == h.hcas.size() ? HostHealth::kDown : HostHealth::kDegraded;
    for (const auto& why : down) mergeHostStatus(out, h.name, {health, why, true});
  }
  for (const LinkHealthIssue& issue : checkLinkHealth(t)) {
    for (std::optional<PortRef> end : {std::optional<PortRef>(issue.port), issue.remote}) {
      if (!end) continue;
      const Node& n = t.node(end->node);
      if (!n.isCa() || !n.host) continue;
      const Host& h = t.hosts()[*n.host];
      mergeHostStatus(
          out, h.name,
          {HostHealth::kDegraded, std::string(toString(issue.kind)) + ": " + issue.text});
    }
  }
  return out;
}

std::string exportName(std::string_view description) {
  std::string_view s = description;
  // NVIDIA switch descriptions: "MF0;<hostname>:<part>/U1".
  if (auto semi = s.find(';'); semi != std::string_view::npos) {
    auto colon = s.find(':', semi + 1);
    std::string_view inner = s.substr(
        semi + 1, colon == std::string_view::npos ? std::string_view::npos : colon - semi - 1);
    if (!inner.empty()) s = inner;
  }
  std::string out;
  for (char c : s) {
    char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '.' || l == '_' || l == '-') {
      out += l;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  while (!out.empty() && !alnum(out.back())) out.pop_back();
  std::size_t start = 0;
  while (start < out.size() && !alnum(out[start])) ++start;
  out = out.substr(start);
  if (out.size() > 63) {
    out.resize(63);
    while (!out.empty() && !alnum(out.back())) out.pop_back();
  }
  return out;
}

bool isPlainHostName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), plainChar);
}

namespace {

/// The last `digits` hex digits of a GUID.
std::string guidTail(Guid guid, int digits) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(guid.value()));
  return std::string(buf + 16 - digits);
}

}  // namespace

std::vector<std::string> uniqueSwitchNames(const Topology& t) {
  std::vector<std::string> names(t.nodes().size());
  std::map<std::string, int> sharing;  // base name -> switches with it
  for (const Node& n : t.nodes()) {
    if (!n.isSwitch()) continue;
    names[n.index] = exportName(n.description);
    if (names[n.index].empty()) names[n.index] = "sw-" + guidTail(n.guid, 16);
    ++sharing[names[n.index]];
  }
  // Every switch of a shared name gets its own GUID's digits, so that the name of one never
  // depends on the others (replacing one switch renames no other).
  std::map<std::string, int> used;
  for (const Node& n : t.nodes()) {
    if (!n.isSwitch() || sharing[names[n.index]] < 2) continue;
    std::string& name = names[n.index];
    if (name.size() > 56) name.resize(56);
    while (!name.empty() && (name.back() == '-' || name.back() == '.' || name.back() == '_'))
      name.pop_back();
    name += "-" + guidTail(n.guid, 6);
    ++used[name];
  }
  // Last six digits alike (GUIDs of one vendor range are not): the whole GUID.
  for (const Node& n : t.nodes()) {
    if (!n.isSwitch() || used.count(names[n.index]) == 0 || used[names[n.index]] < 2) continue;
    std::string& name = names[n.index];
    name = name.substr(0, std::min<std::size_t>(name.size() - 6, 46)) + guidTail(n.guid, 16);
  }
  return names;
}

const LeafSet* ExportLayout::leafSetOf(std::string_view host) const {
  auto it = hosts.find(std::string(host));
  return it == hosts.end() ? nullptr : &leafSets.at(it->second.leafSet);
}

ExportLayout buildExportLayout(TopologyPtr topology, const ExportOptions& options) {
  ExportLayout layout;
  layout.topology = topology;
  const Topology& t = *topology;

  layout.switchNames = uniqueSwitchNames(t);

  // Each kept host's leaves.
  struct Pending {
    std::string host;
    std::vector<std::pair<int, NodeIndex>> leaves;
    std::vector<NodeIndex> set;  // sorted, unique
  };
  std::vector<Pending> pending;
  for (const Host& h : t.hosts()) {
    if (options.excludeUnhealthy) {
      auto it = options.health.find(h.name);
      if (it != options.health.end() &&
          (it->second.health >= HostHealth::kFaulty || it->second.hcaDown)) {
        layout.excluded.push_back(h.name + ": " + std::string(toString(it->second.health)) + " (" +
                                  it->second.reason + ")");
        continue;
      }
    }
    Pending p{h.name, {}, {}};
    for (NodeIndex i : h.hcas) {
      const Node& hca = t.node(i);
      for (const auto& port : hca.ports) {
        if (!port || !port->remote) continue;
        const Node& leaf = t.node(port->remote->node);
        if (!leaf.isSwitch()) continue;
        p.leaves.emplace_back(hca.rail >= 0 ? hca.rail : hca.hcaIndex, leaf.index);
        p.set.push_back(leaf.index);
      }
    }
    std::sort(p.set.begin(), p.set.end());
    p.set.erase(std::unique(p.set.begin(), p.set.end()), p.set.end());
    if (p.set.empty()) {
      layout.excluded.push_back(h.name + ": no HCA cabled to a switch");
      continue;
    }
    pending.push_back(std::move(p));
  }

  // Leaf sets: distinct sets, largest first; a host whose set is contained in a larger one (it
  // lost a link) joins that one.
  std::vector<std::vector<NodeIndex>> sets;
  for (const auto& p : pending) sets.push_back(p.set);
  std::sort(sets.begin(), sets.end(), [](const auto& a, const auto& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  sets.erase(std::unique(sets.begin(), sets.end()), sets.end());
  std::vector<std::size_t> canonical(sets.size());
  for (std::size_t i = 0; i < sets.size(); ++i) {
    canonical[i] = i;
    for (std::size_t j = 0; j < i; ++j) {
      if (canonical[j] == j && sets[j].size() > sets[i].size() &&
          std::includes(sets[j].begin(), sets[j].end(), sets[i].begin(), sets[i].end())) {
        canonical[i] = j;
        break;
      }
    }
  }
  std::map<std::vector<NodeIndex>, std::vector<std::string>> members;  // canonical set -> hosts
  std::map<std::string, std::vector<std::pair<int, NodeIndex>>> hostLeaves;
  for (auto& p : pending) {
    auto pos = std::lower_bound(sets.begin(), sets.end(), p.set, [](const auto& a, const auto& b) {
      return a.size() != b.size() ? a.size() > b.size() : a < b;
    });
    members[sets[canonical[std::size_t(pos - sets.begin())]]].push_back(p.host);
    hostLeaves[p.host] = std::move(p.leaves);
  }

  // Groups: Topology's leaf groups in order of first appearance.
  std::vector<LeafSet> leafSets;
  for (auto& [set, hosts] : members) {
    std::sort(hosts.begin(), hosts.end());
    LeafSet ls;
    ls.leaves = set;
    ls.hosts = hosts;
    int g = -1;
    for (NodeIndex l : set) {
      int lg = t.node(l).group;
      if (lg >= 0 && (g < 0 || lg < g)) g = lg;
    }
    ls.group = g;  // topology group for now; renumbered below
    if (set.size() > 1) layout.railOptimized = true;
    leafSets.push_back(std::move(ls));
  }
  // Order: by topology group (unknown last), then first host.
  std::sort(leafSets.begin(), leafSets.end(), [](const LeafSet& a, const LeafSet& b) {
    unsigned ga = static_cast<unsigned>(a.group), gb = static_cast<unsigned>(b.group);
    return ga != gb ? ga < gb : a.hosts.front() < b.hosts.front();
  });
  std::map<int, int> groupIndex;
  for (auto& ls : leafSets) {
    auto [it, inserted] = groupIndex.try_emplace(ls.group, static_cast<int>(groupIndex.size()));
    ls.group = it->second;
  }
  layout.groups.resize(groupIndex.size());
  for (std::size_t g = 0; g < layout.groups.size(); ++g)
    layout.groups[g].name = numbered("sg", g + 1, layout.groups.size());
  std::size_t multi = 0;
  for (const auto& ls : leafSets) multi += ls.leaves.size() > 1 ? 1 : 0;
  std::size_t suNumber = 0;
  for (std::size_t i = 0; i < leafSets.size(); ++i) {
    LeafSet& ls = leafSets[i];
    ls.name = ls.leaves.size() == 1 ? layout.switchNames[ls.leaves[0]]
                                    : numbered("su", ++suNumber, multi);
    layout.groups[static_cast<std::size_t>(ls.group)].leafSets.push_back(i);
    for (const auto& h : ls.hosts) layout.hosts[h] = HostPlace{i, hostLeaves[h]};
  }
  layout.leafSets = std::move(leafSets);
  std::vector<std::string> allHosts;
  for (const Host& h : t.hosts()) allHosts.push_back(h.name);
  layout.k8sNames = resolveK8sNodeNames(allHosts, options.k8sNodeNames.get());
  return layout;
}

}  // namespace ibfabric::scheduler_hooks
