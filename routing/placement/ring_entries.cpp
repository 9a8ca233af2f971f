// Ring entry hosts (ring_entries.h).
#include "routing/placement/ring_entries.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "routing/placement/ring_scoring.h"

namespace ibfabric::routing::placement {

bool RingEntries::refine(Order& order, Eval& e,
                         const std::vector<std::vector<HostId>>& eligibleByBlock,
                         std::uint64_t workLimit) {
  const std::size_t n = order.size();
  const std::vector<std::size_t> runStart = blockRuns(order);
  if (runStart.size() < 2) return false;
  Order trial = order;
  ev_.evaluate(trial, CommPattern::kRingAllreduce);  // the flows of every boundary, in place
  ev_.ring().invalidate();                           // changed by hand below
  inRing_.clear(ev_.context().ix.hosts().size());
  for (HostId h : trial) inRing_.mark(h);
  bool changed = false;
  for (int pass = 0; pass < 4 && ev_.work() < workLimit; ++pass) {
    bool passChanged = false;
    for (std::size_t r = 0; r < runStart.size() && ev_.work() < workLimit; ++r) {
      const std::size_t end = r + 1 < runStart.size() ? runStart[r + 1] : n;
      if (refineBoundary(trial, runStart[r], end, eligibleByBlock)) passChanged = true;
    }
    if (!passChanged) break;
    changed = true;
  }
  if (!changed) return false;
  Eval refined = ev_.evaluate(trial, CommPattern::kRingAllreduce);
  if (refined.objective <= e.objective + kImprovement) return false;
  order = std::move(trial);
  e = std::move(refined);
  return true;
}

std::vector<std::size_t> RingEntries::blockRuns(const Order& order) const {
  const auto& hosts = ev_.context().ix.hosts();
  std::vector<std::size_t> runStart;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || hosts[order[i]].block != hosts[order[i - 1]].block) runStart.push_back(i);
  }
  return runStart;
}

bool RingEntries::refineBoundary(Order& trial, std::size_t s, std::size_t end,
                                 const std::vector<std::vector<HostId>>& eligibleByBlock) {
  const auto& hosts = ev_.context().ix.hosts();
  JobFlows& flows = ev_.flows();
  const std::size_t n = trial.size();
  const HostId from = trial[(s + n - 1) % n];
  const HostId entry = trial[s];
  if (!boundaryLinks(from, entry, path_)) return false;
  for (DirectedLinkId d : path_) --flows.count[d];
  Best best{shareWith(path_), entry};
  for (std::size_t i = s + 1; i < end; ++i) considerEntry(from, trial[i], best);
  if (hosts[entry].block >= 0) {
    for (HostId c : eligibleByBlock[static_cast<std::size_t>(hosts[entry].block)]) {
      if (!inRing_.marked(c)) considerEntry(from, c, best);
    }
  }
  if (best.host == entry) {
    for (DirectedLinkId d : path_) ++flows.count[d];
    return false;
  }
  for (DirectedLinkId d : bestPath_) flows.add(d, 1);
  if (inRing_.marked(best.host)) {
    std::swap(trial[s], *std::find(trial.begin() + static_cast<std::ptrdiff_t>(s),
                                   trial.begin() + static_cast<std::ptrdiff_t>(end), best.host));
  } else {
    inRing_.unmark(entry);
    inRing_.mark(best.host);
    trial[s] = best.host;
  }
  return true;
}

void RingEntries::considerEntry(HostId from, HostId candidate, Best& best) {
  if (!boundaryLinks(from, candidate, candidatePath_)) return;
  double share = shareWith(candidatePath_);
  if (share > best.share * (1.0 + 1e-9)) {
    best.share = share;
    best.host = candidate;
    bestPath_.swap(candidatePath_);
  }
}

bool RingEntries::boundaryLinks(HostId from, HostId to, std::vector<DirectedLinkId>& out) {
  const PlacementIndex& ix = ev_.context().ix;
  out.clear();
  const bool routed = forEachRail(
      ix, from, to, [&](const PlacementIndex::Hca& src, const PlacementIndex::Hca& dst) {
        return src.cabled && dst.cabled &&
               ix.traceFromSwitch(src.leaf, dst.lid, dst.node,
                                  [&](DirectedLinkId d) { out.push_back(d); }) >= 0;
      });
  ev_.flows().work += out.size();
  return routed;
}

double RingEntries::shareWith(std::vector<DirectedLinkId>& links) const {
  const auto& residual = ev_.context().residual;
  const auto& flows = ev_.flows().count;
  std::sort(links.begin(), links.end());
  double share = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < links.size();) {
    std::size_t j = i;
    while (j < links.size() && links[j] == links[i]) ++j;
    share = std::min(share, residual[links[i]] / static_cast<double>(flows[links[i]] + (j - i)));
    i = j;
  }
  return share;
}

}  // namespace ibfabric::routing::placement
