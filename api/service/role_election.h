// Role election: which of several ibfabricd on one subnet sweeps (active) and which only keep a
// warm snapshot (standby). A pure decision over what the daemon knows; no I/O, no clock.
//
//   always       no HA: always active (the default; a single daemon).
//   follow_sm    active iff this daemon's HCA port is beside the master SM: the SM LID our
//                PortInfo names is our own LID, or the master SM's port belongs to our node;
//                with the OpenSM event plugin connected (its SM runs on our host), the plugin's
//                SM state decides ("master" is active). The subnet's own SM election is the
//                only election: when the SM fails over, the role follows it.
//   lowest_guid  active iff our port GUID is the lowest among the live instances: ourselves and
//                the peers (config ha.peers) that answered GET /api/v1/health within the
//                timeout with their port GUID. A peer that reports our own GUID is ourselves
//                (the same peer list may be deployed on every instance) and is ignored.
// Until what a mode needs is known (the local port, our GUID), the decision is standby: two
// daemons never both sweep because one of them did not know enough yet.
//
// Plain functions and value types; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "discovery/types.h"

namespace ibfabric::api {

enum class HaMode { kAlways, kFollowSm, kLowestGuid };
enum class HaRole { kActive, kStandby };

/// "always", "follow_sm", "lowest_guid"; nullopt for anything else.
std::optional<HaMode> parseHaMode(std::string_view text);
std::string_view toString(HaMode mode);
/// "active", "standby".
std::string_view toString(HaRole role);
std::optional<HaRole> parseHaRole(std::string_view text);

/// One peer instance as last polled (GET /api/v1/health).
struct PeerView {
  std::string url;
  bool live = false;             ///< Answered within the timeout.
  std::optional<Guid> portGuid;  ///< Its HCA port, as it reports it (unknown yet: nullopt).
  std::optional<HaRole> role;    ///< As it reports it.
  std::string error;             ///< Why it is not live (empty when live).
  bool operator==(const PeerView&) const = default;
};

/// What a decision reads.
struct RoleInputs {
  HaMode mode = HaMode::kAlways;
  /// The local port as last read (0: not known).
  std::uint16_t localLid = 0;
  std::uint16_t smLid = 0;
  std::optional<Guid> localNodeGuid;
  std::optional<Guid> localPortGuid;
  /// The node of the port at the SM LID, from the topology (nullopt: not in it yet).
  std::optional<Guid> smNodeGuid;
  /// The OpenSM plugin's SM state while the plugin is connected ("master", "standby", ...);
  /// nullopt without a connected plugin.
  std::optional<std::string> osmSmState;
  std::vector<PeerView> peers;
};

struct RoleDecision {
  HaRole role = HaRole::kActive;
  std::string reason;
  bool operator==(const RoleDecision&) const = default;
};

RoleDecision decideRole(const RoleInputs& in);

}  // namespace ibfabric::api
