#include "telemetry/smp_attributes.h"

#include <algorithm>
#include <stdexcept>

#include "telemetry/mad_fields.h"

namespace ibfabric::mad {
namespace {

using detail::decodeWith;
using detail::encodeWith;

struct VisitNodeInfo {
  template <typename F>
  void operator()(NodeInfo& v, F f) const {
    f(IB_NODE_BASE_VERS_F, v.baseVersion);
    f(IB_NODE_CLASS_VERS_F, v.classVersion);
    f(IB_NODE_TYPE_F, v.nodeType);
    f(IB_NODE_NPORTS_F, v.numPorts);
    f(IB_NODE_SYSTEM_GUID_F, v.systemImageGuid);
    f(IB_NODE_GUID_F, v.nodeGuid);
    f(IB_NODE_PORT_GUID_F, v.portGuid);
    f(IB_NODE_PARTITION_CAP_F, v.partitionCap);
    f(IB_NODE_DEVID_F, v.deviceId);
    f(IB_NODE_REVISION_F, v.revision);
    f(IB_NODE_LOCAL_PORT_F, v.localPortNum);
    f(IB_NODE_VENDORID_F, v.vendorId);
  }
};

struct VisitPortInfo {
  template <typename F>
  void operator()(PortInfo& v, F f) const {
    f(IB_PORT_LID_F, v.lid);
    f(IB_PORT_SMLID_F, v.masterSmLid);
    f(IB_PORT_CAPMASK_F, v.capabilityMask);
    f(IB_PORT_LOCAL_PORT_F, v.localPortNum);
    f(IB_PORT_LINK_WIDTH_ENABLED_F, v.linkWidthEnabled);
    f(IB_PORT_LINK_WIDTH_SUPPORTED_F, v.linkWidthSupported);
    f(IB_PORT_LINK_WIDTH_ACTIVE_F, v.linkWidthActive);
    f(IB_PORT_LINK_SPEED_SUPPORTED_F, v.linkSpeedSupported);
    f(IB_PORT_STATE_F, v.portState);
    f(IB_PORT_PHYS_STATE_F, v.portPhysState);
    f(IB_PORT_LMC_F, v.lmc);
    f(IB_PORT_LINK_SPEED_ACTIVE_F, v.linkSpeedActive);
    f(IB_PORT_LINK_SPEED_ENABLED_F, v.linkSpeedEnabled);
    f(IB_PORT_NEIGHBOR_MTU_F, v.neighborMtu);
    f(IB_PORT_VL_CAP_F, v.vlCap);
    f(IB_PORT_MTU_CAP_F, v.mtuCap);
    f(IB_PORT_OPER_VLS_F, v.operVls);
    f(IB_PORT_CAPMASK2_F, v.capabilityMask2);
    f(IB_PORT_LINK_SPEED_EXT_ACTIVE_F, v.linkSpeedExtActive);
    f(IB_PORT_LINK_SPEED_EXT_SUPPORTED_F, v.linkSpeedExtSupported);
    f(IB_PORT_LINK_SPEED_EXT_ENABLED_F, v.linkSpeedExtEnabled);
    f(IB_PORT_GID_PREFIX_F, v.gidPrefix);
  }
};

struct VisitSwitchInfo {
  template <typename F>
  void operator()(SwitchInfo& v, F f) const {
    f(IB_SW_LINEAR_FDB_CAP_F, v.linearFdbCap);
    f(IB_SW_RANDOM_FDB_CAP_F, v.randomFdbCap);
    f(IB_SW_MCAST_FDB_CAP_F, v.multicastFdbCap);
    f(IB_SW_LINEAR_FDB_TOP_F, v.linearFdbTop);
    f(IB_SW_DEF_PORT_F, v.defaultPort);
    f(IB_SW_LIFE_TIME_F, v.lifeTimeValue);
    f(IB_SW_STATE_CHANGE_F, v.portStateChange);
    f(IB_SW_LIDS_PER_PORT_F, v.lidsPerPort);
    f(IB_SW_PARTITION_ENFORCE_CAP_F, v.partitionEnforcementCap);
    f(IB_SW_ENHANCED_PORT0_F, v.enhancedPort0);
    f(IB_SW_MCAST_FDB_TOP_F, v.multicastFdbTop);
  }
};

MadBuffer smpGet(SmpAttribute attribute, std::uint32_t modifier) {
  return makeRequest(MgmtClass::kSubnLid, MadMethod::kGet, static_cast<std::uint16_t>(attribute),
                     modifier);
}

}  // namespace

MadBuffer buildNodeInfoGet() { return smpGet(SmpAttribute::kNodeInfo, 0); }
MadBuffer buildPortInfoGet(std::uint8_t port) { return smpGet(SmpAttribute::kPortInfo, port); }
MadBuffer buildSwitchInfoGet() { return smpGet(SmpAttribute::kSwitchInfo, 0); }
MadBuffer buildLinearForwardingTableGet(std::uint32_t block) {
  return smpGet(SmpAttribute::kLinearForwardingTable, block);
}

std::string DirectedPath::toString() const {
  std::string s = "0";
  for (std::uint8_t p : ports) s += "," + std::to_string(p);
  return s;
}

MadBuffer toDirectedRoute(const MadBuffer& lidRoutedSmp, const DirectedPath& path) {
  if (path.ports.size() > DirectedPath::kMaxHops) {
    throw std::invalid_argument("directed route of " + std::to_string(path.ports.size()) +
                                " hops (at most 63)");
  }
  const auto cls = detail::getField(lidRoutedSmp.data(), IB_MAD_MGMTCLASS_F);
  if (cls != static_cast<std::uint64_t>(MgmtClass::kSubnLid) &&
      cls != static_cast<std::uint64_t>(MgmtClass::kSubnDirected)) {
    throw std::invalid_argument("not an SMP (management class " + std::to_string(cls) + ")");
  }
  MadBuffer mad = lidRoutedSmp;
  std::uint8_t* base = mad.data();
  detail::setField(base, IB_MAD_MGMTCLASS_F, static_cast<std::uint64_t>(MgmtClass::kSubnDirected));
  detail::setField(base, IB_DRSMP_HOPCNT_F, path.ports.size());
  detail::setField(base, IB_DRSMP_HOPPTR_F, 0);
  detail::setField(base, IB_DRSMP_DIRECTION_F, 0);
  detail::setField(base, IB_DRSMP_STATUS_F, 0);
  detail::setField(base, IB_DRSMP_DRSLID_F, kPermissiveLid.value());
  detail::setField(base, IB_DRSMP_DRDLID_F, kPermissiveLid.value());
  // Initial path: entry 0 is unused, entries 1..hop count are the ports (libibmad's p[]).
  std::array<std::uint8_t, 64> initial{};
  for (std::size_t i = 0; i < path.ports.size(); ++i) initial[i + 1] = path.ports[i];
  mad_encode_field(base, IB_DRSMP_PATH_F, initial.data());
  std::array<std::uint8_t, 64> ret{};
  mad_encode_field(base, IB_DRSMP_RPATH_F, ret.data());
  return mad;
}

bool isDirectedRoute(const MadBuffer& mad) {
  return detail::getField(mad.data(), IB_MAD_MGMTCLASS_F) ==
         static_cast<std::uint64_t>(MgmtClass::kSubnDirected);
}

DirectedPath directedPathOf(const MadBuffer& drSmp) {
  DirectedPath p;
  const auto hops = std::min<std::uint64_t>(detail::getField(drSmp.data(), IB_DRSMP_HOPCNT_F),
                                            DirectedPath::kMaxHops);
  std::array<std::uint8_t, 64> initial{};
  mad_decode_field(const_cast<std::uint8_t*>(drSmp.data()), IB_DRSMP_PATH_F, initial.data());
  p.ports.assign(initial.begin() + 1, initial.begin() + 1 + static_cast<std::ptrdiff_t>(hops));
  return p;
}

NodeInfo decodeNodeInfo(const MadBuffer& mad) { return decodeWith<NodeInfo>(mad, VisitNodeInfo{}); }
PortInfo decodePortInfo(const MadBuffer& mad) { return decodeWith<PortInfo>(mad, VisitPortInfo{}); }
SwitchInfo decodeSwitchInfo(const MadBuffer& mad) {
  return decodeWith<SwitchInfo>(mad, VisitSwitchInfo{});
}

LinearForwardingBlock decodeLinearForwardingBlock(const MadBuffer& mad) {
  LinearForwardingBlock b;
  b.block = decodeHeader(mad).attributeModifier;
  // IB_LINEAR_FORW_TBL_F is a 512-bit array field: libibmad copies the 64 entries out.
  mad_decode_field(const_cast<std::uint8_t*>(detail::attributeData(mad)), IB_LINEAR_FORW_TBL_F,
                   b.ports.data());
  return b;
}

void encodeNodeInfo(MadBuffer& mad, const NodeInfo& v) { encodeWith(mad, v, VisitNodeInfo{}); }
void encodePortInfo(MadBuffer& mad, const PortInfo& v) { encodeWith(mad, v, VisitPortInfo{}); }
void encodeSwitchInfo(MadBuffer& mad, const SwitchInfo& v) {
  encodeWith(mad, v, VisitSwitchInfo{});
}
void encodeLinearForwardingBlock(MadBuffer& mad, const LinearForwardingBlock& v) {
  auto ports = v.ports;
  mad_encode_field(detail::attributeData(mad), IB_LINEAR_FORW_TBL_F, ports.data());
}

}  // namespace ibfabric::mad
