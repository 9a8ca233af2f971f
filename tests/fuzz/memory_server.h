// MemoryServer: the daemon's cpp-httplib server fed one connection's bytes from memory, for the
// REST fuzz targets. httplib's own request parser (request line, percent-decoding, query,
// headers, Content-Length and chunked bodies), its router, the daemon's pre-routing checks,
// error and exception handlers and every route handler run exactly as on a socket; only the
// socket is replaced by a buffer, so a request is served in microseconds, on the calling thread,
// deterministically.
//
// Not thread-safe: one fuzzer thread calls serve().
#pragma once

#include <httplib.h>

#include <string>
#include <string_view>
#include <vector>

namespace ibfabric::fuzz {

class MemoryServer final : public httplib::Server {
 public:
  /// Serves the requests in `bytes` (pipelined ones too, at most `maxRequests`) and returns
  /// what the server wrote back for each, in order.
  std::vector<std::string> serve(std::string_view bytes, int maxRequests = 4);
};

/// The status code of an answer ("HTTP/1.1 404 ..."), 0 when it has none.
int answerStatus(std::string_view answer);

}  // namespace ibfabric::fuzz
