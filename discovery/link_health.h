// Link health: what is wrong with the links of one Topology snapshot, judged from that snapshot
// alone (no plan, no history).
//
// Findings, one per link (or per port for a port that has no remote):
//   - below-enabled    the active width or speed is below the best both ends *enable* (the
//                      "Could be ..." of iblinkinfo, judged on enabled rather than supported
//                      capabilities: simulators and some firmware report supported widths the
//                      hardware cannot run);
//   - enable-mismatch  the link runs at the best common enabled rate, but one end enables a
//                      wider width or a faster speed than the other, so the link is held back
//                      by one end's configuration (a 1x-only port facing a 4x port). Mixed
//                      generations (an EDR HCA on an HDR switch) show up here too: callers that
//                      know the planned rate (topo compare) use that instead;
//   - ends-disagree    the two ends report different active rates or different port states;
//   - not-active       a port is physically up (LinkUp) but its logical state is Init or Armed
//                      (the subnet manager has not finished, or cannot bring it up);
//   - below-peers      the link runs slower than the rate most links of its tier run at
//                      (CA-leaf, leaf-spine, spine-core, ...): a cable that trained at 1x and
//                      whose ports were then limited to 1x looks healthy to the checks above but
//                      not next to its 2,047 siblings at 4x. Judged only where the tier has at
//                      least kPeerTierMinLinks links and one rate is held by more than half.
//
// Pure functions over an immutable snapshot; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "discovery/link_rate.h"
#include "discovery/topology.h"

namespace ibfabric {

enum class LinkHealthKind : std::uint8_t {
  kBelowEnabled,
  kEnableMismatch,
  kEndsDisagree,
  kNotActive,
  kBelowPeers,
};
/// "below-enabled", "enable-mismatch", "ends-disagree", "not-active", "below-peers".
std::string_view toString(LinkHealthKind k);

struct LinkHealthIssue {
  LinkHealthKind kind = LinkHealthKind::kBelowEnabled;
  /// The end the finding is about: the link's `a` end for link findings, the port itself for a
  /// not-active port without a remote.
  PortRef port;
  /// The other end of the cable, when there is one.
  std::optional<PortRef> remote;
  /// Index into Topology::links(), when the finding is about a link.
  std::optional<std::uint32_t> link;
  /// The rate the link runs at (as `port` reports it) and the best rate both ends enable.
  std::optional<LinkRate> active;
  std::optional<LinkRate> enabled;
  /// One line for people, e.g. `"leaf-01"[3] <-> "spine-01"[1]: active 1x HDR, both ends enable
  /// 4x HDR`.
  std::string text;
};

/// Smallest tier (links between the same two levels) judged by the below-peers check.
inline constexpr std::size_t kPeerTierMinLinks = 4;

/// All findings of a snapshot, in link order (then unconnected ports in node/port order).
std::vector<LinkHealthIssue> checkLinkHealth(const Topology& topology);

/// How many findings of each kind (for summaries and metrics).
struct LinkHealthCounts {
  std::size_t belowEnabled = 0;
  std::size_t enableMismatch = 0;
  std::size_t endsDisagree = 0;
  std::size_t notActive = 0;
  std::size_t belowPeers = 0;
  std::size_t total() const {
    return belowEnabled + enableMismatch + endsDisagree + notActive + belowPeers;
  }
};
LinkHealthCounts countLinkHealth(const std::vector<LinkHealthIssue>& issues);

/// `"<description>"[<port>]` (the node GUID when the description is empty): how findings name a
/// port. Also used by TopologyDelta and topology comparisons.
std::string portLabel(const Topology& topology, PortRef ref);
/// "4x HDR" (iblinkinfo's spelling, with a space).
std::string rateLabel(const LinkRate& rate);

}  // namespace ibfabric
