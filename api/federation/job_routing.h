// Where a job goes: jobs never span subnets, so a placement or a pool allocation is answered by
// one subnet's daemon. Pure functions of the members' answers; thread-safe.
//
// Placement: every available member was asked the same POST /api/v1/placement; those that
// answered 200 can take the job. Policy best: the one whose best option has the highest
// objective (docs/placement.md: higher is better); first: the first in the configuration's
// order. The answer is that member's, with "subnet" (also on each option) and "subnets": what
// every subnet said (ok with its objective, unsatisfiable or invalid with the message,
// unavailable with the error and age).
//
// Pool allocation: candidates are the subnets whose pool has at least the requested free GPUs
// (best: most free first; first: configuration order); the caller tries them in that order
// until one allocates.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "api/federation/federation_config.h"
#include "api/federation/subnet_answer.h"

namespace ibfabric::api::federation {

struct PlacementRouting {
  int status = 200;     ///< 200, or 400/422/503 when no subnet takes the job
  nlohmann::json body;  ///< the answer to send
  std::optional<std::size_t> chosen;
};

/// The answer to a federated placement from the members' answers (same order as the members).
PlacementRouting routePlacement(const std::vector<SubnetAnswer>& answers, RoutingPolicy policy);

/// The order in which to try the subnets for a pool allocation of `gpus` GPUs, from their
/// GET /api/v1/pool answers (unavailable ones and those without a pool are left out; so are
/// those with fewer free GPUs than asked).
std::vector<std::size_t> allocationCandidates(const std::vector<SubnetAnswer>& usage, double gpus,
                                              RoutingPolicy policy);

}  // namespace ibfabric::api::federation
