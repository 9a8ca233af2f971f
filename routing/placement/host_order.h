// Host ids and rank orders: how the placement engine's internals name hosts and host sets.
//
// A HostId is an index into PlacementIndex::hosts(); an Order is a host set in rank order (rank i
// is order[i]). Plain values: copy them freely, from any thread.
#pragma once

#include <cstdint>
#include <vector>

namespace ibfabric::routing::placement {

using HostId = std::uint32_t;
using Order = std::vector<HostId>;

}  // namespace ibfabric::routing::placement
