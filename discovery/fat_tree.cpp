#include "discovery/fat_tree.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <map>
#include <unordered_map>

namespace ibfabric {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\0'))
    s.remove_suffix(1);
  return s;
}

void computeLevels(const std::vector<Node>& nodes, FatTreeAnalysis& out) {
  const std::size_t n = nodes.size();
  out.level.assign(n, kUnknownLevel);
  std::deque<NodeIndex> queue;
  for (const Node& node : nodes) {
    if (node.isCa()) {
      out.level[node.index] = kCaLevel;
      continue;
    }
    if (!node.isSwitch()) continue;
    for (const auto& p : node.ports) {
      if (p && p->remote && nodes[p->remote->node].isCa()) {
        out.level[node.index] = kLeafLevel;
        queue.push_back(node.index);
        break;
      }
    }
  }
  while (!queue.empty()) {
    NodeIndex cur = queue.front();
    queue.pop_front();
    for (const auto& p : nodes[cur].ports) {
      if (!p || !p->remote) continue;
      NodeIndex next = p->remote->node;
      if (!nodes[next].isSwitch() || out.level[next] != kUnknownLevel) continue;
      out.level[next] = out.level[cur] + 1;
      queue.push_back(next);
    }
  }
  out.maxLevel = 0;
  for (NodeIndex i = 0; i < n; ++i)
    if (nodes[i].isSwitch()) out.maxLevel = std::max(out.maxLevel, out.level[i]);
}

void computeHosts(const std::vector<Node>& nodes, FatTreeAnalysis& out) {
  const std::size_t n = nodes.size();
  out.host.assign(n, std::nullopt);
  out.hcaIndex.assign(n, -1);
  std::unordered_map<std::string, std::uint32_t> byName;
  std::unordered_map<Guid, std::uint32_t> byImage;
  for (const Node& node : nodes) {
    if (!node.isCa()) continue;
    auto parsed = parseHcaDescription(node.description);
    std::uint32_t h;
    if (parsed) {
      auto [it, added] = byName.try_emplace(parsed->host, std::uint32_t(out.hosts.size()));
      if (added) out.hosts.push_back(Host{parsed->host, node.sysImageGuid, {}, true});
      h = it->second;
      out.hcaIndex[node.index] = parsed->index;
    } else {
      auto [it, added] = byImage.try_emplace(node.sysImageGuid, std::uint32_t(out.hosts.size()));
      if (added)
        out.hosts.push_back(Host{toString(node.sysImageGuid), node.sysImageGuid, {}, false});
      h = it->second;
    }
    out.host[node.index] = h;
    out.hosts[h].hcas.push_back(node.index);
  }
  for (Host& host : out.hosts) {
    // Nodes arrive in index order, which is GUID order within CAs.
    bool unique = host.namedFromDescription;
    if (unique) {
      std::vector<int> seen;
      for (NodeIndex i : host.hcas) seen.push_back(out.hcaIndex[i]);
      std::sort(seen.begin(), seen.end());
      unique = std::adjacent_find(seen.begin(), seen.end()) == seen.end();
    }
    if (!unique) {
      int k = 0;
      for (NodeIndex i : host.hcas) out.hcaIndex[i] = k++;
    }
    std::stable_sort(host.hcas.begin(), host.hcas.end(),
                     [&](NodeIndex a, NodeIndex b) { return out.hcaIndex[a] < out.hcaIndex[b]; });
  }
}

void computeRails(const std::vector<Node>& nodes, FatTreeAnalysis& out) {
  const std::size_t n = nodes.size();
  out.rail.assign(n, -1);
  std::map<int, Rail> rails;
  for (const Node& node : nodes) {
    if (out.level[node.index] != kLeafLevel) continue;
    std::map<int, int> votes;
    for (const auto& p : node.ports) {
      if (!p || !p->remote) continue;
      int idx = out.hcaIndex[p->remote->node];
      if (nodes[p->remote->node].isCa() && idx >= 0) ++votes[idx];
    }
    if (votes.empty()) continue;
    auto best = votes.begin();
    for (auto it = votes.begin(); it != votes.end(); ++it)
      if (it->second > best->second) best = it;
    out.rail[node.index] = best->first;
    Rail& rail = rails[best->first];
    rail.index = best->first;
    rail.leaves.push_back(node.index);
  }
  for (const Node& node : nodes) {
    if (!node.isCa()) continue;
    for (const auto& p : node.ports) {
      if (!p || !p->remote) continue;
      int r = out.rail[p->remote->node];
      if (r < 0) continue;
      out.rail[node.index] = r;
      rails[r].hcas.push_back(node.index);
      break;
    }
  }
  for (auto& [index, rail] : rails) out.rails.push_back(std::move(rail));
}

void computeGroups(const std::vector<Node>& nodes, FatTreeAnalysis& out) {
  const std::size_t n = nodes.size();
  out.group.assign(n, -1);
  std::map<std::vector<NodeIndex>, int> bySpines;
  for (const Node& node : nodes) {
    if (!node.isSwitch() || out.level[node.index] != kLeafLevel) continue;
    std::vector<NodeIndex> spines;
    for (const auto& p : node.ports) {
      if (!p || !p->remote) continue;
      NodeIndex r = p->remote->node;
      if (nodes[r].isSwitch() && out.level[r] == kLeafLevel + 1) spines.push_back(r);
    }
    std::sort(spines.begin(), spines.end());
    spines.erase(std::unique(spines.begin(), spines.end()), spines.end());
    auto [it, added] = bySpines.try_emplace(spines, int(out.groups.size()));
    if (added) out.groups.push_back(LeafGroup{{}, spines});
    out.groups[it->second].leaves.push_back(node.index);
    out.group[node.index] = it->second;
  }
  // A spine belongs to a group when every leaf it reaches is in that group.
  std::vector<int> spineGroup(n, -1);
  std::vector<bool> mixed(n, false);
  for (std::size_t g = 0; g < out.groups.size(); ++g) {
    for (NodeIndex s : out.groups[g].spines) {
      if (spineGroup[s] == -1)
        spineGroup[s] = int(g);
      else if (spineGroup[s] != int(g))
        mixed[s] = true;
    }
  }
  for (NodeIndex s = 0; s < n; ++s)
    if (spineGroup[s] >= 0 && !mixed[s]) out.group[s] = spineGroup[s];
}

}  // namespace

std::optional<HcaName> parseHcaDescription(std::string_view description) {
  std::string_view d = trim(description);
  auto space = d.find_last_of(" \t");
  if (space == std::string_view::npos) return std::nullopt;
  std::string_view host = trim(d.substr(0, space));
  std::string_view dev = d.substr(space + 1);
  auto underscore = dev.rfind('_');
  if (host.empty() || underscore == std::string_view::npos || underscore == 0) return std::nullopt;
  std::string_view digits = dev.substr(underscore + 1);
  int index = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() || index < 0)
    return std::nullopt;
  return HcaName{std::string(host), index};
}

FatTreeAnalysis analyzeFatTree(const std::vector<Node>& nodes) {
  FatTreeAnalysis out;
  computeLevels(nodes, out);
  computeHosts(nodes, out);
  computeRails(nodes, out);
  computeGroups(nodes, out);
  return out;
}

}  // namespace ibfabric
