// The link-load model as part of the service state: after every sweep the service folds that
// sweep's rates and link health into the previous model's moving average
// (routing::LinkLoadModel::fromSweep), so every reader of one ServiceState — REST placement, the
// kube-scheduler extender, the GPU pool — ranks with the same link load, whoever asked before.
// Pure functions; thread-safe.
#pragma once

#include <memory>

#include "api/service/service_state.h"
#include "routing/link_load.h"

namespace ibfabric::api {

/// The model after one more sweep: `sweep` (with its rates and health) folded into `previous`
/// (the last sweep's model, or null). Null when the sweep has no topology. Runs on the sweep
/// thread, outside the publish lock.
std::shared_ptr<const routing::LinkLoadModel> foldSweepIntoLinkLoad(
    const telemetry::CounterSnapshot& sweep, const telemetry::RatesTable& rates,
    const std::vector<telemetry::LinkHealthReport>& health, const routing::LinkLoadModel* previous);

/// `model` on `topology`: the same averages matched by transmitting port (no sweep is added),
/// for a reader whose topology snapshot is not the one the model was folded on. Returns
/// `model` itself when it is on `topology` already.
std::shared_ptr<const routing::LinkLoadModel> linkLoadOn(
    const TopologyPtr& topology, const std::shared_ptr<const routing::LinkLoadModel>& model,
    const ServiceState& s);

}  // namespace ibfabric::api
