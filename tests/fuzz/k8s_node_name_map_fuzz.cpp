// Fuzz target: the Kubernetes node-name map (scheduler_hooks/k8s_node_name_map.h, config
// `k8s_node_name_map:`): any text parses (bad lines are reported and skipped) and its lookups
// answer.
#include "scheduler_hooks/k8s_node_name_map.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ibfabric;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const auto map = scheduler_hooks::K8sNodeNameMap::parse(fuzz::asText(data, size), "fuzz.map");
  for (const char* host : {"dgx0001", "dgx0002", "", "DGX0001"}) (void)map.find(host);
  return 0;
}
