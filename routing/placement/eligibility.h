// Eligibility: which hosts a request may get, and the warnings that say why others were left out.
//
// A host is eligible when it is among the request's candidates (all hosts when none are given),
// not excluded, and every HCA of it is cabled with a link that is neither down nor faulty (nor
// degraded, unless the request allows it). Warnings collects the one-line warnings of the answer,
// capped at PlacementLimits::maxWarnings lines plus a count of the rest. Both are owned by the
// request being answered; not thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "routing/link_load.h"
#include "routing/placement.h"
#include "routing/placement_engine.h"

namespace ibfabric::routing::placement {

class Warnings {
 public:
  explicit Warnings(std::size_t maxListed) : max_(maxListed) {}
  /// Lists `warning`, or only counts it once maxListed are listed.
  void add(std::string warning);
  /// The warnings listed, then "... and N more" for the ones only counted.
  std::vector<std::string> take();

 private:
  std::size_t max_;
  std::vector<std::string> listed_;
  std::size_t suppressed_ = 0;
};

struct EligibleHosts {
  std::vector<char> eligible;  ///< per host of the index
  std::size_t count = 0;       ///< hosts marked eligible
};

/// The eligible hosts of `request` (which wants `wanted` hosts); warns about unknown candidate or
/// exclude names and about every host left out. Throws PlacementError(kUnsatisfiable) with the
/// numbers when fewer than `wanted` are eligible.
EligibleHosts eligibleHosts(const PlacementIndex& ix, const LinkLoadModel& load,
                            const PlacementRequest& request, std::size_t wanted,
                            Warnings& warnings);

}  // namespace ibfabric::routing::placement
