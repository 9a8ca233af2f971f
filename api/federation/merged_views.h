// The federation's merged JSON views, as pure functions of the members' answers: health (per
// subnet availability and role), the fabric summary (per subnet and totals), the GPU pool's
// usage, and the items of a list tagged with their subnet. Thread-safe (pure).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/federation/subnet_answer.h"

namespace ibfabric::api::federation {

/// {"status": ok|degraded|unavailable, "subnets": [...], "available": n, "total": n}. `members`
/// holds MemberBoard::memberJson of each member (same order as `health`); each subnet entry is
/// that, plus "available", the member's "status", "ready" and "role" (when it reports one), or
/// the error. ok: every subnet answered and is ready; unavailable: none answered.
nlohmann::json mergedHealth(const std::vector<SubnetAnswer>& health,
                            const std::vector<nlohmann::json>& members);

/// {"subnets": [{"subnet", "available", "summary"} | problem], "totals": {...}, "available",
/// "total"}: totals sum the counts of the available subnets' /api/v1/topology summaries
/// (switches, cas, routers, links, hosts, rails, groups, links_below_enabled, missing.*,
/// switches_per_level.*, links_by_state.*), max_level and age_seconds are the largest.
nlohmann::json mergedFabric(const std::vector<SubnetAnswer>& summaries);

/// {"subnets": [{"subnet", "available", "pool": usage} | problem | {"subnet", "pool": null}],
/// "totals": {total_gpus, usable_gpus, used_gpus, free_gpus, preemptions}}. A member without a
/// pool (404) is listed with "pool": null.
nlohmann::json mergedPoolUsage(const std::vector<SubnetAnswer>& usage);

/// `items` (an array of objects) with "subnet": `subnet` added to each.
nlohmann::json tagged(nlohmann::json items, const std::string& subnet);

/// The problems of the unavailable answers (an array, empty when all answered).
nlohmann::json unavailableOf(const std::vector<SubnetAnswer>& answers);

/// The value a federated `/links?sort=` ranks a link by (as the daemon does: the busiest end's
/// utilization or congestion, or the number of health reasons).
double linkSortMetric(const nlohmann::json& link, const std::string& sort);

}  // namespace ibfabric::api::federation
