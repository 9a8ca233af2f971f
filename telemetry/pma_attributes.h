// PMA attributes (PerfMgt class 0x04): request builders and reply decoders.
//
// Every field is read and written through libibmad's field tables (IB_PC_*, IB_PC_EXT_*,
// IB_CPI_*, IB_PSC_*) on the attribute data at byte 64 of the MAD. Decoders take a complete
// reply MAD (header included) and return plain structs; they do not check the MAD status, see
// madStatus(). Pure functions on values; thread-safe.
#pragma once

#include <array>
#include <cstdint>

#include "telemetry/mad_packet.h"

namespace ibfabric::mad {

/// PMA attribute ids (IBA 16.1.2).
enum class PmaAttribute : std::uint16_t {
  kClassPortInfo = 0x0001,
  kPortSamplesControl = 0x0010,
  kPortCounters = 0x0012,
  kPortCountersExtended = 0x001D,
};

/// PortSelect value that addresses all ports at once (needs CapabilityMask AllPortSelect).
inline constexpr std::uint8_t kAllPortsSelect = 0xFF;

/// PerfMgt ClassPortInfo. Capability bits as host-order bit numbers of CapabilityMask.
struct ClassPortInfo {
  static constexpr std::uint16_t kAllPortSelect = 1u << 8;
  static constexpr std::uint16_t kExtendedWidthCounters = 1u << 9;
  static constexpr std::uint16_t kExtendedNoIetfCounters = 1u << 10;  ///< no uni/multicast ext.
  static constexpr std::uint16_t kPortXmitWait = 1u << 12;
  static constexpr std::uint16_t kQp1Dropped = 1u << 15;
  /// CapabilityMask2 bit 1: PortCountersExtended carries 64-bit error counters.
  static constexpr std::uint32_t kAdditionalExtendedCounters = 1u << 1;

  std::uint8_t baseVersion = 0;
  std::uint8_t classVersion = 0;
  std::uint16_t capabilityMask = 0;
  std::uint32_t capabilityMask2 = 0;  ///< 27 bits.
  std::uint8_t respTimeValue = 0;

  bool allPortSelect() const { return capabilityMask & kAllPortSelect; }
  bool extendedCounters() const {
    return capabilityMask & (kExtendedWidthCounters | kExtendedNoIetfCounters);
  }
  bool extendedUnicastMulticast() const { return capabilityMask & kExtendedWidthCounters; }
  bool portXmitWait() const { return capabilityMask & kPortXmitWait; }
  bool extendedErrorCounters() const { return capabilityMask2 & kAdditionalExtendedCounters; }
  auto operator<=>(const ClassPortInfo&) const = default;
};

/// PortCounters (attribute 0x12): 32-bit data counters, narrow error counters.
struct PortCounters {
  std::uint8_t portSelect = 0;
  std::uint16_t counterSelect = 0;
  std::uint32_t symbolErrorCounter = 0;
  std::uint32_t linkErrorRecoveryCounter = 0;
  std::uint32_t linkDownedCounter = 0;
  std::uint32_t portRcvErrors = 0;
  std::uint32_t portRcvRemotePhysicalErrors = 0;
  std::uint32_t portRcvSwitchRelayErrors = 0;
  std::uint32_t portXmitDiscards = 0;
  std::uint32_t portXmitConstraintErrors = 0;
  std::uint32_t portRcvConstraintErrors = 0;
  std::uint32_t localLinkIntegrityErrors = 0;
  std::uint32_t excessiveBufferOverrunErrors = 0;
  std::uint32_t vl15Dropped = 0;
  std::uint32_t portXmitData = 0;  ///< In 4-byte words.
  std::uint32_t portRcvData = 0;   ///< In 4-byte words.
  std::uint32_t portXmitPkts = 0;
  std::uint32_t portRcvPkts = 0;
  std::uint32_t portXmitWait = 0;
  auto operator<=>(const PortCounters&) const = default;
};

/// PortCountersExtended (attribute 0x1D): 64-bit data counters; the error counters are only
/// meaningful when ClassPortInfo::extendedErrorCounters() (CapabilityMask2 bit 1).
struct PortCountersExtended {
  std::uint8_t portSelect = 0;
  std::uint16_t counterSelect = 0;
  std::uint64_t portXmitData = 0;  ///< In 4-byte words.
  std::uint64_t portRcvData = 0;   ///< In 4-byte words.
  std::uint64_t portXmitPkts = 0;
  std::uint64_t portRcvPkts = 0;
  std::uint64_t portUnicastXmitPkts = 0;
  std::uint64_t portUnicastRcvPkts = 0;
  std::uint64_t portMulticastXmitPkts = 0;
  std::uint64_t portMulticastRcvPkts = 0;
  // 64-bit error counters (CapabilityMask2 bit 1).
  std::uint64_t symbolErrorCounter = 0;
  std::uint64_t linkErrorRecoveryCounter = 0;
  std::uint64_t linkDownedCounter = 0;
  std::uint64_t portRcvErrors = 0;
  std::uint64_t portRcvRemotePhysicalErrors = 0;
  std::uint64_t portRcvSwitchRelayErrors = 0;
  std::uint64_t portXmitDiscards = 0;
  std::uint64_t portXmitConstraintErrors = 0;
  std::uint64_t portRcvConstraintErrors = 0;
  std::uint64_t localLinkIntegrityErrors = 0;
  std::uint64_t excessiveBufferOverrunErrors = 0;
  std::uint64_t vl15Dropped = 0;
  std::uint64_t portXmitWait = 0;
  std::uint64_t qp1Dropped = 0;
  auto operator<=>(const PortCountersExtended&) const = default;
};

/// PortSamplesControl (attribute 0x10), the fields a sampler needs.
struct PortSamplesControl {
  std::uint8_t opCode = 0;
  std::uint8_t portSelect = 0;
  std::uint8_t tick = 0;
  std::uint8_t counterWidth = 0;
  std::uint8_t sampleMechanisms = 0;
  std::uint8_t sampleStatus = 0;
  std::uint64_t optionMask = 0;
  std::uint32_t sampleStart = 0;
  std::uint32_t sampleInterval = 0;
  std::uint16_t tag = 0;
  std::array<std::uint16_t, 15> counterSelect{};
  auto operator<=>(const PortSamplesControl&) const = default;
};

MadBuffer buildClassPortInfoGet();
MadBuffer buildPortCountersGet(std::uint8_t portSelect);
MadBuffer buildPortCountersExtendedGet(std::uint8_t portSelect);
MadBuffer buildPortSamplesControlGet(std::uint8_t portSelect);

ClassPortInfo decodeClassPortInfo(const MadBuffer& mad);
PortCounters decodePortCounters(const MadBuffer& mad);
PortCountersExtended decodePortCountersExtended(const MadBuffer& mad);
PortSamplesControl decodePortSamplesControl(const MadBuffer& mad);

// Encoders: the inverse of the decoders, for GetResponse fakes and SET requests. They write only
// the attribute data (bytes 64..255), not the header.
void encodeClassPortInfo(MadBuffer& mad, const ClassPortInfo& v);
void encodePortCounters(MadBuffer& mad, const PortCounters& v);
void encodePortCountersExtended(MadBuffer& mad, const PortCountersExtended& v);
void encodePortSamplesControl(MadBuffer& mad, const PortSamplesControl& v);

}  // namespace ibfabric::mad
