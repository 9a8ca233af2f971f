#include "api/daemon/version.h"

namespace ibfabric {
const char* versionString() { return "0.1.0"; }
}  // namespace ibfabric
