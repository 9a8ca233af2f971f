// HaStatus and SubnetIdentity: who sweeps among the daemons on one subnet (role_election.h) and
// which subnet this is, as ServiceState carries them (GET /api/v1/health "role", "ha",
// "subnet"; /metrics ibfabric_ha_* and ibfabric_subnet_info). Plain value types.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/service/role_election.h"

namespace ibfabric::api {

struct HaStatus {
  HaMode mode = HaMode::kAlways;
  HaRole role = HaRole::kActive;
  std::string reason = "ha.mode always";
  /// When the role was last decided differently (or the service started).
  std::optional<std::chrono::system_clock::time_point> since;
  std::uint64_t roleChanges = 0;  ///< Role transitions after the first decision.
  bool decided = false;           ///< False until the first decision (the start-up role holds).
  /// Our port and node: the port at our LID in the topology (nullopt before the first crawl).
  std::optional<Guid> localPortGuid;
  std::optional<Guid> localNodeGuid;
  std::vector<PeerView> peers;  ///< lowest_guid: the peers as last polled.
};

/// Which subnet this daemon sees: the GID prefix of the local port (PortInfo), the master SM's
/// port GUID (the port at the SM LID in the topology) and the operator's name (`subnet_name`).
struct SubnetIdentity {
  std::string name;
  std::optional<std::uint64_t> gidPrefix;
  std::optional<Guid> smPortGuid;
  std::optional<Guid> smNodeGuid;
};

/// "0xfe80000000000000".
std::string formatGidPrefix(std::uint64_t prefix);

}  // namespace ibfabric::api
