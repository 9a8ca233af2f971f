// Build identity of ibfabric, shared by the daemon and the CLI.
#pragma once

namespace ibfabric {
const char* versionString();
}  // namespace ibfabric
