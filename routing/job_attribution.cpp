// Job attribution (job_attribution.h): the jobs' flows walked on the placement index.
#include "routing/job_attribution.h"

#include <algorithm>

#include "routing/placement/host_order.h"
#include "routing/placement/ring_scoring.h"

namespace ibfabric::routing {
namespace {

using placement::HostId;

/// Per directed link, the flows and weight of the job being walked, and of every job so far.
class LinkTally {
 public:
  explicit LinkTally(std::size_t links) : flows_(links, 0), weight_(links, 0.0), total_(links) {}

  void add(DirectedLinkId d, double weight) {
    if (flows_[d] == 0) touched_.push_back(d);
    ++flows_[d];
    weight_[d] += weight;
    total_[d] += weight;
  }
  /// The walked job's links (by id); clears them for the next job.
  std::vector<JobLinkUse> take() {
    std::sort(touched_.begin(), touched_.end());
    std::vector<JobLinkUse> out;
    out.reserve(touched_.size());
    for (DirectedLinkId d : touched_) {
      out.push_back({d, flows_[d], weight_[d], 0.0});
      flows_[d] = 0;
      weight_[d] = 0.0;
    }
    touched_.clear();
    return out;
  }
  double total(DirectedLinkId d) const { return total_[d]; }

 private:
  std::vector<std::uint32_t> flows_;
  std::vector<double> weight_;
  std::vector<double> total_;
  std::vector<DirectedLinkId> touched_;
};

/// The flows of host `from` to host `to`, rail by rail, each of `weight`.
void walkPair(const PlacementIndex& ix, HostId from, HostId to, double weight, LinkTally& tally,
              JobRouting& job) {
  auto onLink = [&](DirectedLinkId d) { tally.add(d, weight); };
  placement::forEachRail(ix, from, to,
                         [&](const PlacementIndex::Hca& src, const PlacementIndex::Hca& dst) {
                           ++job.flows;
                           if (!src.cabled || !dst.cabled) {
                             ++job.unrouted;
                             return true;
                           }
                           onLink(src.tx);
                           if (ix.traceFromSwitch(src.leaf, dst.lid, dst.node, onLink) < 0)
                             ++job.unrouted;
                           return true;
                         });
}

/// The job's hosts as index host ids, in rank order (unknown names listed in `job`).
std::vector<HostId> hostIds(const PlacementIndex& ix, const JobTraffic& traffic, JobRouting& job) {
  const Topology& topo = ix.topology();
  std::vector<HostId> order;
  order.reserve(traffic.hosts.size());
  for (const auto& name : traffic.hosts) {
    const Host* h = topo.findHost(name);
    if (!h) {
      job.unknownHosts.push_back(name);
      continue;
    }
    order.push_back(static_cast<HostId>(h - topo.hosts().data()));
  }
  return order;
}

JobRouting walkJob(const PlacementIndex& ix, const JobTraffic& traffic, LinkTally& tally) {
  JobRouting job;
  const std::vector<HostId> order = hostIds(ix, traffic, job);
  const std::size_t n = order.size();
  if (n >= 2 && traffic.pattern == CommPattern::kRingAllreduce) {
    for (std::size_t i = 0; i < n; ++i) walkPair(ix, order[i], order[(i + 1) % n], 1.0, tally, job);
  } else if (n >= 2 && traffic.pattern == CommPattern::kAllToAll) {
    const double w = 1.0 / static_cast<double>(n - 1);
    for (HostId from : order)
      for (HostId to : order)
        if (from != to) walkPair(ix, from, to, w, tally, job);
  }
  job.links = tally.take();
  return job;
}

}  // namespace

JobAttribution JobAttribution::compute(const PlacementIndex& index,
                                       const std::vector<JobTraffic>& jobs) {
  JobAttribution a;
  LinkTally tally(index.topology().links().size() * 2);
  a.jobs_.reserve(jobs.size());
  for (const auto& traffic : jobs) a.jobs_.push_back(walkJob(index, traffic, tally));

  struct Entry {
    DirectedLinkId link;
    LinkJobUse use;
  };
  std::vector<Entry> entries;
  for (std::uint32_t j = 0; j < a.jobs_.size(); ++j) {
    for (JobLinkUse& u : a.jobs_[j].links) {
      u.share = u.weight / tally.total(u.link);
      entries.push_back({u.link, {j, u.flows, u.weight, u.share}});
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) {
    if (x.link != y.link) return x.link < y.link;
    if (x.use.share != y.use.share) return x.use.share > y.use.share;
    return x.use.job < y.use.job;
  });
  a.entries_.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i == 0 || entries[i].link != entries[i - 1].link) {
      a.linkIds_.push_back(entries[i].link);
      a.offsets_.push_back(static_cast<std::uint32_t>(i));
    }
    a.entries_.push_back(entries[i].use);
  }
  a.offsets_.push_back(static_cast<std::uint32_t>(entries.size()));
  return a;
}

std::span<const LinkJobUse> JobAttribution::jobsOn(DirectedLinkId d) const {
  auto it = std::lower_bound(linkIds_.begin(), linkIds_.end(), d);
  if (it == linkIds_.end() || *it != d) return {};
  const std::size_t k = static_cast<std::size_t>(it - linkIds_.begin());
  return {entries_.data() + offsets_[k], entries_.data() + offsets_[k + 1]};
}

std::vector<JobLinkNow> hottestLinks(const JobRouting& job, const LinkLoadModel& load,
                                     std::size_t n) {
  std::vector<JobLinkNow> all;
  all.reserve(job.links.size());
  for (const auto& u : job.links)
    if (u.link < load.size()) all.push_back({u, load.at(u.link)});
  auto hotter = [](const JobLinkNow& x, const JobLinkNow& y) {
    if (x.load.utilization != y.load.utilization) return x.load.utilization > y.load.utilization;
    if (x.load.congestion != y.load.congestion) return x.load.congestion > y.load.congestion;
    return x.use.link < y.use.link;
  };
  const std::size_t k = std::min(n, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(), hotter);
  all.resize(k);
  return all;
}

}  // namespace ibfabric::routing
