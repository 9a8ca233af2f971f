#include "routing/drained_model.h"

#include "routing/shortest_path_reroute.h"

namespace ibfabric::routing {

DrainedModel drainedModel(const PlacementEngine& now, const DrainSet& drain,
                          const DrainImpact& impact, PlacementLimits limits) {
  const PlacementIndex& index = now.index();
  DrainedModel out;
  out.linkOut = linksOutOfService(index.topology(), drain);
  out.destinationsRerouted = impact.reroute.size();
  ForwardingTablesPtr tables = rerouteShortestPaths(index.tables(), impact.reroute, drain);
  auto load = std::make_shared<LinkLoadModel>(now.load());
  for (std::uint32_t l = 0; l < out.linkOut.size(); ++l)
    if (out.linkOut[l]) load->setHealth(l, telemetry::LinkState::kDown);
  auto drainedIndex =
      std::make_shared<const PlacementIndex>(index.topologyPtr(), std::move(tables));
  out.engine =
      std::make_shared<const PlacementEngine>(std::move(drainedIndex), std::move(load), limits);
  return out;
}

}  // namespace ibfabric::routing
