// gunzip for tests of served pages: one gzip member or several concatenated (RFC 1952), as
// /metrics sends them. Thread-safe (no shared state).
#pragma once

#include <string>

namespace ibfabric::testing {

/// `data` decompressed; a bad stream is a non-fatal test failure (the output so far is returned).
std::string gunzip(const std::string& data);

}  // namespace ibfabric::testing
