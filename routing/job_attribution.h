// Job attribution: which directed links each job's flows use on the current forwarding tables,
// and per directed link which jobs route over it and each one's share.
//
// A job is a host set in rank order and a pattern (placement.h's CommPattern). Its flows are the
// placement engine's model of that pattern, walked on the same PlacementIndex:
//   - ring_allreduce: rank i -> rank i+1 (mod n), HCA k of one host to HCA k of the next (rail by
//     rail, placement/ring_scoring.h's forEachRail); a flow carries its sender's whole stream on
//     that rail: weight 1.
//   - alltoall: every rank to every other rank, rail by rail; a sender spreads its stream over its
//     n - 1 peers: weight 1 / (n - 1) per flow.
//   - none: no inter-host flows (no links).
// So every rank injects weight 1 per rail under either pattern, and jobs of different patterns
// are comparable. A job's share of a directed link is its weight on the link over the weight of
// every job on it (shares on one link sum to 1).
//
// The result depends only on (index, jobs): compute it when the tables, the topology or the jobs
// change, and join it with a LinkLoadModel of the index's topology per sweep (cheap: a lookup per
// link used). Pure function; the result is a plain value, thread-safe to read.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "routing/link_load.h"
#include "routing/placement.h"
#include "routing/placement_engine.h"

namespace ibfabric::routing {

struct JobTraffic {
  std::string id;
  std::vector<std::string> hosts;  ///< in rank order
  CommPattern pattern = CommPattern::kRingAllreduce;
};

/// One directed link a job uses.
struct JobLinkUse {
  DirectedLinkId link = 0;
  std::uint32_t flows = 0;  ///< the job's flows that cross it
  double weight = 0.0;      ///< their weight (see above)
  double share = 0.0;       ///< of all the jobs' weight on the link, (0, 1]
};

struct JobRouting {
  std::vector<JobLinkUse> links;          ///< by link id
  std::uint64_t flows = 0;                ///< flows of the pattern (routed or not)
  std::uint64_t unrouted = 0;             ///< of them, without a route (no cable, no entry, loop)
  std::vector<std::string> unknownHosts;  ///< hosts the topology does not have (skipped)
};

/// One job on one directed link.
struct LinkJobUse {
  std::uint32_t job = 0;  ///< index into JobAttribution::jobs()
  std::uint32_t flows = 0;
  double weight = 0.0;
  double share = 0.0;
};

class JobAttribution {
 public:
  JobAttribution() = default;
  /// Walks every job's flows on `index`'s tables.
  static JobAttribution compute(const PlacementIndex& index, const std::vector<JobTraffic>& jobs);

  /// Per job, in the order given to compute().
  const std::vector<JobRouting>& jobs() const { return jobs_; }
  /// The jobs on directed link `d`, highest share first (empty when none).
  std::span<const LinkJobUse> jobsOn(DirectedLinkId d) const;
  /// Directed links used by at least one job.
  std::size_t linksUsed() const { return linkIds_.size(); }

 private:
  std::vector<JobRouting> jobs_;
  std::vector<DirectedLinkId> linkIds_;  ///< sorted: links used
  std::vector<std::uint32_t> offsets_;   ///< per linkIds_ entry (+1): first index in entries_
  std::vector<LinkJobUse> entries_;
};

/// `use`'s link as the LinkLoadModel (of the index's topology) has it now.
struct JobLinkNow {
  JobLinkUse use;
  DirectedLoad load;
};
/// The `n` links of `job` with the highest utilization now (ties: the higher congestion, then the
/// lower link id), highest first.
std::vector<JobLinkNow> hottestLinks(const JobRouting& job, const LinkLoadModel& load,
                                     std::size_t n);

}  // namespace ibfabric::routing
