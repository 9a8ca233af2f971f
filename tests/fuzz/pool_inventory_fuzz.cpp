// Fuzz target: the GPU pool's inventory (scheduler_hooks/pool/inventory.h, config
// `pool: {inventory: FILE}`), a JSON document of hosts and GPUs, read as loadInventoryFile()
// reads it.
//
// Any text: not JSON is refused, JSON gives hosts or InventoryError; every host it accepts (the
// first 16) writes back to JSON (toJson) that reads back to the same host (hostFromRecord: the
// journal and the snapshot store hosts that way).
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "discovery/hostlist.h"
#include "scheduler_hooks/pool/inventory.h"
#include "scheduler_hooks/pool/json_codecs.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ibfabric;
using nlohmann::json;

namespace {

constexpr std::size_t kHostsChecked = 16;
/// Inventories of more hosts are skipped: under ASan a 100,000-host list (the loader's limit)
/// takes longer than the 10 s an input may take; the release build loads 11,029 hosts in 0.17 s.
constexpr std::size_t kMaxHosts = 2000;

/// More than kMaxHosts hosts, or a host list expandHostlist() refuses with that limit (the
/// refusal itself is reached here; the loader would only word it again).
bool tooManyHosts(const json& j) {
  if (!j.is_object() || !j.contains("hosts") || !j["hosts"].is_array()) return false;
  std::size_t total = 0;
  for (const auto& h : j["hosts"]) {
    if (!h.is_object() || !h.contains("name") || !h["name"].is_string()) continue;
    try {
      total += expandHostlist(h["name"].get<std::string>(), kMaxHosts).size();
    } catch (const std::invalid_argument&) {
      return true;
    }
    if (total > kMaxHosts) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const json j = json::parse(fuzz::asText(data, size), nullptr, false);
  if (j.is_discarded() || tooManyHosts(j)) return 0;
  std::vector<scheduler_hooks::PoolHost> hosts;
  try {
    hosts = scheduler_hooks::inventoryFromJson(j);
  } catch (const scheduler_hooks::InventoryError&) {
    return 0;
  }
  // A host list of thousands of hosts is one template: checking its first hosts is enough.
  if (hosts.size() > kHostsChecked) hosts.resize(kHostsChecked);
  for (const auto& h : hosts) {
    const auto back = scheduler_hooks::pool_impl::hostFromRecord(scheduler_hooks::toJson(h));
    if (!(back == h)) {
      std::fprintf(stderr, "inventory host %s does not read back equal\n", h.name.c_str());
      std::abort();
    }
  }
  return 0;
}
