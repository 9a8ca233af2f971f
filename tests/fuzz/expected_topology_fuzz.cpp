// Fuzz target: the expected topology (api/service/expected_topology.h, config
// `expected_topology:`): a net file or a discovery JSON document ("ibfabric.topology/1", so
// discovery/topology_json.h's loader too), then the comparison the daemon runs after every crawl
// (topology_compare.h) against the sample fabric and the node_missing / node_returned events.
//
// Any text: parseExpectedTopology() returns or throws std::runtime_error; a topology it accepts
// compares with any crawl without throwing.
#include <stdexcept>

#include "api/service/expected_topology.h"
#include "telemetry/event_log.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ibfabric;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  api::ExpectedTopologyPtr expected;
  try {
    expected = api::parseExpectedTopology(fuzz::asText(data, size), "fuzz-expected");
  } catch (const std::runtime_error&) {
    return 0;
  }
  const auto first = api::compareWithExpected(*expected, *fuzz::sampleTopology());
  const auto second = api::compareWithExpected(*expected, *fuzz::sampleTopology());
  telemetry::EventLog log(64);
  api::appendPresenceEvents(log, nullptr, *first);
  api::appendPresenceEvents(log, first.get(), *second);
  return 0;
}
