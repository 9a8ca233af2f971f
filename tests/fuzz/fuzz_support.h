// What the fuzz targets share: the small fabrics they check input against or serve (two-level
// fat trees as `ibfabric topo gen --preset two-level` makes them, GUIDs as ibsim assigns them —
// switches 0x200000.., CAs 0x100000.. stepping by 2 — but with switches of only the ports they
// cable, so that what is built from them per input stays small), the input as text, and quiet
// logging.
#pragma once

#include <string_view>

#include "discovery/netfile.h"
#include "discovery/topology.h"

namespace ibfabric::fuzz {

/// 2 leaves, `spines` spines, 2 hosts per leaf ("dgx0001".."dgx0004", one HCA each).
NetFabric smallTwoLevel(int spines);
/// smallTwoLevel(1), built once.
const NetFabric& sampleNetFabric();
/// sampleNetFabric() as a crawl would see it (topologyAsCrawled), built once.
const TopologyPtr& sampleTopology();

/// The fuzzer's bytes as text.
inline std::string_view asText(const unsigned char* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Every fuzz target's LLVMFuzzerInitialize: logging off (parsers warn about what they skip).
void quietLogs();

}  // namespace ibfabric::fuzz
