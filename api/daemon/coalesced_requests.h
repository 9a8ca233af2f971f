// CoalescedRequests: what OpenSM events and SM traps ask of the FabricService (a switch's
// re-probe, a crawl, a forwarding-table refresh, the pending re-probes), each through one
// RequestCoalescer (api/osm/request_coalescer.h) shared by the OpenSM socket (osm_wiring.h) and
// the SA trap subscription (trap_wiring.h): a storm of traps becomes one probe per switch and one
// crawl / refresh per burst (plus one per `maxWait` while it lasts), logged once per run.
//
// A trap naming a LID no known switch has asks for a crawl here, not for a probe that would
// fall back to one (so such a storm is one crawl, not one per trap).
//
// Thread-safe (the coalescer is; the service's requests are).
#pragma once

#include <string>

#include "api/osm/request_coalescer.h"
#include "api/service/fabric_service.h"

namespace ibfabric::api {

class CoalescedRequests {
 public:
  CoalescedRequests(FabricService& service, RequestCoalescer& coalescer)
      : service_(service), coalescer_(coalescer) {}

  /// Re-probe the switch with this LID (`source` names the trap in the log line).
  void probeSwitch(Lid lid, const std::string& source);
  void crawl(const std::string& why);
  void routeRefresh(const std::string& reason);
  void pendingProbes();

 private:
  FabricService& service_;
  RequestCoalescer& coalescer_;
};

/// The daemon's coalescer: 1 s quiet, 5 s longest wait; its counts go to the service's state.
RequestCoalescer::Options daemonCoalescing(FabricService& service);

}  // namespace ibfabric::api
