#include "api/daemon/osm_wiring.h"

#include <spdlog/spdlog.h>

namespace ibfabric::api {

void OsmEventDispatcher::operator()(const OsmEvent& event) {
  switch (event.type) {
    case OsmEventType::kTrap:
      if (event.trapNumber == 128)
        requests_.probeSwitch(event.trapSwitchLid(), "osm events: trap 128 (port state change)");
      break;
    case OsmEventType::kSubnetUp:
    case OsmEventType::kHeavySweepDone:
      requests_.pendingProbes();
      break;
    case OsmEventType::kUcastRoutingDone:
      if (lftChanges_ > 0 || event.reason == "reroute")
        requests_.routeRefresh(event.reason + ": " + std::to_string(lftChanges_) +
                               " LFT change(s)");
      lftChanges_ = 0;
      break;
    case OsmEventType::kLftChange:
      ++lftChanges_;  // arrive per block in bursts; acted on when the routing pass ends
      break;
    case OsmEventType::kStateChange:
      spdlog::info("osm events: subnet manager state {}", event.smState);
      break;
    case OsmEventType::kHello:
      spdlog::info("osm events: plugin {} on {} (SM {})", event.pluginVersion, event.osmVersion,
                   event.smState);
      break;
    case OsmEventType::kPortErrors:
      break;
  }
}

std::unique_ptr<OsmEventListener> startOsmEventListener(const std::filesystem::path& socket,
                                                        FabricService& service,
                                                        CoalescedRequests& requests) {
  auto listener = std::make_unique<OsmEventListener>(
      socket, OsmEventDispatcher(requests),
      [&service](const OsmLinkStatus& s) { service.setOsmLink(s); });
  listener->start();
  return listener;
}

}  // namespace ibfabric::api
