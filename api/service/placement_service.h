// PlacementService: the daemon's one placement engine. REST (POST /api/v1/placement), the
// kube-scheduler extender and the GPU pool all rank through the same instance, so one request
// gets one ranking everywhere.
//
// Per ServiceState snapshot it keeps one routing::PlacementEngine: the PlacementIndex is rebuilt
// only when the (topology, forwarding tables) pair changes; the link load is the state's own
// model (ServiceState::linkLoad, folded at every sweep by the service), so the ranking depends on
// the state alone, never on which sweeps a reader happened to see. It also counts the requests
// it answered by result and their duration (PlacementStats, read by the metrics collector).
//
// Owned by the daemon's main (one per FabricService, which must outlive it). Thread-safe: any
// number of request threads may call place(), engine() and stats() at once.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

#include "api/service/fabric_service.h"
#include "routing/placement_engine.h"

namespace ibfabric::api {

/// Requests answered by result, and a duration histogram; a plain value (a copy of the counts).
struct PlacementStats {
  static constexpr std::array<std::string_view, 5> kResults = {"ok", "invalid", "unsatisfiable",
                                                               "not_ready", "error"};
  static constexpr std::array<double, 12> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,   0.1,   0.25,   0.5,   1.0,  2.5};
  std::array<std::uint64_t, kResults.size()> requests{};  ///< by kResults index
  std::array<std::uint64_t, kBuckets.size()> buckets{};   ///< cumulative: seconds <= bound
  std::uint64_t count = 0;
  double sumSeconds = 0.0;
};

/// The result label of a placement error ("invalid", "unsatisfiable", "not_ready").
std::string_view placementResultOf(routing::PlacementError::Kind kind);

class PlacementService {
 public:
  explicit PlacementService(FabricService& service);
  PlacementService(const PlacementService&) = delete;
  PlacementService& operator=(const PlacementService&) = delete;

  /// Throws routing::PlacementError (kNotReady without topology, sweep or forwarding tables).
  routing::PlacementAnswer place(const routing::PlacementRequest& request);
  /// The engine for the current state (built on first use per state).
  std::shared_ptr<const routing::PlacementEngine> engine();

  /// Records one answered request; `result` is one of PlacementStats::kResults.
  void record(std::string_view result, double seconds);
  PlacementStats stats() const;

 private:
  FabricService& service_;
  std::mutex mu_;
  std::weak_ptr<const ServiceState> state_;
  std::shared_ptr<const routing::PlacementEngine> engine_;
  routing::PlacementIndexPtr index_;
  mutable std::mutex statsMu_;
  PlacementStats stats_;
};

}  // namespace ibfabric::api
