// MAD codec tests: builders and decoders against libibmad's own field accessors and known bytes.
#include <gtest/gtest.h>
#include <infiniband/mad.h>

#include "telemetry/mad_packet.h"
#include "telemetry/pma_attributes.h"
#include "telemetry/smp_attributes.h"

namespace ibfabric::mad {
namespace {

std::uint32_t field(const MadBuffer& mad, int base, MAD_FIELDS f) {
  return mad_get_field(const_cast<std::uint8_t*>(mad.data()), base, f);
}
std::uint64_t field64(const MadBuffer& mad, int base, MAD_FIELDS f) {
  return mad_get_field64(const_cast<std::uint8_t*>(mad.data()), base, f);
}

TEST(MadCodecTest, HeaderRoundTripAndTidHalves) {
  MadBuffer mad{};
  MadHeader h;
  h.mgmtClass = 0x04;
  h.method = 0x81;
  h.status = 0x001c;
  h.transactionId = 0x0005'0000'dead'beefULL;
  h.attributeId = 0x1D;
  h.attributeModifier = 0x12345678;
  encodeHeader(mad, h);
  EXPECT_EQ(decodeHeader(mad), h);
  EXPECT_EQ(field(mad, 0, IB_MAD_MGMTCLASS_F), 0x04u);
  EXPECT_EQ(field(mad, 0, IB_MAD_RESPONSE_F), 1u);
  EXPECT_EQ(field64(mad, 0, IB_MAD_TRID_F), h.transactionId);
  EXPECT_EQ(lowTransactionId(transactionId(mad)), 0xdeadbeefu);
  EXPECT_TRUE(isResponse(mad));
  EXPECT_EQ(madStatus(mad), 0x001c);
  // Wire order: byte 1 is the class, byte 3 the method, bytes 16-17 the attribute id.
  EXPECT_EQ(mad[1], 0x04);
  EXPECT_EQ(mad[3], 0x81);
  EXPECT_EQ(mad[16], 0x00);
  EXPECT_EQ(mad[17], 0x1D);
}

TEST(MadCodecTest, PmaRequestsMatchLibibmad) {
  MadBuffer pce = buildPortCountersExtendedGet(17);
  EXPECT_EQ(field(pce, 0, IB_MAD_BASEVER_F), 1u);
  EXPECT_EQ(field(pce, 0, IB_MAD_MGMTCLASS_F), static_cast<unsigned>(IB_PERFORMANCE_CLASS));
  EXPECT_EQ(field(pce, 0, IB_MAD_CLASSVER_F), 1u);
  EXPECT_EQ(field(pce, 0, IB_MAD_METHOD_F), static_cast<unsigned>(IB_MAD_METHOD_GET));
  EXPECT_EQ(field(pce, 0, IB_MAD_ATTRID_F), static_cast<unsigned>(IB_GSI_PORT_COUNTERS_EXT));
  EXPECT_EQ(field(pce, IB_PC_DATA_OFFS, IB_PC_EXT_PORT_SELECT_F), 17u);
  EXPECT_EQ(pce[IB_PC_DATA_OFFS + 1], 17);

  MadBuffer pc = buildPortCountersGet(kAllPortsSelect);
  EXPECT_EQ(field(pc, 0, IB_MAD_ATTRID_F), static_cast<unsigned>(IB_GSI_PORT_COUNTERS));
  EXPECT_EQ(field(pc, IB_PC_DATA_OFFS, IB_PC_PORT_SELECT_F), 0xFFu);

  MadBuffer cpi = buildClassPortInfoGet();
  EXPECT_EQ(field(cpi, 0, IB_MAD_ATTRID_F), static_cast<unsigned>(CLASS_PORT_INFO));

  MadBuffer psc = buildPortSamplesControlGet(3);
  EXPECT_EQ(field(psc, 0, IB_MAD_ATTRID_F), static_cast<unsigned>(IB_GSI_PORT_SAMPLES_CONTROL));
  EXPECT_EQ(field(psc, IB_PC_DATA_OFFS, IB_PSC_PORT_SELECT_F), 3u);
}

TEST(MadCodecTest, SmpRequestsAreLidRoutedGets) {
  MadBuffer pi = buildPortInfoGet(5);
  EXPECT_EQ(field(pi, 0, IB_MAD_MGMTCLASS_F), static_cast<unsigned>(IB_SMI_CLASS));
  EXPECT_EQ(field(pi, 0, IB_MAD_ATTRID_F), static_cast<unsigned>(IB_ATTR_PORT_INFO));
  EXPECT_EQ(field(pi, 0, IB_MAD_ATTRMOD_F), 5u);
  EXPECT_EQ(field64(pi, 0, IB_MAD_MKEY_F), 0u);
  EXPECT_EQ(field(buildSwitchInfoGet(), 0, IB_MAD_ATTRID_F),
            static_cast<unsigned>(IB_ATTR_SWITCH_INFO));
  MadBuffer lft = buildLinearForwardingTableGet(3);
  EXPECT_EQ(field(lft, 0, IB_MAD_ATTRID_F), static_cast<unsigned>(IB_ATTR_LINEARFORWTBL));
  EXPECT_EQ(field(lft, 0, IB_MAD_ATTRMOD_F), 3u);
  EXPECT_EQ(smpAddress(Lid(7)).qp, 0u);
  EXPECT_EQ(pmaAddress(Lid(7)).qp, 1u);
  EXPECT_EQ(pmaAddress(Lid(7)).qkey, static_cast<std::uint32_t>(IB_DEFAULT_QP1_QKEY));
}

TEST(MadCodecTest, ClassPortInfoCapabilityBits) {
  // What ibsim reports for a switch PMA: AllPortSelect, extended counters, PortXmitWait.
  MadBuffer mad{};
  mad[IB_PC_DATA_OFFS + 2] = 0x13;
  mad[IB_PC_DATA_OFFS + 3] = 0x00;
  ClassPortInfo cpi = decodeClassPortInfo(mad);
  EXPECT_EQ(cpi.capabilityMask, 0x1300);
  EXPECT_TRUE(cpi.allPortSelect());
  EXPECT_TRUE(cpi.extendedCounters());
  EXPECT_TRUE(cpi.extendedUnicastMulticast());
  EXPECT_TRUE(cpi.portXmitWait());
  EXPECT_FALSE(cpi.extendedErrorCounters());

  ClassPortInfo in;
  in.baseVersion = 1;
  in.classVersion = 1;
  in.capabilityMask = ClassPortInfo::kExtendedNoIetfCounters | ClassPortInfo::kQp1Dropped;
  in.capabilityMask2 = ClassPortInfo::kAdditionalExtendedCounters;
  in.respTimeValue = 18;
  MadBuffer enc{};
  encodeClassPortInfo(enc, in);
  EXPECT_EQ(decodeClassPortInfo(enc), in);
  EXPECT_EQ(field(enc, IB_PC_DATA_OFFS, IB_CPI_CAPMASK2_F), 2u);
  EXPECT_TRUE(decodeClassPortInfo(enc).extendedErrorCounters());
  EXPECT_TRUE(decodeClassPortInfo(enc).extendedCounters());
  EXPECT_FALSE(decodeClassPortInfo(enc).extendedUnicastMulticast());
  EXPECT_FALSE(decodeClassPortInfo(enc).allPortSelect());
}

TEST(MadCodecTest, PortCountersRoundTripAgainstLibibmad) {
  PortCounters v;
  v.portSelect = 9;
  v.counterSelect = 0xffff;
  v.symbolErrorCounter = 0xfffe;
  v.linkErrorRecoveryCounter = 0xfd;
  v.linkDownedCounter = 0xfc;
  v.portRcvErrors = 1001;
  v.portRcvRemotePhysicalErrors = 1002;
  v.portRcvSwitchRelayErrors = 1003;
  v.portXmitDiscards = 1004;
  v.portXmitConstraintErrors = 0xfb;
  v.portRcvConstraintErrors = 0xfa;
  v.localLinkIntegrityErrors = 0xe;
  v.excessiveBufferOverrunErrors = 0xd;
  v.vl15Dropped = 1005;
  v.portXmitData = 0xfffffff0;
  v.portRcvData = 0x12345678;
  v.portXmitPkts = 0x23456789;
  v.portRcvPkts = 0x3456789a;
  v.portXmitWait = 0x456789ab;
  MadBuffer mad{};
  encodePortCounters(mad, v);
  EXPECT_EQ(decodePortCounters(mad), v);
  EXPECT_EQ(field(mad, IB_PC_DATA_OFFS, IB_PC_XMT_BYTES_F), v.portXmitData);
  EXPECT_EQ(field(mad, IB_PC_DATA_OFFS, IB_PC_XMT_WAIT_F), v.portXmitWait);
  EXPECT_EQ(field(mad, IB_PC_DATA_OFFS, IB_PC_ERR_LOCALINTEG_F), 0xeu);
  EXPECT_EQ(field(mad, IB_PC_DATA_OFFS, IB_PC_ERR_EXCESS_OVR_F), 0xdu);
  // SymbolErrorCounter is big-endian at attribute bytes 4-5.
  EXPECT_EQ(mad[IB_PC_DATA_OFFS + 4], 0xff);
  EXPECT_EQ(mad[IB_PC_DATA_OFFS + 5], 0xfe);
}

TEST(MadCodecTest, PortCountersExtendedRoundTripAgainstLibibmad) {
  PortCountersExtended v;
  v.portSelect = 33;
  v.portXmitData = 123456789012ULL;
  v.portRcvData = 0xfedcba9876543210ULL;
  v.portXmitPkts = 1;
  v.portRcvPkts = 2;
  v.portUnicastXmitPkts = 3;
  v.portUnicastRcvPkts = 4;
  v.portMulticastXmitPkts = 5;
  v.portMulticastRcvPkts = 6;
  std::uint64_t n = 100;
  for (std::uint64_t* p :
       {&v.symbolErrorCounter, &v.linkErrorRecoveryCounter, &v.linkDownedCounter, &v.portRcvErrors,
        &v.portRcvRemotePhysicalErrors, &v.portRcvSwitchRelayErrors, &v.portXmitDiscards,
        &v.portXmitConstraintErrors, &v.portRcvConstraintErrors, &v.localLinkIntegrityErrors,
        &v.excessiveBufferOverrunErrors, &v.vl15Dropped, &v.portXmitWait, &v.qp1Dropped}) {
    *p = (n++) << 40;
  }
  MadBuffer mad{};
  encodePortCountersExtended(mad, v);
  EXPECT_EQ(decodePortCountersExtended(mad), v);
  EXPECT_EQ(field64(mad, IB_PC_DATA_OFFS, IB_PC_EXT_XMT_BYTES_F), v.portXmitData);
  EXPECT_EQ(field64(mad, IB_PC_DATA_OFFS, IB_PC_EXT_RCV_BYTES_F), v.portRcvData);
  EXPECT_EQ(field64(mad, IB_PC_DATA_OFFS, IB_PC_EXT_XMT_WAIT_F), v.portXmitWait);
  EXPECT_EQ(field(mad, IB_PC_DATA_OFFS, IB_PC_EXT_PORT_SELECT_F), 33u);
  // PortXmitData is big-endian at attribute bytes 8-15.
  EXPECT_EQ(mad[IB_PC_DATA_OFFS + 15], static_cast<std::uint8_t>(123456789012ULL & 0xff));
}

TEST(MadCodecTest, PortSamplesControlRoundTrip) {
  PortSamplesControl v;
  v.opCode = 1;
  v.portSelect = 4;
  v.tick = 5;
  v.counterWidth = 4;
  v.sampleMechanisms = 6;
  v.sampleStatus = 2;
  v.optionMask = 0x0102030405060708ULL;
  v.sampleStart = 77;
  v.sampleInterval = 1000;
  v.tag = 0xabcd;
  for (int i = 0; i < 15; ++i) v.counterSelect[i] = static_cast<std::uint16_t>(0x100 + i);
  MadBuffer mad{};
  encodePortSamplesControl(mad, v);
  EXPECT_EQ(decodePortSamplesControl(mad), v);
  EXPECT_EQ(field(mad, IB_PC_DATA_OFFS, IB_PSC_COUNTER_SEL14_F), 0x10eu);
}

TEST(MadCodecTest, PortInfoAndSwitchInfoRoundTrip) {
  PortInfo pi;
  pi.lid = 0x1234;
  pi.masterSmLid = 1;
  pi.capabilityMask = 0x02510868;
  pi.localPortNum = 7;
  pi.linkWidthEnabled = 3;
  pi.linkWidthSupported = 3;
  pi.linkWidthActive = 2;
  pi.linkSpeedSupported = 7;
  pi.portState = 4;
  pi.portPhysState = 5;
  pi.lmc = 1;
  pi.linkSpeedActive = 4;
  pi.linkSpeedEnabled = 7;
  pi.neighborMtu = 5;
  pi.vlCap = 4;
  pi.mtuCap = 5;
  pi.operVls = 4;
  pi.capabilityMask2 = 0x0034;
  pi.linkSpeedExtActive = 4;
  pi.linkSpeedExtSupported = 7;
  pi.linkSpeedExtEnabled = 7;
  MadBuffer mad = buildPortInfoGet(7);
  encodePortInfo(mad, pi);
  EXPECT_EQ(decodePortInfo(mad), pi);
  EXPECT_EQ(field(mad, IB_SMP_DATA_OFFS, IB_PORT_LID_F), 0x1234u);
  EXPECT_EQ(field(mad, IB_SMP_DATA_OFFS, IB_PORT_STATE_F), 4u);

  SwitchInfo si;
  si.linearFdbCap = 49152;
  si.randomFdbCap = 0;
  si.multicastFdbCap = 4096;
  si.linearFdbTop = 300;
  si.defaultPort = 0;
  si.lifeTimeValue = 18;
  si.portStateChange = 1;
  si.lidsPerPort = 0;
  si.partitionEnforcementCap = 32;
  si.enhancedPort0 = 1;
  si.multicastFdbTop = 0xc000;
  MadBuffer sw = buildSwitchInfoGet();
  encodeSwitchInfo(sw, si);
  EXPECT_EQ(decodeSwitchInfo(sw), si);
  EXPECT_EQ(field(sw, IB_SMP_DATA_OFFS, IB_SW_LINEAR_FDB_TOP_F), 300u);
}

TEST(MadCodecTest, NodeInfoRoundTripAtTheSpecOffsets) {
  NodeInfo ni;
  ni.baseVersion = 1;
  ni.classVersion = 1;
  ni.nodeType = 1;
  ni.numPorts = 2;
  ni.systemImageGuid = 0x0002c90300a1b2c3ull;
  ni.nodeGuid = 0x0000000000100040ull;
  ni.portGuid = 0x0000000000100041ull;
  ni.partitionCap = 64;
  ni.deviceId = 0x1017;
  ni.revision = 0xa0;
  ni.localPortNum = 1;
  ni.vendorId = 0x02c9;
  MadBuffer mad = buildNodeInfoGet();
  EXPECT_EQ(decodeHeader(mad).attributeId, 0x0011);
  encodeNodeInfo(mad, ni);
  EXPECT_EQ(decodeNodeInfo(mad), ni);
  // IBA 14.2.5.3: NodeGUID at byte 12, PortGUID at 20, LocalPortNum at 36, VendorID in 37–39.
  const std::uint8_t* data = mad.data() + IB_SMP_DATA_OFFS;
  EXPECT_EQ(data[12 + 7], 0x40);
  EXPECT_EQ(data[20 + 7], 0x41);
  EXPECT_EQ(data[36], 1);
  EXPECT_EQ(data[39], 0xc9);
  EXPECT_EQ(field(mad, IB_SMP_DATA_OFFS, IB_NODE_VENDORID_F), 0x02c9u);
}

TEST(MadCodecTest, LinearForwardingBlockRoundTrip) {
  LinearForwardingBlock b;
  b.block = 2;
  for (int i = 0; i < 64; ++i) b.ports[i] = static_cast<std::uint8_t>(i % 3 == 0 ? 0xFF : i);
  MadBuffer mad = buildLinearForwardingTableGet(2);
  encodeLinearForwardingBlock(mad, b);
  EXPECT_EQ(decodeLinearForwardingBlock(mad), b);
  // Entry i is byte i of the SMP data.
  EXPECT_EQ(mad[IB_SMP_DATA_OFFS + 0], 0xFF);
  EXPECT_EQ(mad[IB_SMP_DATA_OFFS + 1], 1);
  EXPECT_EQ(mad[IB_SMP_DATA_OFFS + 63], 0xFF);
}

}  // namespace
}  // namespace ibfabric::mad
