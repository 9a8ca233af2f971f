// Fuzz target: the node-name map parser (discovery/node_name_map.h) and the path its names take
// in the daemon: applied to a crawl's descriptions, written by the crawl child as the topology
// JSON (writeJson) and read back by the daemon (topologyFromJsonText).
//
// Any text parses (bad lines become problems). Whatever names it gives the sample fabric's nodes,
// the crawl must serialize and load back: a name must never break a crawl.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "discovery/formats.h"
#include "discovery/node_name_map.h"
#include "discovery/topology_compare.h"
#include "discovery/topology_json.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ibfabric;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  auto map =
      std::make_shared<const NodeNameMap>(NodeNameMap::parse(fuzz::asText(data, size), "fuzz.map"));
  for (const auto& p : map->problems()) (void)p.message.size();
  if (map->size() == 0) return 0;
  const TopologyPtr crawled = topologyAsCrawled(fuzz::sampleNetFabric(), map);
  std::string json;
  try {
    writeJson(*crawled, [&](std::string_view piece) { json.append(piece); });
    const TopologyPtr back = topologyFromJsonText(json);
    if (back->nodes().size() != crawled->nodes().size()) {
      std::fprintf(stderr, "the crawl JSON lost nodes\n");
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "a mapped name broke the crawl JSON: %s\n", e.what());
    std::abort();
  }
  return 0;
}
