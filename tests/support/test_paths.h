// Paths of the binaries and data the tests use, baked in by CMake.
#pragma once

#include <filesystem>

namespace ibfabric::testing {

inline std::filesystem::path cliPath() { return IBFABRIC_CLI_PATH; }
inline std::filesystem::path daemonPath() { return IBFABRIC_DAEMON_PATH; }
inline std::filesystem::path sourceDir() { return IBFABRIC_SOURCE_DIR; }
inline std::filesystem::path testDataDir() { return IBFABRIC_TEST_DATA_DIR; }

}  // namespace ibfabric::testing
