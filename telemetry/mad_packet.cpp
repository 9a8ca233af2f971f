#include "telemetry/mad_packet.h"

#include <infiniband/mad.h>

namespace ibfabric::mad {
namespace {

// libibmad's accessors take non-const pointers but do not write through them when reading.
std::uint8_t* raw(const MadBuffer& mad) { return const_cast<std::uint8_t*>(mad.data()); }

std::uint32_t get(const MadBuffer& mad, MAD_FIELDS field) {
  std::uint32_t v = 0;
  mad_decode_field(raw(mad), field, &v);
  return v;
}

void set(MadBuffer& mad, MAD_FIELDS field, std::uint32_t v) {
  mad_encode_field(mad.data(), field, &v);
}

}  // namespace

MadAddress smpAddress(Lid lid) { return MadAddress{lid, 0, 0, MgmtClass::kSubnLid, 0}; }

MadAddress pmaAddress(Lid lid) {
  return MadAddress{lid, 1, IB_DEFAULT_QP1_QKEY, MgmtClass::kPerfMgt, 0};
}

MadAddress directedRouteAddress() {
  return MadAddress{kPermissiveLid, 0, 0, MgmtClass::kSubnDirected, 0};
}

MadHeader decodeHeader(const MadBuffer& mad) {
  MadHeader h;
  h.baseVersion = static_cast<std::uint8_t>(get(mad, IB_MAD_BASEVER_F));
  h.mgmtClass = static_cast<std::uint8_t>(get(mad, IB_MAD_MGMTCLASS_F));
  h.classVersion = static_cast<std::uint8_t>(get(mad, IB_MAD_CLASSVER_F));
  // IB_MAD_METHOD_F is the 7-bit method; the response bit is its own field.
  h.method = static_cast<std::uint8_t>(get(mad, IB_MAD_METHOD_F) |
                                       (get(mad, IB_MAD_RESPONSE_F) ? 0x80u : 0u));
  h.status = static_cast<std::uint16_t>(get(mad, IB_MAD_STATUS_F));
  h.transactionId = transactionId(mad);
  h.attributeId = static_cast<std::uint16_t>(get(mad, IB_MAD_ATTRID_F));
  h.attributeModifier = get(mad, IB_MAD_ATTRMOD_F);
  return h;
}

void encodeHeader(MadBuffer& mad, const MadHeader& h) {
  set(mad, IB_MAD_BASEVER_F, h.baseVersion);
  set(mad, IB_MAD_MGMTCLASS_F, h.mgmtClass);
  set(mad, IB_MAD_CLASSVER_F, h.classVersion);
  set(mad, IB_MAD_METHOD_F, h.method & 0x7fu);
  set(mad, IB_MAD_RESPONSE_F, (h.method & 0x80u) ? 1u : 0u);
  set(mad, IB_MAD_STATUS_F, h.status);
  setTransactionId(mad, h.transactionId);
  set(mad, IB_MAD_ATTRID_F, h.attributeId);
  set(mad, IB_MAD_ATTRMOD_F, h.attributeModifier);
}

std::uint64_t transactionId(const MadBuffer& mad) {
  std::uint64_t v = 0;
  mad_decode_field(raw(mad), IB_MAD_TRID_F, &v);
  return v;
}

void setTransactionId(MadBuffer& mad, std::uint64_t tid) {
  mad_encode_field(mad.data(), IB_MAD_TRID_F, &tid);
}

bool isResponse(const MadBuffer& mad) { return get(mad, IB_MAD_RESPONSE_F) != 0; }

std::uint16_t madStatus(const MadBuffer& mad) {
  const auto status = static_cast<std::uint16_t>(get(mad, IB_MAD_STATUS_F));
  if (get(mad, IB_MAD_MGMTCLASS_F) == static_cast<std::uint32_t>(MgmtClass::kSubnDirected)) {
    return status & 0x7fffu;  // IB_DRSMP_DIRECTION_F is the top bit of the word
  }
  return status;
}

MadBuffer makeRequest(MgmtClass mgmtClass, MadMethod method, std::uint16_t attributeId,
                      std::uint32_t attributeModifier) {
  MadBuffer mad{};
  MadHeader h;
  h.mgmtClass = static_cast<std::uint8_t>(mgmtClass);
  h.method = static_cast<std::uint8_t>(method);
  h.attributeId = attributeId;
  h.attributeModifier = attributeModifier;
  encodeHeader(mad, h);
  return mad;
}

}  // namespace ibfabric::mad
