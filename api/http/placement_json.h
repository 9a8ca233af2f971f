// The JSON forms of a placement request and answer (docs/api.md, POST /api/v1/placement), shared
// by the REST route and the CLI talking to a daemon. Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "routing/placement.h"

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

}  // namespace ibfabric::api
