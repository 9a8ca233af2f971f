// MadPacket: the 256-byte management datagram, its destination address and its common header.
//
// Header fields are read and written through libibmad's field tables (IB_MAD_*_F); callers never
// see byte offsets. All types here are plain values; functions are pure and thread-safe.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>

#include "discovery/types.h"

namespace ibfabric::mad {

inline constexpr std::size_t kMadSize = 256;
using MadBuffer = std::array<std::uint8_t, kMadSize>;

/// Management classes the engine speaks (IBA 13.4.4).
enum class MgmtClass : std::uint8_t {
  kSubnLid = 0x01,       ///< LID-routed subnet management (SMP), QP0.
  kSubnAdm = 0x03,       ///< Subnet administration (SA, class version 2), QP1: subscriptions.
  kPerfMgt = 0x04,       ///< Performance management (PMA), QP1.
  kSubnDirected = 0x81,  ///< Directed-route subnet management (DR SMP), QP0.
};

/// IBA method codes used here.
enum class MadMethod : std::uint8_t {
  kGet = 0x01,
  kSet = 0x02,
  kReport = 0x06,  ///< SA: an event the subscriber asked for (SubnAdmReport)
  kGetResponse = 0x81,
  kReportResponse = 0x86,
};

/// Where a MAD goes: destination LID, QP, Q_Key, the class (selects the umad agent) and SL.
struct MadAddress {
  Lid lid;
  std::uint32_t qp = 0;
  std::uint32_t qkey = 0;
  MgmtClass mgmtClass = MgmtClass::kSubnLid;
  std::uint8_t sl = 0;
  auto operator<=>(const MadAddress&) const = default;
};

/// QP0, Q_Key 0, LID-routed SMP class.
MadAddress smpAddress(Lid lid);
/// QP1 with the well-known GSI Q_Key, PerfMgt class.
MadAddress pmaAddress(Lid lid);
/// A directed-route SMP: QP0 to the permissive LID 0xFFFF (the route is in the MAD itself, as
/// libibmad addresses DR SMPs), DR SMP class. The engine's per-target window counts every DR
/// request against that one LID.
MadAddress directedRouteAddress();
inline constexpr Lid kPermissiveLid{0xFFFF};

/// The common MAD header (IBA 13.4.3), host byte order.
struct MadHeader {
  std::uint8_t baseVersion = 1;
  std::uint8_t mgmtClass = 0;
  std::uint8_t classVersion = 1;
  std::uint8_t method = 0;
  std::uint16_t status = 0;
  std::uint64_t transactionId = 0;
  std::uint16_t attributeId = 0;
  std::uint32_t attributeModifier = 0;
  auto operator<=>(const MadHeader&) const = default;
};

MadHeader decodeHeader(const MadBuffer& mad);
/// Writes the header fields; the rest of the buffer is untouched.
void encodeHeader(MadBuffer& mad, const MadHeader& header);

/// The full 64-bit transaction id of a MAD.
std::uint64_t transactionId(const MadBuffer& mad);
void setTransactionId(MadBuffer& mad, std::uint64_t tid);
/// The part of the TID we own: umad2sim (and the kernel) put the agent id in bits 32..47 of
/// replies, so requests and replies are matched on the low 32 bits only.
inline std::uint32_t lowTransactionId(std::uint64_t tid) {
  return static_cast<std::uint32_t>(tid & 0xffffffffu);
}

/// True if the method has the response bit (0x80) set.
bool isResponse(const MadBuffer& mad);
/// The MAD status; 0 means success. For a directed-route SMP the direction bit (the top bit of
/// the status word, set in every reply) is not part of it: 15 bits.
std::uint16_t madStatus(const MadBuffer& mad);

/// Builds a GET-style request header in a zeroed buffer (M_Key 0 for SMPs).
MadBuffer makeRequest(MgmtClass mgmtClass, MadMethod method, std::uint16_t attributeId,
                      std::uint32_t attributeModifier);

/// Byte offset of the attribute data (SMP and PMA both use 64: IB_SMP_DATA_OFFS/IB_PC_DATA_OFFS).
inline constexpr std::size_t kAttributeDataOffset = 64;

}  // namespace ibfabric::mad
