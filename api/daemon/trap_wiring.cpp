#include "api/daemon/trap_wiring.h"

#include <spdlog/spdlog.h>

#include "telemetry/subprocess_mad_transport.h"
#include "telemetry/umad_transport.h"

namespace ibfabric::api {
namespace {

/// The LID of the switch at the other end of a known CA port's cable (zero: none known).
Lid switchOfCaPort(const Topology& t, Guid portGuid) {
  const auto ref = t.findPort(portGuid);
  if (!ref) return Lid{};
  const Node& n = t.node(ref->node);
  const Port* p = n.port(ref->port);
  if (!n.isCa() || !p || !p->remote) return Lid{};
  const Node& r = t.node(p->remote->node);
  return r.isSwitch() && !r.missing ? r.lid() : Lid{};
}

}  // namespace

void TrapDispatcher::operator()(const mad::Notice& notice) {
  const auto topology = service_.state()->topology;
  switch (notice.trapNumber) {
    case 128: {
      const Lid lid = notice.dataLid.value() != 0 ? notice.dataLid : notice.issuerLid;
      requests_.probeSwitch(lid, "sm trap 128 (port state change)");
      return;
    }
    case 64:
    case 65: {
      const Guid port = notice.portGuid();
      const bool known = topology && topology->findPort(port).has_value();
      const Lid sw = topology ? switchOfCaPort(*topology, port) : Lid{};
      const std::string what = "sm trap " + std::to_string(notice.trapNumber) + " (port " +
                               toString(port) + (notice.trapNumber == 64 ? " in" : " out of") +
                               " service" + (known ? ")" : ", not in the model)");
      if (sw.value() != 0)
        requests_.probeSwitch(sw, what);
      else if (notice.trapNumber == 64 && !known)
        requests_.crawl(what);
      return;
    }
    default:
      spdlog::debug("sm trap {} from LID {}", notice.trapNumber, notice.issuerLid.value());
  }
}

std::unique_ptr<mad::TrapSubscription> startTrapSubscription(FabricService& service,
                                                             CoalescedRequests& requests,
                                                             std::vector<std::string> proxyArgv,
                                                             const std::string& ca, int caPort) {
  mad::TrapSubscription::TransportFactory factory;
  if (!proxyArgv.empty()) {
    proxyArgv.push_back("--sa");
    factory = [argv = std::move(proxyArgv)]() -> mad::MadTransportPtr {
      mad::SubprocessMadTransport::Options o;
      o.argv = argv;
      return std::make_unique<mad::SubprocessMadTransport>(std::move(o));
    };
  } else {
    factory = [ca, caPort]() -> mad::MadTransportPtr {
      return std::make_unique<mad::UmadTransport>(
          mad::UmadTransport::Options{ca, caPort, {mad::MgmtClass::kSubnAdm}});
    };
  }
  static const mad::SteadyClock clock;
  auto sub = std::make_unique<mad::TrapSubscription>(
      std::move(factory), clock, [&service] { return Lid(service.state()->subnet.smLid); },
      TrapDispatcher(service, requests),
      [&service](const mad::TrapSubscriptionStatus& s) { service.setTrapSubscription(s); });
  service.setTrapSubscription({});  // enabled (the port opens on the subscription's thread)
  sub->start();
  return sub;
}

}  // namespace ibfabric::api
