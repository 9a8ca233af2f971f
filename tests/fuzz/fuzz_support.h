// What the fuzz targets share: the small fabric several of them check their input against (the
// two-level fat tree of tests/fuzz/corpus/netfile/two-level.net: 2 leaves, 1 spine, 4 hosts;
// GUIDs as ibsim assigns them, switches 0x200000.., CAs 0x100000.. stepping by 2; built once per
// process), the input as text, and quiet logging.
#pragma once

#include <string_view>

#include "discovery/netfile.h"
#include "discovery/topology.h"

namespace ibfabric::fuzz {

const NetFabric& sampleNetFabric();
/// sampleNetFabric() as a crawl would see it (topologyAsCrawled).
const TopologyPtr& sampleTopology();

/// The fuzzer's bytes as text.
inline std::string_view asText(const unsigned char* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Every fuzz target's LLVMFuzzerInitialize: logging off (parsers warn about what they skip).
void quietLogs();

}  // namespace ibfabric::fuzz
