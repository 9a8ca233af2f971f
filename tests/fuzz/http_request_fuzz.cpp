// Fuzz target: the daemon's REST surface from the request bytes up: one connection's bytes
// (request line, path, query, headers, body; pipelined requests too) served by the daemon's
// RestServer with every route (tests/fuzz/rest_fixture.h: the fakes of tests/fakes, a pool,
// the bearer token "fuzz-token").
//
// Why the router and not the parsing functions alone: the path and query handling is spread
// over httplib's decoding, the routes' patterns, the pre-routing checks (body limits, encodings,
// auth) and each handler's use of request_params.h; dispatching the request reaches all of it
// as the daemon runs it, in memory and at tens of thousands of requests a second.
//
// Any bytes: every request is answered, never with 500 (an exception escaping a handler), and
// nothing crashes.
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/rest_fixture.h"

using namespace ibfabric;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  (void)fuzz::RestFixture::instance();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  (void)fuzz::RestFixture::instance().serve(fuzz::asText(data, size));
  return 0;
}
