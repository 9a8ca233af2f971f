// The small fabrics of the unit tests, written once so that tests share shapes by name:
//
//   generated  a topogen preset and its options (twoLevel, threeLevel, superpod), turned into
//              the snapshot a test needs: as a net file reads (netfileTopology), as a crawl of
//              ibsim reports it (crawledTopology), or with LIDs 1.. in file order for in-memory
//              forwarding tables (routableTopology);
//   fat tree   the hand-written ibsim file of fatTreeText() (sim_fixture.h), parsed;
//   hand-built switchCaPair (one cable, for port-level tests) and hostLeafSpine (three nodes
//              with LIDs, for tests that edit or re-probe ports).
//
// Every call builds a new, independent snapshot. Thread-safe (no shared state).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "discovery/netfile.h"
#include "discovery/topogen.h"
#include "discovery/topology.h"

namespace ibfabric::testing {

// --- Generated fabrics ------------------------------------------------------------------------

/// A topogen preset and its options.
struct FabricShape {
  std::string preset;
  TopoOptions options;
};

/// `leaves` leaves of `hostsPerLeaf` one-HCA hosts (dgx0001.., "dgx0001 mlx5_0"), `spines`
/// spines.
FabricShape twoLevel(int leaves, int spines, int hostsPerLeaf);
/// `pods` pods of `leavesPerPod` leaves and `spinesPerPod` spines under `cores` core switches.
FabricShape threeLevel(int pods, int leavesPerPod, int spinesPerPod, int cores, int hostsPerLeaf);
/// `sus` rail-optimized scalable units of 32 hosts with 8 HCAs each.
FabricShape superpod(int sus);

/// generateTopology(shape): the net file and what the generator says about it.
GeneratedTopology generate(const FabricShape& shape);
/// The generated net file with LIDs 1.. in file order (routing::assignSequentialLids).
NetFabric routableNet(const FabricShape& shape);

/// topologyFromNetFabric(generated net file, source).
TopologyPtr netfileTopology(const FabricShape& shape, std::string source = "netfile");
/// topologyAsCrawled(generated net file): descriptions as ibsim reports them.
TopologyPtr crawledTopology(const FabricShape& shape);
/// The snapshot of routableNet(shape), source "memory": what routing::computeShortestPathTables
/// and the fake counter source's forwarding tables are computed on.
TopologyPtr routableTopology(const FabricShape& shape);

// --- Hand-written fat trees (fatTreeText) -----------------------------------------------------

/// topologyFromNetFabric(parsed fatTreeText(prefix, spines, leaves, hostsPerLeaf), source).
TopologyPtr fatTreeTopology(std::string_view prefix, int spines, int leaves, int hostsPerLeaf,
                            std::string source = "netfile");
/// topologyAsCrawled(parsed fatTreeText(prefix, spines, leaves, hostsPerLeaf)).
TopologyPtr crawledFatTreeTopology(std::string_view prefix, int spines, int leaves,
                                   int hostsPerLeaf);

// --- Hand-built fabrics -----------------------------------------------------------------------

inline constexpr Guid kPairSwitch{0x200000};
inline constexpr Guid kPairCa{0x100000};

/// Switch "sw" (kPairSwitch, 2 ports) and a CA (kPairCa, 1 port, `caDescription`); port 1 of
/// both is `port` (its number set to 1), cabled to each other unless `linked` is false.
TopologyPtr switchCaPair(Port port, bool linked = true, std::string caDescription = "h mlx5_0");

inline constexpr Guid kHlsCa{0x100001};
inline constexpr Guid kHlsLeaf{0x200001};
inline constexpr Guid kHlsSpine{0x200002};
inline constexpr Lid kHlsLeafLid{1};
inline constexpr Lid kHlsSpineLid{2};
inline constexpr Lid kHlsCaLid{3};

struct HostLeafSpineOptions {
  /// A third leaf port, Down/Polling and not cabled (the leaf then has 3 ports, else 2).
  bool spareLeafPort = false;
  /// Node-name-map text (NodeNameMap::parse) applied to the snapshot; none when empty.
  std::string nodeNameMap;
  /// What a crawl finds while the host's only cable is out: no host, leaf port 1 Down/Polling.
  bool hostUnplugged = false;
};

/// host "host1 mlx5_0" [1] -- [1] "leaf" [2] -- [1] "spine": every port Active/LinkUp with
/// the switch's or the HCA port's GUID and LID (leaf 1, spine 2, host 3); the two cables run
/// 4x HDR.
TopologyPtr hostLeafSpine(const HostLeafSpineOptions& options = {});

}  // namespace ibfabric::testing
