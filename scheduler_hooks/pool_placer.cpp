#include "scheduler_hooks/pool_placer.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

namespace ibfabric::scheduler_hooks {

routing::Placer makeLeafPackingPlacer(std::function<TopologyPtr()> topology) {
  return [topology = std::move(topology)](const routing::PlacementRequest& r) {
    using routing::PlacementError;
    TopologyPtr t = topology();
    if (!t) throw PlacementError(PlacementError::Kind::kNotReady, "no topology yet");
    int n = r.hosts;
    if (n <= 0 && r.gpusPerHost > 0) n = (r.gpus + r.gpusPerHost - 1) / r.gpusPerHost;
    if (n <= 0) throw PlacementError(PlacementError::Kind::kInvalidRequest, "no hosts asked");
    routing::PlacementAnswer answer;
    std::unordered_set<std::string> excluded(r.exclude.begin(), r.exclude.end());
    std::vector<std::string> names = r.candidates;
    if (names.empty())
      for (const Host& h : t->hosts()) names.push_back(h.name);
    std::map<std::vector<std::uint64_t>, std::vector<std::string>> groups;
    for (const auto& name : names) {
      if (excluded.count(name)) continue;
      const Host* h = t->findHost(name);
      if (!h) {
        answer.warnings.push_back(name + ": unknown to the fabric");
        continue;
      }
      std::set<std::uint64_t> leaves;
      for (NodeIndex ni : h->hcas)
        for (const auto& p : t->node(ni).ports)
          if (p && p->remote && t->node(p->remote->node).isSwitch())
            leaves.insert(t->node(p->remote->node).guid.value());
      groups[std::vector<std::uint64_t>(leaves.begin(), leaves.end())].push_back(name);
    }
    std::vector<std::pair<std::vector<std::uint64_t>, std::vector<std::string>>> list(
        groups.begin(), groups.end());
    std::size_t total = 0;
    for (auto& [k, v] : list) {
      std::sort(v.begin(), v.end());
      total += v.size();
    }
    if (total < static_cast<std::size_t>(n))
      throw PlacementError(
          PlacementError::Kind::kUnsatisfiable,
          std::to_string(n) + " hosts asked, " + std::to_string(total) + " candidates");
    const auto firstName = [](const auto& g) { return g.second.front(); };
    std::sort(list.begin(), list.end(), [&](const auto& a, const auto& b) {
      const bool fa = a.second.size() >= std::size_t(n), fb = b.second.size() >= std::size_t(n);
      if (fa != fb) return fa;
      if (fa && a.second.size() != b.second.size()) return a.second.size() < b.second.size();
      if (fa) return firstName(a) < firstName(b);
      if (a.second.size() != b.second.size()) return a.second.size() > b.second.size();
      return firstName(a) < firstName(b);
    });
    routing::PlacementOption opt;
    std::set<std::uint64_t> leaves;
    for (const auto& [key, hosts] : list) {
      for (const auto& h : hosts) {
        if (static_cast<int>(opt.hosts.size()) == n) break;
        opt.hosts.push_back(h);
        leaves.insert(key.begin(), key.end());
      }
      if (static_cast<int>(opt.hosts.size()) == n) break;
    }
    opt.score.leafSwitches = static_cast<int>(leaves.size());
    opt.score.objective = -static_cast<double>(leaves.size());
    opt.score.explanation = std::to_string(n) + " hosts on " + std::to_string(leaves.size()) +
                            " leaf switches (leaf packing, no load model)";
    answer.options.push_back(std::move(opt));
    return answer;
  };
}

}  // namespace ibfabric::scheduler_hooks
