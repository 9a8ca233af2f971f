// The scores of the kube-scheduler extender's prioritize verb (extender.h; docs/scheduler.md
// "prioritize"), as a pure function of the fabric, the job's peers and the candidates.
//
// For a candidate host h and the job's peers P (hosts already running its pods):
//   h down or faulty                        0
//   no peers                                round(10 * cool(h))
//   h in P (another pod on a peer's node)   10
//   h in a peer's leaf set (its SU / leaf)  round(6 + 3 * e(h))      6..9
//   elsewhere                               round(5 * e(h))          0..5
// then halved when h is degraded. e(h) in [0, 1] is what the placement engine predicts for the
// job with h added: the objective of its answer for P + {h} (hosts = |P| + 1, candidates =
// P + {h}) divided by the best such objective among the candidates, so the score is monotone in
// the prediction within each of the two bands. Without an engine, or when it is not ready,
// e(h) = 0.7 * (mean over peers of 1 for the same leaf set, 0.5 the same spine group, else 0)
// + 0.3 * cool(h). cool(h) = 1 - the mean up-link utilization of h's leaves (1 when unknown).
// When there are more than kMaxEngineCalls candidates, the engine is asked once per leaf set
// (for its first candidate) and the answer stands for the set's other candidates.
//
// Thread-safe: a pure function (the callbacks must be thread-safe).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "routing/placement.h"
#include "scheduler_hooks/export_layout.h"

namespace ibfabric::scheduler_hooks {

inline constexpr std::size_t kMaxEngineCalls = 256;

struct ScoreInput {
  const ExportLayout* layout = nullptr;
  const HostHealthMap* health = nullptr;
  std::set<std::string> peers;  ///< fabric hosts
  routing::CommPattern pattern = routing::CommPattern::kRingAllreduce;
  bool allowDegraded = false;
  /// Up-link utilization of a leaf in [0, 1]; optional.
  std::function<std::optional<double>(NodeIndex leaf)> uplinkUtilization;
  /// The placement engine; optional.
  std::optional<routing::Placer> placer;
};

/// Scores 0..10 of `hosts` (fabric host names).
std::map<std::string, std::int64_t> extenderScores(const ScoreInput& in,
                                                   const std::vector<std::string>& hosts);

/// e(h) of every candidate that is not a peer, from the engine; empty when there is no engine
/// or it cannot answer (not ready).
std::map<std::string, double> enginePredictions(const ScoreInput& in,
                                                const std::vector<std::string>& hosts);

}  // namespace ibfabric::scheduler_hooks
