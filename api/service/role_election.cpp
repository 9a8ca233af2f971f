#include "api/service/role_election.h"

namespace ibfabric::api {
namespace {

RoleDecision active(std::string reason) { return {HaRole::kActive, std::move(reason)}; }
RoleDecision standby(std::string reason) { return {HaRole::kStandby, std::move(reason)}; }

RoleDecision followSm(const RoleInputs& in) {
  if (in.osmSmState) {
    if (*in.osmSmState == "master") return active("the OpenSM beside us is master");
    return standby("the OpenSM beside us is " +
                   (in.osmSmState->empty() ? std::string("in an unknown state") : *in.osmSmState));
  }
  if (in.localLid == 0) return standby("the local port has no LID yet");
  if (in.smLid == 0) return standby("no master SM known yet");
  if (in.smLid == in.localLid)
    return active("the master SM (LID " + std::to_string(in.smLid) + ") is on our port");
  if (in.smNodeGuid && in.localNodeGuid && *in.smNodeGuid == *in.localNodeGuid)
    return active("the master SM (LID " + std::to_string(in.smLid) + ") is on our node");
  return standby("the master SM (LID " + std::to_string(in.smLid) + ") is not beside us (LID " +
                 std::to_string(in.localLid) + ")");
}

RoleDecision lowestGuid(const RoleInputs& in) {
  if (!in.localPortGuid) return standby("our port GUID is not known yet");
  const Guid self = *in.localPortGuid;
  for (const PeerView& p : in.peers) {
    if (!p.live || !p.portGuid || *p.portGuid == self) continue;
    if (*p.portGuid < self)
      return standby("live peer " + p.url + " has the lower port GUID " + toString(*p.portGuid));
  }
  return active("our port GUID " + toString(self) + " is the lowest among the live instances");
}

}  // namespace

std::optional<HaMode> parseHaMode(std::string_view text) {
  if (text == "always") return HaMode::kAlways;
  if (text == "follow_sm") return HaMode::kFollowSm;
  if (text == "lowest_guid") return HaMode::kLowestGuid;
  return std::nullopt;
}

std::string_view toString(HaMode mode) {
  switch (mode) {
    case HaMode::kAlways:
      return "always";
    case HaMode::kFollowSm:
      return "follow_sm";
    case HaMode::kLowestGuid:
      return "lowest_guid";
  }
  return "always";
}

std::string_view toString(HaRole role) { return role == HaRole::kActive ? "active" : "standby"; }

std::optional<HaRole> parseHaRole(std::string_view text) {
  if (text == "active") return HaRole::kActive;
  if (text == "standby") return HaRole::kStandby;
  return std::nullopt;
}

RoleDecision decideRole(const RoleInputs& in) {
  switch (in.mode) {
    case HaMode::kAlways:
      return active("ha.mode always");
    case HaMode::kFollowSm:
      return followSm(in);
    case HaMode::kLowestGuid:
      return lowestGuid(in);
  }
  return active("ha.mode always");
}

}  // namespace ibfabric::api
