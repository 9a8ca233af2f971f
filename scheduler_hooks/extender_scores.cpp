#include "scheduler_hooks/extender_scores.h"

#include <algorithm>
#include <cmath>

namespace ibfabric::scheduler_hooks {
namespace {

double coolness(const ScoreInput& in, const std::string& host) {
  auto it = in.layout->hosts.find(host);
  if (it == in.layout->hosts.end() || !in.uplinkUtilization) return 1.0;
  double sum = 0;
  int n = 0;
  std::set<NodeIndex> seen;
  for (const auto& [rail, leaf] : it->second.leaves) {
    if (!seen.insert(leaf).second) continue;
    if (auto u = in.uplinkUtilization(leaf)) {
      sum += std::clamp(*u, 0.0, 1.0);
      ++n;
    }
  }
  return n == 0 ? 1.0 : 1.0 - sum / n;
}

/// 1 for the same leaf set, 0.5 for the same spine group, else 0.
double affinity(const ExportLayout& layout, const std::string& a, const std::string& b) {
  auto ia = layout.hosts.find(a), ib = layout.hosts.find(b);
  if (ia == layout.hosts.end() || ib == layout.hosts.end()) return 0.0;
  if (ia->second.leafSet == ib->second.leafSet) return 1.0;
  const auto& sets = layout.leafSets;
  return sets[ia->second.leafSet].group == sets[ib->second.leafSet].group ? 0.5 : 0.0;
}

double topologyEstimate(const ScoreInput& in, const std::string& host) {
  double sum = 0;
  for (const auto& p : in.peers) sum += affinity(*in.layout, host, p);
  return 0.7 * sum / static_cast<double>(in.peers.size()) + 0.3 * coolness(in, host);
}

bool inPeersLeafSet(const ScoreInput& in, const std::string& host) {
  return std::any_of(in.peers.begin(), in.peers.end(),
                     [&](const std::string& p) { return affinity(*in.layout, host, p) == 1.0; });
}

/// The engine's objective for the peers and `host`; nullopt when it finds no answer for them.
/// Throws PlacementError(kNotReady) through.
std::optional<double> objectiveWith(const ScoreInput& in, const std::string& host) {
  routing::PlacementRequest req;
  req.hosts = static_cast<int>(in.peers.size()) + 1;
  req.pattern = in.pattern;
  req.allowDegraded = in.allowDegraded;
  req.candidates.assign(in.peers.begin(), in.peers.end());
  req.candidates.push_back(host);
  req.alternatives = 1;
  try {
    auto answer = (*in.placer)(req);
    if (answer.options.empty()) return std::nullopt;
    return answer.options.front().score.objective;
  } catch (const routing::PlacementError& e) {
    if (e.kind() == routing::PlacementError::Kind::kNotReady) throw;
    return std::nullopt;  // e.g. the host is unhealthy for this job
  }
}

/// The candidates the engine is asked about: all, or the first of each leaf set when there are
/// too many. Each maps to the hosts its answer stands for.
std::map<std::string, std::vector<std::string>> representatives(
    const ScoreInput& in, const std::vector<std::string>& candidates) {
  std::map<std::string, std::vector<std::string>> out;
  if (candidates.size() <= kMaxEngineCalls) {
    for (const auto& h : candidates) out[h] = {h};
    return out;
  }
  std::map<std::size_t, std::string> first;  // leaf set -> representative
  for (const auto& h : candidates) {
    auto it = in.layout->hosts.find(h);
    if (it == in.layout->hosts.end()) continue;
    auto [f, inserted] = first.try_emplace(it->second.leafSet, h);
    out[f->second].push_back(h);
  }
  return out;
}

}  // namespace

std::map<std::string, double> enginePredictions(const ScoreInput& in,
                                                const std::vector<std::string>& hosts) {
  std::map<std::string, double> out;
  if (!in.placer || in.peers.empty()) return out;
  std::vector<std::string> candidates;
  for (const auto& h : hosts)
    if (!in.peers.count(h) && in.layout->hosts.count(h)) candidates.push_back(h);
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::map<std::string, double> objective;
  try {
    for (const auto& [rep, standsFor] : representatives(in, candidates)) {
      const double o = objectiveWith(in, rep).value_or(0.0);
      for (const auto& h : standsFor) objective[h] = o;
    }
  } catch (const routing::PlacementError&) {
    return {};  // not ready: topology and health alone decide
  }
  double best = 0;
  for (const auto& [h, o] : objective) best = std::max(best, o);
  for (const auto& [h, o] : objective) out[h] = best > 0 ? std::clamp(o / best, 0.0, 1.0) : 0.0;
  return out;
}

std::map<std::string, std::int64_t> extenderScores(const ScoreInput& in,
                                                   const std::vector<std::string>& hosts) {
  const std::map<std::string, double> engine = enginePredictions(in, hosts);
  std::map<std::string, std::int64_t> out;
  for (const auto& h : hosts) {
    double score = 0;
    if (in.peers.empty()) {
      score = 10.0 * coolness(in, h);
    } else if (in.peers.count(h)) {
      score = 10.0;
    } else {
      auto it = engine.find(h);
      const double e =
          engine.empty() ? topologyEstimate(in, h) : (it == engine.end() ? 0.0 : it->second);
      score = inPeersLeafSet(in, h) ? 6.0 + 3.0 * e : 5.0 * e;
    }
    if (auto st = in.health->find(h); st != in.health->end()) {
      if (st->second.health >= HostHealth::kFaulty) score = 0;
      if (st->second.health == HostHealth::kDegraded) score /= 2.0;
    }
    out[h] = static_cast<std::int64_t>(std::lround(std::clamp(score, 0.0, 10.0)));
  }
  return out;
}

}  // namespace ibfabric::scheduler_hooks
