#include "api/service/link_load_fold.h"

namespace ibfabric::api {

std::shared_ptr<const routing::LinkLoadModel> foldSweepIntoLinkLoad(
    const telemetry::CounterSnapshot& sweep, const telemetry::RatesTable& rates,
    const std::vector<telemetry::LinkHealthReport>& health,
    const routing::LinkLoadModel* previous) {
  if (!sweep.topology) return nullptr;
  return std::make_shared<const routing::LinkLoadModel>(
      routing::LinkLoadModel::fromSweep(sweep.topology, &rates, &health, previous));
}

std::shared_ptr<const routing::LinkLoadModel> linkLoadOn(
    const TopologyPtr& topology, const std::shared_ptr<const routing::LinkLoadModel>& model,
    const ServiceState& s) {
  if (!model || model->topology() == topology) return model;
  // No rates: every direction keeps its average; the health reports are matched by port.
  return std::make_shared<const routing::LinkLoadModel>(
      routing::LinkLoadModel::fromSweep(topology, nullptr, s.health.get(), model.get()));
}

}  // namespace ibfabric::api
