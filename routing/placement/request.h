// The placement request, checked: how many hosts it wants, and whether its numbers make sense.
//
// (The CommPattern names of placement.h are defined in request.cpp too.) Pure functions: usable
// from any thread.
#pragma once

#include <cstddef>

#include "routing/placement.h"

namespace ibfabric::routing::placement {

/// The hosts `request` wants: `hosts`, or gpus / gpus per host rounded up. Throws
/// PlacementError(kInvalidRequest) for negative numbers, neither hosts nor gpus, gpus without
/// gpus per host, or alternatives outside 1..16.
std::size_t hostsWanted(const PlacementRequest& request);

}  // namespace ibfabric::routing::placement
