// gzip (RFC 1952) compression of /metrics. Pure function; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace ibfabric::api {

/// gzip of `data` at zlib level `level`, one member; empty on failure. Members concatenated
/// form one valid gzip stream (RFC 1952 section 2.2).
std::string gzipCompress(std::string_view data, int level = 1);

}  // namespace ibfabric::api
