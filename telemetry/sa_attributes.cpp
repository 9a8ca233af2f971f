#include "telemetry/sa_attributes.h"

#include <infiniband/mad.h>

#include <cstdio>

#include "telemetry/mad_fields.h"

namespace ibfabric::mad {
namespace {

constexpr std::uint16_t kSaClassVersion = 2;
constexpr std::uint16_t kAttrInformInfo = IB_SA_ATTR_INFORMINFO;

/// A big-endian bit field of an attribute (IBA numbering: bit 0 is the top bit of byte 0).
struct Field {
  unsigned bitOffset;
  unsigned bitLength;  // <= 32
};

// InformInfo, IBA 15.2.5.12 (libibmad has no table for it).
constexpr Field kInformGid{0, 128};  // bytes, not through get/put
constexpr Field kLidRangeBegin{128, 16};
constexpr Field kLidRangeEnd{144, 16};
constexpr Field kIsGeneric{176, 8};
constexpr Field kSubscribe{184, 8};
constexpr Field kType{192, 16};
constexpr Field kTrapNumber{208, 16};
constexpr Field kQpn{224, 24};
constexpr Field kRespTimeValue{251, 5};
constexpr Field kProducerType{264, 24};

// The Notice's GIDs (IBA 13.4.8.2): IssuerGID after the 54 bytes of data details; traps 64-67
// carry the GID at byte 6 of the details.
constexpr std::size_t kNoticeIssuerGidByte = 64;
constexpr std::size_t kNoticeDataGidByte = 16;

std::uint32_t get(const std::uint8_t* base, Field f) {
  std::uint32_t v = 0;
  for (unsigned i = 0; i < f.bitLength; ++i) {
    const unsigned bit = f.bitOffset + i;
    v = (v << 1) | ((base[bit / 8] >> (7 - bit % 8)) & 1u);
  }
  return v;
}

void put(std::uint8_t* base, Field f, std::uint32_t v) {
  for (unsigned i = 0; i < f.bitLength; ++i) {
    const unsigned bit = f.bitOffset + f.bitLength - 1 - i;
    const auto mask = static_cast<std::uint8_t>(1u << (7 - bit % 8));
    if ((v >> i) & 1u)
      base[bit / 8] |= mask;
    else
      base[bit / 8] &= static_cast<std::uint8_t>(~mask);
  }
}

const std::uint8_t* saData(const MadBuffer& mad) { return mad.data() + IB_SA_DATA_OFFS; }
std::uint8_t* saData(MadBuffer& mad) { return mad.data() + IB_SA_DATA_OFFS; }

}  // namespace

std::string toString(Trap trap) {
  switch (trap) {
    case Trap::kGidInService:
      return "64 (GidInService)";
    case Trap::kGidOutOfService:
      return "65 (GidOutOfService)";
    case Trap::kPortStateChange:
      return "128 (PortStateChange)";
    case Trap::kLocalChanges:
      return "144 (LocalChanges)";
  }
  return std::to_string(static_cast<unsigned>(trap));
}

MadAddress saAddress(Lid smLid) {
  return MadAddress{smLid, 1, IB_DEFAULT_QP1_QKEY, MgmtClass::kSubnAdm, 0};
}

MadBuffer buildInformInfoSet(const InformInfo& info) {
  MadBuffer mad = makeRequest(MgmtClass::kSubnAdm, MadMethod::kSet, kAttrInformInfo, 0);
  MadHeader h = decodeHeader(mad);
  h.classVersion = kSaClassVersion;
  encodeHeader(mad, h);
  std::uint8_t* d = saData(mad);
  for (std::size_t i = 0; i < info.gid.size(); ++i) d[kInformGid.bitOffset / 8 + i] = info.gid[i];
  put(d, kLidRangeBegin, info.lidRangeBegin);
  put(d, kLidRangeEnd, info.lidRangeEnd);
  put(d, kIsGeneric, info.isGeneric ? 1 : 0);
  put(d, kSubscribe, info.subscribe ? 1 : 0);
  put(d, kType, info.type);
  put(d, kTrapNumber, info.trapNumber);
  put(d, kQpn, info.qpn);
  put(d, kRespTimeValue, info.respTimeValue);
  put(d, kProducerType, info.producerType);
  return mad;
}

InformInfo decodeInformInfo(const MadBuffer& mad) {
  const std::uint8_t* d = saData(mad);
  InformInfo info;
  for (std::size_t i = 0; i < info.gid.size(); ++i) info.gid[i] = d[kInformGid.bitOffset / 8 + i];
  info.lidRangeBegin = static_cast<std::uint16_t>(get(d, kLidRangeBegin));
  info.lidRangeEnd = static_cast<std::uint16_t>(get(d, kLidRangeEnd));
  info.isGeneric = get(d, kIsGeneric) != 0;
  info.subscribe = get(d, kSubscribe) != 0;
  info.type = static_cast<std::uint16_t>(get(d, kType));
  info.trapNumber = static_cast<std::uint16_t>(get(d, kTrapNumber));
  info.qpn = get(d, kQpn);
  info.respTimeValue = static_cast<std::uint8_t>(get(d, kRespTimeValue));
  info.producerType = get(d, kProducerType);
  return info;
}

Guid Notice::portGuid() const {
  const bool fromData = trapNumber >= 64 && trapNumber <= 67;
  const auto& gid = fromData ? dataGid : issuerGid;
  std::uint64_t g = 0;
  for (std::size_t i = 8; i < 16; ++i) g = (g << 8) | gid[i];
  return Guid(g);
}

bool isReport(const MadBuffer& mad) {
  const MadHeader h = decodeHeader(mad);
  return h.mgmtClass == static_cast<std::uint8_t>(MgmtClass::kSubnAdm) &&
         h.method == static_cast<std::uint8_t>(MadMethod::kReport);
}

Notice decodeReportNotice(const MadBuffer& report) {
  const std::uint8_t* d = saData(report);
  using detail::getField;
  Notice n;
  n.isGeneric = getField(d, IB_NOTICE_IS_GENERIC_F) != 0;
  n.type = static_cast<std::uint8_t>(getField(d, IB_NOTICE_TYPE_F));
  n.producerType = static_cast<std::uint32_t>(getField(d, IB_NOTICE_PRODUCER_F));
  n.trapNumber = static_cast<std::uint16_t>(getField(d, IB_NOTICE_TRAP_NUMBER_F));
  n.issuerLid = Lid(static_cast<std::uint16_t>(getField(d, IB_NOTICE_ISSUER_LID_F)));
  for (std::size_t i = 0; i < 16; ++i) {
    n.issuerGid[i] = d[kNoticeIssuerGidByte + i];
    n.dataGid[i] = d[kNoticeDataGidByte + i];
  }
  if (n.trapNumber == 128)
    n.dataLid = Lid(static_cast<std::uint16_t>(getField(d, IB_NOTICE_DATA_LID_F)));
  if (n.trapNumber == 144) {
    n.dataLid = Lid(static_cast<std::uint16_t>(getField(d, IB_NOTICE_DATA_144_LID_F)));
    n.capabilityMask = static_cast<std::uint32_t>(getField(d, IB_NOTICE_DATA_144_CAPMASK_F));
  }
  return n;
}

MadBuffer buildReportResponse(const MadBuffer& report) {
  MadBuffer reply = report;
  MadHeader h = decodeHeader(report);
  h.method = static_cast<std::uint8_t>(MadMethod::kReportResponse);
  h.status = 0;
  encodeHeader(reply, h);
  return reply;
}

std::string saStatusText(std::uint16_t status) {
  if (status == 0) return {};
  static const char* const kSa[] = {"",
                                    "no_resources",
                                    "req_invalid",
                                    "no_records",
                                    "too_many_records",
                                    "req_invalid_gid",
                                    "req_insufficient_components",
                                    "req_denied"};
  const unsigned sa = status >> 8;
  std::string what;
  if (sa > 0 && sa < std::size(kSa))
    what = kSa[sa];
  else if ((status & 0x1c) == 0x04)
    what = "bad_version";
  else if ((status & 0x1c) == 0x08)
    what = "method_unsupported";
  else if ((status & 0x1c) == 0x0c)
    what = "method_attribute_unsupported";
  else if ((status & 0x1c) == 0x1c)
    what = "invalid_attribute_or_modifier";
  else
    what = "error";
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%04x", status);
  return what + " (" + hex + ")";
}

}  // namespace ibfabric::mad
