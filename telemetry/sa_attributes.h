// Subnet administration (SA, class 0x03, version 2) for event subscriptions: the InformInfo a
// client sets to subscribe to the SM's traps (IBA 15.2.5.12), the Notice an SA Report carries
// (IBA 13.4.8.2) and the ReportResponse that acknowledges it. This is how UFM, OpenSM's own
// clients and every other SA consumer learn of a port going down without polling: switches send
// trap 128 (PortStateChange) to the SM, the SM forwards it to every subscriber as a Report.
//
// Field tables, no byte offsets at call sites (the Notice through libibmad's IB_NOTICE_* table).
// Pure functions on MadBuffer values; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "telemetry/mad_packet.h"

namespace ibfabric::mad {

/// The traps a fabric manager subscribes to.
enum class Trap : std::uint16_t {
  kGidInService = 64,      ///< a port became usable (the SM brought it Active)
  kGidOutOfService = 65,   ///< a port left the subnet
  kPortStateChange = 128,  ///< a switch port changed state (a cable went or came)
  kLocalChanges = 144,     ///< a port's capabilities or node description changed
};
/// "64 (GidInService)", ... or the number.
std::string toString(Trap trap);

/// QP1 of the SM's port, the GSI Q_Key, the SA class.
MadAddress saAddress(Lid smLid);

/// What a subscription asks for. Defaults: every issuer (LID range 0xFFFF), generic traps of
/// any type and producer.
struct InformInfo {
  std::array<std::uint8_t, 16> gid{};  ///< zero: by LID range
  std::uint16_t lidRangeBegin = 0xFFFF;
  std::uint16_t lidRangeEnd = 0;
  bool isGeneric = true;
  bool subscribe = true;
  std::uint16_t type = 0xFFFF;        ///< 0xFFFF: every type
  std::uint16_t trapNumber = 0xFFFF;  ///< 0xFFFF: every trap
  std::uint32_t qpn = 1;              ///< where Reports go (the SM takes the requester's QP)
  std::uint8_t respTimeValue = 19;    ///< 4.096 µs * 2^19 ≈ 2.1 s to answer a Report
  std::uint32_t producerType = 0xFFFFFF;
  auto operator<=>(const InformInfo&) const = default;
};

/// SubnAdmSet(InformInfo), transaction id left for the engine or caller to set.
MadBuffer buildInformInfoSet(const InformInfo& info);
/// The InformInfo of a SubnAdmSet or of its GetResponse.
InformInfo decodeInformInfo(const MadBuffer& mad);

/// The Notice of a Report (or a Trap), the fields a fabric manager acts on.
struct Notice {
  bool isGeneric = true;
  std::uint8_t type = 0;           ///< 0 fatal, 1 urgent, 2 security, 3 SM, 4 informational
  std::uint32_t producerType = 0;  ///< 1 CA, 2 switch, 3 router, 4 subnet management
  std::uint16_t trapNumber = 0;
  Lid issuerLid;
  std::array<std::uint8_t, 16> issuerGid{};
  /// Trap 128: the switch's LID; 144: the port's LID.
  Lid dataLid;
  /// Traps 64 and 65: the port's GID (its low 8 bytes are the port GUID).
  std::array<std::uint8_t, 16> dataGid{};
  std::uint32_t capabilityMask = 0;  ///< trap 144
  /// The port GUID in dataGid (traps 64/65) or issuerGid (others).
  Guid portGuid() const;
};

/// True for a SubnAdmReport (an SA Report, not a response).
bool isReport(const MadBuffer& mad);
/// The Notice a Report carries.
Notice decodeReportNotice(const MadBuffer& report);
/// The ReportResponse that acknowledges `report` (same transaction id and Notice, status 0).
MadBuffer buildReportResponse(const MadBuffer& report);
/// The SA status of a response in words ("" for success), e.g. "req_invalid (0x0c00)".
std::string saStatusText(std::uint16_t status);

}  // namespace ibfabric::mad
