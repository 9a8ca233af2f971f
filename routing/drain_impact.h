// Drain impact: what taking a set of switches and cables out of service would break, judged on
// the current topology and the SM's current forwarding tables before anything is touched (the
// what-if of a maintenance window). Read-only: it changes nothing in the fabric.
//
//   - HCAs lost, per host and rail: an HCA whose cable is drained, whose leaf is drained, or
//     whose leaf keeps no up-link (it could reach only its own leaf's HCAs); a host that loses
//     every HCA is cut off.
//   - Up-link capacity lost per leaf and per leaf group: the data rate of each leaf's up-links
//     whose cable, or the switch at whose other end, is drained, against what the leaf has.
//   - Destinations to reroute: CA LIDs (of HCAs not lost) for which a switch that stays in
//     service forwards over a drained cable or into a drained switch — the SM must give them new
//     routes; with the number of such (switch, destination) entries. Without tables (none read
//     yet) this part is absent, not guessed.
//
// Pure function of its inputs; thread-safe.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "discovery/topology.h"
#include "routing/forwarding.h"

namespace ibfabric::routing {

struct DrainSet {
  std::set<NodeIndex> switches;
  std::set<std::uint32_t> links;  ///< indices into Topology::links()
};

struct LostHca {
  NodeIndex hca = kNoNode;
  int rail = -1;
  std::string why;  ///< "cable drained", "leaf drained", "leaf keeps no up-link"
};

struct HostDrainImpact {
  std::uint32_t host = 0;  ///< index into Topology::hosts()
  std::vector<LostHca> lost;
  std::size_t hcas = 0;  ///< the host's HCAs
  bool cutOff() const { return !lost.empty() && lost.size() == hcas; }
};

struct UplinkLoss {
  NodeIndex leaf = kNoNode;  ///< kNoNode for a group's total
  int group = -1;
  std::size_t upLinks = 0;
  std::size_t drained = 0;
  double gbps = 0.0;      ///< up-link data rate before
  double gbpsLost = 0.0;  ///< of it, drained
  /// Of the data rate; by count when no rate is known.
  double fractionLost() const {
    if (gbps > 0.0) return gbpsLost / gbps;
    return upLinks > 0 ? double(drained) / double(upLinks) : 0.0;
  }
};

struct DrainImpact {
  std::vector<HostDrainImpact> hosts;  ///< hosts that lose an HCA, by host index
  std::vector<UplinkLoss> leaves;      ///< leaves that lose up-link capacity, by node index
  std::vector<UplinkLoss> groups;      ///< leaf groups that do, by group index
  bool routesKnown = false;            ///< forwarding tables were given
  std::vector<Lid> reroute;            ///< destinations whose routes cross the drained parts
  std::uint64_t rerouteEntries = 0;    ///< (switch, destination) entries that point there
  std::size_t hcasLost() const;
  std::size_t hostsCutOff() const;
};

/// `tables` may be null (no routes read yet).
DrainImpact drainImpact(const Topology& topology, const ForwardingTables* tables,
                        const DrainSet& drain);

/// Per Topology::links() index: out of service with the drain (the cable drained, or a switch at
/// either end drained).
std::vector<char> linksOutOfService(const Topology& topology, const DrainSet& drain);

/// `drain` (indices of `from`) on another snapshot of the same fabric, `to`: switches by GUID,
/// cables by (node GUID, port) of either end. Parts `to` does not have are left out.
DrainSet rebaseDrain(const Topology& from, const DrainSet& drain, const Topology& to);

}  // namespace ibfabric::routing
