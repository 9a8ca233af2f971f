// Jobs hit by a drain: for the what-if of a maintenance (POST /api/v1/whatif), which jobs (the
// pool's allocations and the jobs schedulers report, as routing::JobTraffic) a drain hits, how
// much their predicted bottleneck drops, and where the placement engine would put them instead.
//
// A job is hit when one of its hosts loses an HCA (DrainImpact::hosts) or when one of its flows
// (JobAttribution on the current tables) crosses a cable out of service (a directed
// link of it). For each hit job:
//   - bottleneck now: predictedBottleneck() on the current engine; after: the same on the
//     drained model (routing/drained_model.h: the routes that crossed the drained parts
//     rerouted, the drained cables down); drop = now - after (0 when the drain costs it
//     nothing, now when it leaves the job a flow without a usable cable);
//   - alternatives: PlacementEngine::place() on the drained model with the job's size and
//     pattern, excluding the hosts that lose an HCA in the drain and the other jobs' hosts (they
//     are taken); the engine's best host sets first, each with its predicted bottleneck there.
//     The job's own hosts that the drain spares may be part of them (the best answer may be to
//     stay). Placements are the costly part (milliseconds each at 10,240 HCAs): at most
//     `maxPlacements` hit jobs get them, the largest drops first; the others say so.
//
// Pure function of its inputs; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "routing/drain_impact.h"
#include "routing/drained_model.h"
#include "routing/job_attribution.h"
#include "routing/predicted_bottleneck.h"

namespace ibfabric::routing {

struct JobDrainOptions {
  int alternatives = 3;            ///< host sets per hit job (PlacementRequest::alternatives)
  std::size_t maxPlacements = 32;  ///< hit jobs given alternatives, largest drop first
};

struct JobHostHit {
  std::string host;
  std::size_t hcasLost = 0;
  bool cutOff = false;
};

struct JobDrainImpact {
  std::uint32_t job = 0;             ///< index into the jobs given
  std::vector<JobHostHit> hostsHit;  ///< its hosts that lose HCAs, in rank order
  /// Directed links out of service that its flows use now (on the current tables).
  std::uint32_t drainedLinksUsed = 0;
  std::optional<double> bottleneckNow;  ///< bytes/s per flow (nullopt: a host unknown)
  std::optional<double> bottleneckAfter;
  bool placed = false;                        ///< alternatives were asked for (see `note`)
  std::vector<PlacementOption> alternatives;  ///< best first
  std::string note;  ///< why no alternatives, or the engine's warnings in one line
  /// now - after (>= 0 unless the reroute happens to relieve it); nullopt without both.
  std::optional<double> drop() const;
  /// drop / now, in [0, 1] when it drops; nullopt without both or with now 0.
  std::optional<double> dropFraction() const;
};

/// `impact` and `drained` are of `now`'s topology and tables with one drain set; `attribution`
/// (of `jobs` on now.index(), may be null: then only lost HCAs count as hits).
std::vector<JobDrainImpact> jobDrainImpact(const PlacementEngine& now, const DrainedModel& drained,
                                           const JobAttribution* attribution,
                                           const std::vector<JobTraffic>& jobs,
                                           const DrainImpact& impact,
                                           const JobDrainOptions& options = {});

}  // namespace ibfabric::routing
