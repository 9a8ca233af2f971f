// The SM's traps without the OpenSM plugin: a TrapSubscription (telemetry/trap_subscription.h)
// on a umad port of its own — a MAD proxy child `ibfabricd --mad-proxy --sa` by default, the
// daemon's process with mad_transport: inprocess — and what the daemon does with each Report:
//
//   trap 128 (PortStateChange)  re-probe that switch's ports (FabricService::requestPortProbe;
//                               a change the probe cannot place asks for a crawl)
//   trap 64  (GidInService)     a port the model does not know: a crawl; a known CA port: the
//                               probe of the switch its cable goes to
//   trap 65  (GidOutOfService)  a known CA port: the probe of the switch its cable goes to
//   trap 144 (LocalChanges)     counted only (capabilities or node description)
//
// With the plugin the same traps arrive through it as well; both go through one
// CoalescedRequests (coalesced_requests.h), so a probe asked twice runs once and a storm of
// traps a bounded number of times.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/daemon/coalesced_requests.h"
#include "api/service/fabric_service.h"
#include "telemetry/sa_attributes.h"
#include "telemetry/trap_subscription.h"

namespace ibfabric::api {

/// What to do with each Notice. Called on the subscription's thread.
class TrapDispatcher {
 public:
  TrapDispatcher(FabricService& service, CoalescedRequests& requests)
      : service_(service), requests_(requests) {}
  void operator()(const mad::Notice& notice);

 private:
  FabricService& service_;
  CoalescedRequests& requests_;
};

/// Creates and starts the subscription. `proxyArgv` non-empty: its port in that MAD proxy child
/// (the argv of `ibfabricd --mad-proxy`, to which --sa is added); else a UmadTransport on
/// `ca`/`caPort` in this process.
std::unique_ptr<mad::TrapSubscription> startTrapSubscription(FabricService& service,
                                                             CoalescedRequests& requests,
                                                             std::vector<std::string> proxyArgv,
                                                             const std::string& ca, int caPort);

}  // namespace ibfabric::api
