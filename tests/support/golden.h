// Golden-file comparison for text outputs (metrics pages, topology.conf, kubectl lines).
//
// expectGolden("golden/x.conf", text) compares `text` with tests/data/golden/x.conf byte for
// byte. After an intended change, run the tests with IBFABRIC_UPDATE_GOLDEN=1: each golden test
// then rewrites its file and is reported as skipped with the path it rewrote, so an update run
// never passes silently. Any other value of the variable fails the test.
//
// Thread-safe as far as gtest assertions are; two tests must not share a golden file.
#pragma once

#include <filesystem>
#include <string>

namespace ibfabric::testing {

inline constexpr const char* kUpdateGoldenVariable = "IBFABRIC_UPDATE_GOLDEN";

/// Compares `actual` with the file at `relative` under tests/data/, or rewrites the file (see
/// above). A missing file is a fatal failure of the calling helper, a difference a non-fatal one.
void expectGolden(const std::filesystem::path& relative, const std::string& actual);

}  // namespace ibfabric::testing
