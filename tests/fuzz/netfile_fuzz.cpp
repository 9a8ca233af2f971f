// Fuzz target: the ibnetdiscover / ibsim net-file parser (discovery/netfile.h) and what the
// daemon and the CLI do with a parsed file (discovery/net_topology.h).
//
// Any text: parseNetText() returns a fabric or throws NetFileError, nothing else. A fabric it
// accepts must (1) write back with formatNetFile() into text that parses to an equal fabric
// (the writer's promise), (2) become a Topology or be refused with std::invalid_argument, and
// (3) that Topology must turn back into a net fabric.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "discovery/net_topology.h"
#include "discovery/netfile.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ibfabric;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  NetFabric fabric;
  try {
    fabric = parseNetText(fuzz::asText(data, size), "fuzz.net");
  } catch (const NetFileError&) {
    return 0;
  }
  const std::string written = formatNetFile(fabric);
  NetFabric again;
  try {
    again = parseNetText(written, "rewritten.net");
  } catch (const NetFileError& e) {
    std::fprintf(stderr, "formatNetFile wrote a file parseNetText refuses: %s\n%s\n", e.what(),
                 written.c_str());
    std::abort();
  }
  if (!(again == fabric)) {
    std::fprintf(stderr, "formatNetFile does not read back equal:\n%s\n", written.c_str());
    std::abort();
  }
  try {
    const TopologyPtr topology = topologyFromNetFabric(fabric);
    (void)netFabricFromTopology(*topology);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
