// RestFixture: the daemon's REST server, on the fakes of tests/fakes, served from memory
// (MemoryServer) for the REST fuzz targets.
//
// A FabricService over a fixed topology source that always answers the same two-level fat tree (2
// leaves, 2 spines, 4 hosts, sequential LIDs) and FakeCounterSources serving shortest-path
// forwarding tables (so routes and placement answer), the daemon's one PlacementService, a
// PoolService with an in-memory pool of the four hosts (8 GPUs each) and the RestServer with
// every route, the bearer token kToken and the default body limits. Long-polls are capped at
// zero seconds and counter clears at 200 ms so no input can keep a request waiting.
//
// Created once per fuzzing process (instance()) and stopped at exit (before the libraries'
// statics go, while the fuzzer exits normally); the state the write routes change (pool hosts
// and allocations, forgotten nodes) carries over from input to input. reset() starts the pool
// and the server over, so a long run cannot grow the pool without bound.
// Not thread-safe: the fuzzer's thread calls it (the service runs its own threads).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ibfabric::fuzz {

class RestFixture {
 public:
  static constexpr std::string_view kToken = "fuzz-token";
  /// Requests served before the pool and the server are made anew.
  static constexpr int kRequestsPerReset = 4096;

  static RestFixture& instance();

  /// Serves the requests in `bytes`; aborts (a fuzzer finding) when one is answered 500, which
  /// only an exception escaping a handler produces. Returns the answers. With
  /// IBFABRIC_FUZZ_TRACE set, each answer's start goes to stderr.
  std::vector<std::string> serve(std::string_view bytes);

  ~RestFixture();
  RestFixture(const RestFixture&) = delete;
  RestFixture& operator=(const RestFixture&) = delete;

 private:
  RestFixture();
  void reset();

  struct Parts;
  std::unique_ptr<Parts> parts_;
  int served_ = 0;
};

}  // namespace ibfabric::fuzz
