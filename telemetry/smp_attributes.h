// SMP attributes (LID-routed subnet management class 0x01): request builders and decoders for
// NodeInfo, PortInfo, SwitchInfo and LinearForwardingTable blocks; and the directed-route form
// (class 0x81) of any of these requests, for nodes LID routing cannot reach.
//
// Fields go through libibmad's IB_NODE_*, IB_PORT_*, IB_SW_*, IB_LINEAR_FORW_TBL_F and IB_DRSMP_*
// tables (the attribute data is at byte 64 in both SMP forms). Pure functions on values;
// thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "telemetry/mad_packet.h"

namespace ibfabric::mad {

enum class SmpAttribute : std::uint16_t {
  kNodeInfo = 0x0011,
  kSwitchInfo = 0x0012,
  kPortInfo = 0x0015,
  kLinearForwardingTable = 0x0019,
};

/// NodeInfo: who answers (identity, type, port count) and by which of its ports the SMP entered.
struct NodeInfo {
  std::uint8_t baseVersion = 0;
  std::uint8_t classVersion = 0;
  std::uint8_t nodeType = 0;  ///< 1 CA, 2 switch, 3 router.
  std::uint8_t numPorts = 0;
  std::uint64_t systemImageGuid = 0;
  std::uint64_t nodeGuid = 0;
  std::uint64_t portGuid = 0;
  std::uint16_t partitionCap = 0;
  std::uint16_t deviceId = 0;
  std::uint32_t revision = 0;
  std::uint8_t localPortNum = 0;  ///< The port the request entered by.
  std::uint32_t vendorId = 0;
  auto operator<=>(const NodeInfo&) const = default;
};

/// PortInfo, the fields the fabric manager reads.
struct PortInfo {
  std::uint16_t lid = 0;
  std::uint16_t masterSmLid = 0;
  std::uint32_t capabilityMask = 0;
  std::uint8_t localPortNum = 0;
  std::uint8_t linkWidthEnabled = 0;
  std::uint8_t linkWidthSupported = 0;
  std::uint8_t linkWidthActive = 0;
  std::uint8_t linkSpeedSupported = 0;
  std::uint8_t portState = 0;      ///< 1 Down, 2 Init, 3 Armed, 4 Active.
  std::uint8_t portPhysState = 0;  ///< 5 LinkUp, 2 Polling, 3 Disabled, ...
  std::uint8_t lmc = 0;
  std::uint8_t linkSpeedActive = 0;
  std::uint8_t linkSpeedEnabled = 0;
  std::uint8_t neighborMtu = 0;
  std::uint8_t vlCap = 0;
  std::uint8_t mtuCap = 0;
  std::uint8_t operVls = 0;
  std::uint16_t capabilityMask2 = 0;
  std::uint8_t linkSpeedExtActive = 0;
  std::uint8_t linkSpeedExtSupported = 0;
  std::uint8_t linkSpeedExtEnabled = 0;
  /// The subnet's GID prefix (IBA 14.2.5.6 PortInfo GidPrefix: bits 0..63 of the attribute,
  /// libibmad IB_PORT_GID_PREFIX_F); the default one is 0xfe80000000000000.
  std::uint64_t gidPrefix = 0;
  auto operator<=>(const PortInfo&) const = default;
};

struct SwitchInfo {
  std::uint16_t linearFdbCap = 0;
  std::uint16_t randomFdbCap = 0;
  std::uint16_t multicastFdbCap = 0;
  std::uint16_t linearFdbTop = 0;
  std::uint8_t defaultPort = 0;
  std::uint8_t lifeTimeValue = 0;
  std::uint8_t portStateChange = 0;
  std::uint16_t lidsPerPort = 0;
  std::uint16_t partitionEnforcementCap = 0;
  std::uint8_t enhancedPort0 = 0;
  std::uint16_t multicastFdbTop = 0;
  auto operator<=>(const SwitchInfo&) const = default;
};

/// One LinearForwardingTable block: egress ports for LIDs block*64 .. block*64+63; 0xFF = none.
struct LinearForwardingBlock {
  static constexpr std::uint16_t kLidsPerBlock = 64;
  static constexpr std::uint8_t kNoPort = 0xFF;
  std::uint32_t block = 0;
  std::array<std::uint8_t, kLidsPerBlock> ports{};
  auto operator<=>(const LinearForwardingBlock&) const = default;
};

/// A directed route from our own port (IBA 14.2.2, libibmad's ib_dr_path_t p[1..cnt]): the port
/// each hop leaves by, the first being our CA port, then the egress port of every switch on the
/// way. Empty: our own node.
struct DirectedPath {
  static constexpr std::size_t kMaxHops = 63;
  std::vector<std::uint8_t> ports;
  /// ibnetdiscover's notation: "0,1,13,5".
  std::string toString() const;
  auto operator<=>(const DirectedPath&) const = default;
};

MadBuffer buildNodeInfoGet();
/// GET PortInfo of `port` (0 = the switch management port / the queried port on an HCA).
MadBuffer buildPortInfoGet(std::uint8_t port);
MadBuffer buildSwitchInfoGet();
/// GET one LFT block; blocks run 0 .. SwitchInfo::linearFdbTop / 64.
MadBuffer buildLinearForwardingTableGet(std::uint32_t block);

/// The directed-route form of a LID-routed SMP request built above: class 0x81, hop count =
/// path length, hop pointer 0, direction 0, DrSLID = DrDLID = 0xFFFF (permissive), the initial
/// path; header and attribute data otherwise unchanged. Send it to directedRouteAddress().
/// Throws std::invalid_argument for a path longer than DirectedPath::kMaxHops or a request that
/// is not an SMP.
MadBuffer toDirectedRoute(const MadBuffer& lidRoutedSmp, const DirectedPath& path);
/// True for a directed-route SMP.
bool isDirectedRoute(const MadBuffer& mad);
/// The initial path and hop count of a directed-route SMP.
DirectedPath directedPathOf(const MadBuffer& drSmp);

NodeInfo decodeNodeInfo(const MadBuffer& mad);
PortInfo decodePortInfo(const MadBuffer& mad);
SwitchInfo decodeSwitchInfo(const MadBuffer& mad);
/// The block number comes from the reply's attribute modifier.
LinearForwardingBlock decodeLinearForwardingBlock(const MadBuffer& mad);

void encodeNodeInfo(MadBuffer& mad, const NodeInfo& v);
void encodePortInfo(MadBuffer& mad, const PortInfo& v);
void encodeSwitchInfo(MadBuffer& mad, const SwitchInfo& v);
/// Writes the 64 entries (not the attribute modifier).
void encodeLinearForwardingBlock(MadBuffer& mad, const LinearForwardingBlock& v);

}  // namespace ibfabric::mad
