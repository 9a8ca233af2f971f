// Fuzz target: the MAD reply decoders (telemetry/mad_packet.h, pma_attributes.h,
// smp_attributes.h, sa_attributes.h): what a fabric (a faulty HCA, switch or SM) answers, read
// by the counter sweeps, the crawl probes, the forwarding-table reads and the trap subscription.
//
// The input fills a 256-byte MAD (zero-padded, longer input cut); every decoder reads it. They
// read fixed fields of a fixed buffer: memory errors and undefined behaviour (shifts, overflowing
// conversions) are the findings.
#include <algorithm>
#include <cstring>

#include "telemetry/mad_packet.h"
#include "telemetry/pma_attributes.h"
#include "telemetry/sa_attributes.h"
#include "telemetry/smp_attributes.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ibfabric;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  mad::MadBuffer buf{};
  std::memcpy(buf.data(), data, std::min(size, buf.size()));
  (void)mad::decodeHeader(buf);
  (void)mad::decodeClassPortInfo(buf);
  (void)mad::decodePortCounters(buf);
  (void)mad::decodePortCountersExtended(buf);
  (void)mad::decodePortSamplesControl(buf);
  (void)mad::decodePortInfo(buf);
  (void)mad::decodeSwitchInfo(buf);
  (void)mad::decodeLinearForwardingBlock(buf);
  (void)mad::decodeInformInfo(buf);
  (void)mad::decodeReportNotice(buf);
  if (mad::isDirectedRoute(buf)) (void)mad::directedPathOf(buf).toString();
  return 0;
}
