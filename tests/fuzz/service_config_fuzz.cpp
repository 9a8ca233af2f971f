// Fuzz target: the daemon's YAML configuration (api/daemon/service_config.h), as ibfabricd
// reads it at start, on SIGHUP and for --check-config.
//
// Any text: loadConfigText() returns a configuration or throws ConfigError; nothing else may
// leave it (yaml-cpp's own exceptions included), since a reload catches ConfigError only.
#include "api/daemon/service_config.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ibfabric;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  try {
    const api::ServiceConfig config = api::loadConfigText(fuzz::asText(data, size));
    config.validate();
  } catch (const api::ConfigError&) {
  }
  return 0;
}
