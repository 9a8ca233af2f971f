#include "routing/job_drain_impact.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace ibfabric::routing {

std::optional<double> JobDrainImpact::drop() const {
  if (!bottleneckNow || !bottleneckAfter) return std::nullopt;
  return *bottleneckNow - *bottleneckAfter;
}

std::optional<double> JobDrainImpact::dropFraction() const {
  const auto d = drop();
  if (!d || *bottleneckNow <= 0.0) return std::nullopt;
  return *d / *bottleneckNow;
}

namespace {

/// The directed links of `job` on cables out of service.
std::uint32_t drainedLinksUsed(const JobRouting& job, const std::vector<char>& linkOut) {
  std::uint32_t n = 0;
  for (const auto& u : job.links) {
    const std::uint32_t l = linkOf(u.link);
    if (l < linkOut.size() && linkOut[l]) ++n;
  }
  return n;
}

/// Alternatives for `hit` on the drained model; `exclude` = hosts losing HCAs + other jobs'.
void placeAlternatives(const PlacementEngine& drained, const JobTraffic& job,
                       std::vector<std::string> exclude, const JobDrainOptions& options,
                       JobDrainImpact& hit) {
  hit.placed = true;
  PlacementRequest r;
  r.hosts = static_cast<int>(job.hosts.size());
  r.pattern = job.pattern;
  r.exclude = std::move(exclude);
  r.alternatives = std::max(1, options.alternatives);
  try {
    PlacementAnswer a = drained.place(r);
    hit.alternatives = std::move(a.options);
    // The excluded hosts are not news; what else the engine left out is.
    std::string warnings;
    std::size_t shown = 0;
    for (const auto& w : a.warnings) {
      if (w.find("(left out)") == std::string::npos) continue;
      if (shown++ < 3) warnings += (warnings.empty() ? "" : "; ") + w;
    }
    if (shown > 3) warnings += "; ... and " + std::to_string(shown - 3) + " more left out";
    hit.note = warnings;
  } catch (const PlacementError& e) {
    hit.note = std::string("no alternative: ") + e.what();
  }
}

}  // namespace

std::vector<JobDrainImpact> jobDrainImpact(const PlacementEngine& now, const DrainedModel& drained,
                                           const JobAttribution* attribution,
                                           const std::vector<JobTraffic>& jobs,
                                           const DrainImpact& impact,
                                           const JobDrainOptions& options) {
  const Topology& t = now.index().topology();
  std::map<std::string, const HostDrainImpact*, std::less<>> lost;
  for (const auto& h : impact.hosts) lost[t.hosts()[h.host].name] = &h;

  std::vector<JobDrainImpact> out;
  for (std::uint32_t j = 0; j < jobs.size(); ++j) {
    JobDrainImpact hit;
    hit.job = j;
    for (const auto& name : jobs[j].hosts) {
      const auto it = lost.find(name);
      if (it != lost.end())
        hit.hostsHit.push_back({name, it->second->lost.size(), it->second->cutOff()});
    }
    if (attribution && j < attribution->jobs().size())
      hit.drainedLinksUsed = drainedLinksUsed(attribution->jobs()[j], drained.linkOut);
    if (hit.hostsHit.empty() && hit.drainedLinksUsed == 0) continue;
    hit.bottleneckNow = predictedBottleneck(now, jobs[j].hosts, jobs[j].pattern);
    hit.bottleneckAfter = predictedBottleneck(*drained.engine, jobs[j].hosts, jobs[j].pattern);
    out.push_back(std::move(hit));
  }

  // Alternatives for the largest drops first (by fraction, then by bytes/s, then job order).
  std::vector<std::size_t> order(out.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto key = [&](std::size_t i) {
    return std::make_pair(out[i].dropFraction().value_or(0.0), out[i].drop().value_or(0.0));
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return key(a) > key(b); });
  std::set<std::string, std::less<>> lostHosts;
  for (const auto& [name, h] : lost) lostHosts.insert(name);
  for (std::size_t k = 0; k < order.size(); ++k) {
    JobDrainImpact& hit = out[order[k]];
    if (k >= options.maxPlacements) {
      hit.note = "alternatives not computed: " + std::to_string(out.size()) + " jobs hit, the " +
                 std::to_string(options.maxPlacements) + " with the largest drops got them";
      continue;
    }
    std::set<std::string, std::less<>> exclude = lostHosts;
    for (std::uint32_t j = 0; j < jobs.size(); ++j)
      if (j != hit.job) exclude.insert(jobs[j].hosts.begin(), jobs[j].hosts.end());
    for (const auto& h : jobs[hit.job].hosts) exclude.erase(h);
    for (const auto& h : hit.hostsHit) exclude.insert(h.host);
    placeAlternatives(*drained.engine, jobs[hit.job], {exclude.begin(), exclude.end()}, options,
                      hit);
  }
  return out;
}

}  // namespace ibfabric::routing
