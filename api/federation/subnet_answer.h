// SubnetAnswer: one member's part of a federated answer — its subnet name and either its JSON
// (or text) answer or why it is unavailable. The merge functions (merged_views.h,
// merged_events.h, merged_exports.h, job_routing.h) take these and know nothing of HTTP.
// Plain value type.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ibfabric::api::federation {

struct SubnetAnswer {
  std::string subnet;
  bool available = false;
  int status = 0;          ///< the member's HTTP status (0: no answer)
  nlohmann::json body;     ///< its JSON answer (null for text answers)
  std::string text;        ///< its text answer (exports)
  nlohmann::json problem;  ///< when unavailable: {"subnet", "error", "age_seconds", ...}
};

}  // namespace ibfabric::api::federation
