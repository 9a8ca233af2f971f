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
#include <string>

#include "discovery/net_topology.h"
#include "discovery/netfile.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ibfabric;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

namespace {

/// Where two fabrics first differ: "node ID: field" (for the report of a finding).
std::string firstDifference(const NetFabric& a, const NetFabric& b) {
  if (a.nodes.size() != b.nodes.size()) return "node count";
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const NetNode& x = a.nodes[i];
    const NetNode& y = b.nodes[i];
    const std::string at = "node " + x.id + ": ";
    if (x.id != y.id) return at + "id (" + y.id + ")";
    if (x.type != y.type || x.numPorts != y.numPorts) return at + "type or port count";
    if (x.desc != y.desc) return at + "desc [" + x.desc + "] -> [" + y.desc + "]";
    if (x.guid != y.guid || x.sysImageGuid != y.sysImageGuid) return at + "GUIDs";
    if (x.vendorId != y.vendorId || x.deviceId != y.deviceId) return at + "vendor/device";
    if (x.lid != y.lid || x.enhancedPort0 != y.enhancedPort0) return at + "lid or port 0";
    if (x.ports.size() != y.ports.size()) return at + "port lines";
    for (std::size_t p = 0; p < x.ports.size(); ++p) {
      const NetPort& u = x.ports[p];
      const NetPort& v = y.ports[p];
      if (u == v) continue;
      const std::string port = at + "port " + std::to_string(u.port.value()) + ": ";
      if (u.remoteDesc != v.remoteDesc)
        return port + "remote desc [" + u.remoteDesc + "] -> [" + v.remoteDesc + "]";
      if (u.rate != v.rate) return port + "rate";
      return port + "remote, GUIDs or LIDs";
    }
  }
  return "nothing visible";
}

}  // namespace

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
    std::fprintf(stderr, "formatNetFile does not read back equal (%s):\n%s\n",
                 firstDifference(fabric, again).c_str(), written.c_str());
    std::abort();
  }
  try {
    const TopologyPtr topology = topologyFromNetFabric(fabric);
    (void)netFabricFromTopology(*topology);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
