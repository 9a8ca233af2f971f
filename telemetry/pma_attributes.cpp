#include "telemetry/pma_attributes.h"

#include "telemetry/mad_fields.h"

namespace ibfabric::mad {
namespace {

using detail::decodeWith;
using detail::encodeWith;

struct VisitClassPortInfo {
  template <typename F>
  void operator()(ClassPortInfo& v, F f) const {
    f(IB_CPI_BASEVER_F, v.baseVersion);
    f(IB_CPI_CLASSVER_F, v.classVersion);
    f(IB_CPI_CAPMASK_F, v.capabilityMask);
    f(IB_CPI_CAPMASK2_F, v.capabilityMask2);
    f(IB_CPI_RESP_TIME_VALUE_F, v.respTimeValue);
  }
};

struct VisitPortCounters {
  template <typename F>
  void operator()(PortCounters& v, F f) const {
    f(IB_PC_PORT_SELECT_F, v.portSelect);
    f(IB_PC_COUNTER_SELECT_F, v.counterSelect);
    f(IB_PC_ERR_SYM_F, v.symbolErrorCounter);
    f(IB_PC_LINK_RECOVERS_F, v.linkErrorRecoveryCounter);
    f(IB_PC_LINK_DOWNED_F, v.linkDownedCounter);
    f(IB_PC_ERR_RCV_F, v.portRcvErrors);
    f(IB_PC_ERR_PHYSRCV_F, v.portRcvRemotePhysicalErrors);
    f(IB_PC_ERR_SWITCH_REL_F, v.portRcvSwitchRelayErrors);
    f(IB_PC_XMT_DISCARDS_F, v.portXmitDiscards);
    f(IB_PC_ERR_XMTCONSTR_F, v.portXmitConstraintErrors);
    f(IB_PC_ERR_RCVCONSTR_F, v.portRcvConstraintErrors);
    f(IB_PC_ERR_LOCALINTEG_F, v.localLinkIntegrityErrors);
    f(IB_PC_ERR_EXCESS_OVR_F, v.excessiveBufferOverrunErrors);
    f(IB_PC_VL15_DROPPED_F, v.vl15Dropped);
    f(IB_PC_XMT_BYTES_F, v.portXmitData);
    f(IB_PC_RCV_BYTES_F, v.portRcvData);
    f(IB_PC_XMT_PKTS_F, v.portXmitPkts);
    f(IB_PC_RCV_PKTS_F, v.portRcvPkts);
    f(IB_PC_XMT_WAIT_F, v.portXmitWait);
  }
};

struct VisitPortCountersExtended {
  template <typename F>
  void operator()(PortCountersExtended& v, F f) const {
    f(IB_PC_EXT_PORT_SELECT_F, v.portSelect);
    f(IB_PC_EXT_COUNTER_SELECT_F, v.counterSelect);
    f(IB_PC_EXT_XMT_BYTES_F, v.portXmitData);
    f(IB_PC_EXT_RCV_BYTES_F, v.portRcvData);
    f(IB_PC_EXT_XMT_PKTS_F, v.portXmitPkts);
    f(IB_PC_EXT_RCV_PKTS_F, v.portRcvPkts);
    f(IB_PC_EXT_XMT_UPKTS_F, v.portUnicastXmitPkts);
    f(IB_PC_EXT_RCV_UPKTS_F, v.portUnicastRcvPkts);
    f(IB_PC_EXT_XMT_MPKTS_F, v.portMulticastXmitPkts);
    f(IB_PC_EXT_RCV_MPKTS_F, v.portMulticastRcvPkts);
    f(IB_PC_EXT_ERR_SYM_F, v.symbolErrorCounter);
    f(IB_PC_EXT_LINK_RECOVERS_F, v.linkErrorRecoveryCounter);
    f(IB_PC_EXT_LINK_DOWNED_F, v.linkDownedCounter);
    f(IB_PC_EXT_ERR_RCV_F, v.portRcvErrors);
    f(IB_PC_EXT_ERR_PHYSRCV_F, v.portRcvRemotePhysicalErrors);
    f(IB_PC_EXT_ERR_SWITCH_REL_F, v.portRcvSwitchRelayErrors);
    f(IB_PC_EXT_XMT_DISCARDS_F, v.portXmitDiscards);
    f(IB_PC_EXT_ERR_XMTCONSTR_F, v.portXmitConstraintErrors);
    f(IB_PC_EXT_ERR_RCVCONSTR_F, v.portRcvConstraintErrors);
    f(IB_PC_EXT_ERR_LOCALINTEG_F, v.localLinkIntegrityErrors);
    f(IB_PC_EXT_ERR_EXCESS_OVR_F, v.excessiveBufferOverrunErrors);
    f(IB_PC_EXT_VL15_DROPPED_F, v.vl15Dropped);
    f(IB_PC_EXT_XMT_WAIT_F, v.portXmitWait);
    f(IB_PC_EXT_QP1_DROP_F, v.qp1Dropped);
  }
};

struct VisitPortSamplesControl {
  template <typename F>
  void operator()(PortSamplesControl& v, F f) const {
    f(IB_PSC_OPCODE_F, v.opCode);
    f(IB_PSC_PORT_SELECT_F, v.portSelect);
    f(IB_PSC_TICK_F, v.tick);
    f(IB_PSC_COUNTER_WIDTH_F, v.counterWidth);
    f(IB_PSC_SAMPLE_MECHS_F, v.sampleMechanisms);
    f(IB_PSC_SAMPLE_STATUS_F, v.sampleStatus);
    f(IB_PSC_OPTION_MASK_F, v.optionMask);
    f(IB_PSC_SAMPLE_START_F, v.sampleStart);
    f(IB_PSC_SAMPLE_INTVL_F, v.sampleInterval);
    f(IB_PSC_TAG_F, v.tag);
    for (int i = 0; i < 15; ++i) {
      f(static_cast<MAD_FIELDS>(IB_PSC_COUNTER_SEL0_F + i), v.counterSelect[i]);
    }
  }
};

MadBuffer pmaGet(PmaAttribute attribute) {
  return makeRequest(MgmtClass::kPerfMgt, MadMethod::kGet, static_cast<std::uint16_t>(attribute),
                     0);
}

}  // namespace

MadBuffer buildClassPortInfoGet() { return pmaGet(PmaAttribute::kClassPortInfo); }

// A sweep builds two requests per port: their header is encoded once per attribute, and each
// request is a copy with its PortSelect set.
MadBuffer buildPortCountersGet(std::uint8_t portSelect) {
  static const MadBuffer kGet = pmaGet(PmaAttribute::kPortCounters);
  MadBuffer mad = kGet;
  detail::setField(detail::attributeData(mad), IB_PC_PORT_SELECT_F, portSelect);
  return mad;
}

MadBuffer buildPortCountersExtendedGet(std::uint8_t portSelect) {
  static const MadBuffer kGet = pmaGet(PmaAttribute::kPortCountersExtended);
  MadBuffer mad = kGet;
  detail::setField(detail::attributeData(mad), IB_PC_EXT_PORT_SELECT_F, portSelect);
  return mad;
}

MadBuffer buildPortSamplesControlGet(std::uint8_t portSelect) {
  MadBuffer mad = pmaGet(PmaAttribute::kPortSamplesControl);
  detail::setField(detail::attributeData(mad), IB_PSC_PORT_SELECT_F, portSelect);
  return mad;
}

ClassPortInfo decodeClassPortInfo(const MadBuffer& mad) {
  return decodeWith<ClassPortInfo>(mad, VisitClassPortInfo{});
}
PortCounters decodePortCounters(const MadBuffer& mad) {
  return decodeWith<PortCounters>(mad, VisitPortCounters{});
}
PortCountersExtended decodePortCountersExtended(const MadBuffer& mad) {
  return decodeWith<PortCountersExtended>(mad, VisitPortCountersExtended{});
}
PortSamplesControl decodePortSamplesControl(const MadBuffer& mad) {
  return decodeWith<PortSamplesControl>(mad, VisitPortSamplesControl{});
}

void encodeClassPortInfo(MadBuffer& mad, const ClassPortInfo& v) {
  encodeWith(mad, v, VisitClassPortInfo{});
}
void encodePortCounters(MadBuffer& mad, const PortCounters& v) {
  encodeWith(mad, v, VisitPortCounters{});
}
void encodePortCountersExtended(MadBuffer& mad, const PortCountersExtended& v) {
  encodeWith(mad, v, VisitPortCountersExtended{});
}
void encodePortSamplesControl(MadBuffer& mad, const PortSamplesControl& v) {
  encodeWith(mad, v, VisitPortSamplesControl{});
}

}  // namespace ibfabric::mad
