// The placement request checked (request.h), and the CommPattern names of placement.h.
#include "routing/placement/request.h"

namespace ibfabric::routing {

std::string_view toString(CommPattern p) {
  switch (p) {
    case CommPattern::kNone:
      return "none";
    case CommPattern::kRingAllreduce:
      return "ring_allreduce";
    case CommPattern::kAllToAll:
      return "alltoall";
  }
  return "none";
}

std::optional<CommPattern> parseCommPattern(std::string_view s) {
  if (s == "none") return CommPattern::kNone;
  if (s == "ring_allreduce" || s == "ring") return CommPattern::kRingAllreduce;
  if (s == "alltoall" || s == "all_to_all") return CommPattern::kAllToAll;
  return std::nullopt;
}

namespace placement {

std::size_t hostsWanted(const PlacementRequest& request) {
  using Kind = PlacementError::Kind;
  if (request.hosts < 0 || request.gpus < 0 || request.gpusPerHost < 0) {
    throw PlacementError(Kind::kInvalidRequest, "hosts, gpus and gpus_per_host must be >= 0");
  }
  int wanted = request.hosts;
  if (wanted == 0) {
    if (request.gpus == 0) {
      throw PlacementError(Kind::kInvalidRequest, "ask for hosts > 0 or gpus > 0");
    }
    if (request.gpusPerHost == 0) {
      throw PlacementError(Kind::kInvalidRequest, "gpus needs gpus_per_host > 0");
    }
    wanted = (request.gpus + request.gpusPerHost - 1) / request.gpusPerHost;
  }
  if (request.alternatives < 1 || request.alternatives > 16) {
    throw PlacementError(Kind::kInvalidRequest, "alternatives must be in 1..16");
  }
  return static_cast<std::size_t>(wanted);
}

}  // namespace placement
}  // namespace ibfabric::routing
