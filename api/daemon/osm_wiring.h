// Connects an OsmEventListener to a FabricService: what the daemon does with each OpenSM event.
//
//   trap 128 (PortStateChange)      re-probe that switch's ports (FabricService::requestPortProbe;
//                                   a LID no known switch has: a crawl)
//   subnet_up / heavy_sweep_done    re-probe switches whose ports were still coming up
//   lft_change, ucast_routing_done  the forwarding-table refresh hook (requestRouteRefresh):
//                                   once per routing pass that changed LFT blocks (or was a
//                                   reroute), not once per block
//   state_change, hello             the SM state in the link status (/health "osm")
//   every event and link change     FabricService::setOsmLink (metrics, /health)
// Probes, crawls and refreshes go through CoalescedRequests (coalesced_requests.h): a storm of
// events becomes a bounded number of each.
#pragma once

#include <filesystem>
#include <memory>

#include "api/daemon/coalesced_requests.h"
#include "api/osm/osm_events.h"
#include "api/service/fabric_service.h"

namespace ibfabric::api {

/// What to do with each event. Used from the listener thread only.
class OsmEventDispatcher {
 public:
  explicit OsmEventDispatcher(CoalescedRequests& requests) : requests_(requests) {}
  void operator()(const OsmEvent& event);

 private:
  CoalescedRequests& requests_;
  std::uint64_t lftChanges_ = 0;  // LFT_CHANGE events since the last routing pass ended
};

/// Creates and starts the listener; throws OsmEventError when the socket cannot be bound.
std::unique_ptr<OsmEventListener> startOsmEventListener(const std::filesystem::path& socket,
                                                        FabricService& service,
                                                        CoalescedRequests& requests);

}  // namespace ibfabric::api
