#include "api/service/counter_clear.h"

#include <infiniband/mad.h>

#include "telemetry/pma_attributes.h"

namespace ibfabric::api {

mad::MadBuffer buildPortCountersExtendedClear(std::uint8_t portSelect, bool errorCounters) {
  mad::MadBuffer m =
      mad::makeRequest(mad::MgmtClass::kPerfMgt, mad::MadMethod::kSet,
                       static_cast<std::uint16_t>(mad::PmaAttribute::kPortCountersExtended), 0);
  mad::PortCountersExtended v;
  v.portSelect = portSelect;
  v.counterSelect = 0x00FF;  // XmitData, RcvData, XmitPkts, RcvPkts, uni/multicast Xmit/Rcv
  mad::encodePortCountersExtended(m, v);
  if (errorCounters) {
    std::uint32_t select2 = 0xFFFFFFFFu;  // clipped to the field's width by libibmad
    mad_encode_field(m.data() + mad::kAttributeDataOffset, IB_PC_EXT_COUNTER_SELECT2_F, &select2);
  }
  return m;
}

}  // namespace ibfabric::api
