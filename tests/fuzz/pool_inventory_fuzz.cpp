// Fuzz target: the GPU pool's inventory (scheduler_hooks/pool/inventory.h, config
// `pool: {inventory: FILE}`), a JSON document of hosts and GPUs, read as loadInventoryFile()
// reads it.
//
// Any text: not JSON is refused, JSON gives hosts or InventoryError; every host it accepts
// writes back to JSON (toJson) that reads back to the same host (hostFromRecord: the journal and
// the snapshot store hosts that way).
#include <cstdio>
#include <cstdlib>

#include "scheduler_hooks/pool/inventory.h"
#include "scheduler_hooks/pool/json_codecs.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ibfabric;
using nlohmann::json;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const json j = json::parse(fuzz::asText(data, size), nullptr, false);
  if (j.is_discarded()) return 0;
  std::vector<scheduler_hooks::PoolHost> hosts;
  try {
    hosts = scheduler_hooks::inventoryFromJson(j);
  } catch (const scheduler_hooks::InventoryError&) {
    return 0;
  }
  for (const auto& h : hosts) {
    const auto back = scheduler_hooks::pool_impl::hostFromRecord(scheduler_hooks::toJson(h));
    if (!(back == h)) {
      std::fprintf(stderr, "inventory host %s does not read back equal\n", h.name.c_str());
      std::abort();
    }
  }
  return 0;
}
