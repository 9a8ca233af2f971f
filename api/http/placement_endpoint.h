// POST /api/v1/placement: the placement engine behind the daemon's state, its JSON forms and its
// metrics (ibfabric_placement_requests_total{result}, ibfabric_placement_duration_seconds).
//
// PlacementService keeps, per ServiceState snapshot, one PlacementEngine: the PlacementIndex is
// rebuilt only when the (topology, forwarding tables) pair changes, the LinkLoadModel only when
// a new sweep arrived: each sweep's rates are folded into the moving average of the previous
// model (the sweeps this service saw: a sweep between two requests that nobody asked about is
// skipped, its successor still counts). Thread-safe: any number of request threads may call
// place() at once.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "api/service/fabric_service.h"
#include "routing/placement_engine.h"

namespace httplib {
class Server;
}

namespace ibfabric::api {

/// The request body -> PlacementRequest. Throws routing::PlacementError(kInvalidRequest) naming
/// the field on unknown fields, wrong types or values. `candidates` and `exclude` take a JSON
/// array of names or one Slurm host list string ("dgx[0001-0004]").
routing::PlacementRequest placementRequestFromJson(const nlohmann::json& body);
nlohmann::json placementRequestToJson(const routing::PlacementRequest& request);
nlohmann::json placementAnswerToJson(const routing::PlacementAnswer& answer);
/// The inverse of placementAnswerToJson (for the CLI talking to a daemon). Throws
/// std::invalid_argument on a body of another shape.
routing::PlacementAnswer placementAnswerFromJson(const nlohmann::json& body);

class PlacementService {
 public:
  explicit PlacementService(FabricService& service);
  /// Throws routing::PlacementError (kNotReady without topology, sweep or forwarding tables).
  routing::PlacementAnswer place(const routing::PlacementRequest& request);
  /// The engine for the current state (built on first use per state).
  std::shared_ptr<const routing::PlacementEngine> engine();

 private:
  FabricService& service_;
  std::mutex mu_;
  std::weak_ptr<const ServiceState> state_;
  std::shared_ptr<const routing::PlacementEngine> engine_;
  routing::PlacementIndexPtr index_;
  telemetry::CounterSnapshotPtr loadCounters_;
  std::shared_ptr<const routing::LinkLoadModel> load_;
};

/// Registers POST /api/v1/placement on `server`; the service must outlive it.
void registerPlacementRoutes(httplib::Server& server, FabricService& service);

/// Process-wide placement metrics in Prometheus text format (appended to /metrics).
std::string renderPlacementMetrics();
/// Records one request (used by the route; exposed for tests).
void recordPlacementRequest(std::string_view result, double seconds);

}  // namespace ibfabric::api
