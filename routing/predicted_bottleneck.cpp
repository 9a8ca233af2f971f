#include "routing/predicted_bottleneck.h"

namespace ibfabric::routing {

std::optional<double> predictedBottleneck(const PlacementEngine& engine,
                                          const std::vector<std::string>& hostsInRankOrder,
                                          CommPattern pattern) {
  try {
    return engine.score(hostsInRankOrder, pattern).bottleneckBytesPerSecond;
  } catch (const PlacementError&) {
    return std::nullopt;  // a host the fabric no longer has
  }
}

}  // namespace ibfabric::routing
