// Eligibility (eligibility.h): candidates less excludes, without hosts whose HCA links fail.
#include "routing/placement/eligibility.h"

#include <string>

#include "telemetry/link_health_eval.h"

namespace ibfabric::routing::placement {

void Warnings::add(std::string warning) {
  if (listed_.size() < max_) {
    listed_.push_back(std::move(warning));
  } else {
    ++suppressed_;
  }
}

std::vector<std::string> Warnings::take() {
  if (suppressed_) listed_.push_back("... and " + std::to_string(suppressed_) + " more");
  suppressed_ = 0;
  return std::move(listed_);
}

namespace {

/// What the unsatisfiable error tells.
struct Tally {
  std::size_t candidates = 0;  ///< distinct hosts asked for
  std::size_t excluded = 0;    ///< of those, excluded by the request
  std::size_t down = 0;        ///< left out for a down, faulty or uncabled HCA link
  std::size_t degraded = 0;    ///< left out for a degraded HCA link
};

/// Per host: among the candidates and not excluded.
std::vector<char> requestedHosts(const PlacementIndex& ix, const PlacementRequest& request,
                                 Warnings& warnings, Tally& tally) {
  const Topology& topo = ix.topology();
  std::vector<char> wanted(ix.hosts().size(), request.candidates.empty() ? 1 : 0);
  tally.candidates = request.candidates.empty() ? ix.hosts().size() : 0;
  for (const auto& name : request.candidates) {
    const Host* h = topo.findHost(name);
    if (!h) {
      warnings.add(name + ": unknown host (candidate ignored)");
      continue;
    }
    auto id = static_cast<std::size_t>(h - topo.hosts().data());
    if (!wanted[id]) ++tally.candidates;
    wanted[id] = 1;
  }
  for (const auto& name : request.exclude) {
    const Host* h = topo.findHost(name);
    if (!h) {
      warnings.add(name + ": unknown host (exclude ignored)");
      continue;
    }
    auto id = static_cast<std::size_t>(h - topo.hosts().data());
    if (wanted[id]) ++tally.excluded;
    wanted[id] = 0;
  }
  return wanted;
}

/// Why `info` cannot be placed on ("" when it can); `degraded` set when a degraded link (not
/// allowed) is among the reasons.
std::string hcaProblem(const PlacementIndex& ix, const LinkLoadModel& load,
                       const PlacementIndex::HostInfo& info, bool allowDegraded, bool& degraded) {
  std::string problem;
  if (info.hcas.empty()) problem = "no HCA";
  for (const auto& hca : info.hcas) {
    const std::string hcaName = ix.topology().node(hca.node).description;
    if (!hca.cabled) {
      problem = "HCA " + hcaName + " has no link";
      break;
    }
    auto state = load.at(hca.tx).health;
    if (state == telemetry::LinkState::kDown || state == telemetry::LinkState::kFaulty) {
      problem = "HCA " + hcaName + " link " + std::string(telemetry::toString(state));
      break;
    }
    if (state == telemetry::LinkState::kDegraded && !allowDegraded) {
      problem = "HCA " + hcaName + " link degraded";
      degraded = true;
    }
  }
  return problem;
}

[[noreturn]] void throwUnsatisfiable(std::size_t wanted, std::size_t eligible, const Tally& tally,
                                     bool fromCandidates) {
  std::string reason = "need " + std::to_string(wanted) + " hosts, only " +
                       std::to_string(eligible) + " eligible among " +
                       std::to_string(tally.candidates) +
                       (fromCandidates ? " candidates" : " hosts");
  std::vector<std::string> why;
  if (tally.excluded) why.push_back(std::to_string(tally.excluded) + " excluded");
  if (tally.down) why.push_back(std::to_string(tally.down) + " with a down/faulty HCA link");
  if (tally.degraded) {
    why.push_back(std::to_string(tally.degraded) + " with a degraded HCA link");
  }
  if (!why.empty()) {
    reason += " (";
    for (std::size_t i = 0; i < why.size(); ++i) reason += (i ? ", " : "") + why[i];
    reason += ")";
  }
  throw PlacementError(PlacementError::Kind::kUnsatisfiable, reason);
}

}  // namespace

EligibleHosts eligibleHosts(const PlacementIndex& ix, const LinkLoadModel& load,
                            const PlacementRequest& request, std::size_t wanted,
                            Warnings& warnings) {
  Tally tally;
  const std::vector<char> requested = requestedHosts(ix, request, warnings, tally);
  EligibleHosts result;
  result.eligible.assign(ix.hosts().size(), 0);
  for (std::size_t h = 0; h < ix.hosts().size(); ++h) {
    if (!requested[h]) continue;
    const auto& info = ix.hosts()[h];
    bool degraded = false;
    const std::string problem = hcaProblem(ix, load, info, request.allowDegraded, degraded);
    if (!problem.empty()) {
      ++(degraded ? tally.degraded : tally.down);
      warnings.add(info.name + ": " + problem + " (left out)");
      continue;
    }
    result.eligible[h] = 1;
    ++result.count;
  }
  if (result.count < wanted) {
    throwUnsatisfiable(wanted, result.count, tally, !request.candidates.empty());
  }
  return result;
}

}  // namespace ibfabric::routing::placement
