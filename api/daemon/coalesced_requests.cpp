// CoalescedRequests: the service's trap-driven requests, keyed for the coalescer.
#include "api/daemon/coalesced_requests.h"

#include <spdlog/spdlog.h>

namespace ibfabric::api {
namespace {

bool knownSwitch(const FabricService& service, Lid lid) {
  const auto topology = service.state()->topology;
  if (!topology) return true;  // no model yet: the probe itself falls back to a crawl
  const auto ref = topology->findLid(lid);
  return ref && topology->node(ref->node).isSwitch();
}

}  // namespace

void CoalescedRequests::probeSwitch(Lid lid, const std::string& source) {
  if (lid.value() == 0) return crawl(source + " without a switch LID");
  if (!knownSwitch(service_, lid))
    return crawl(source + " from LID " + std::to_string(lid.value()) + ", no known switch");
  coalescer_.offer("probe of LID " + std::to_string(lid.value()), [this, lid, source] {
    spdlog::info("{} from switch LID {}: re-probing its ports", source, lid.value());
    service_.requestPortProbe(lid);
  });
}

void CoalescedRequests::crawl(const std::string& why) {
  coalescer_.offer("crawl", [this, why] {
    spdlog::info("{}: crawling", why);
    service_.requestCrawl();
  });
}

void CoalescedRequests::routeRefresh(const std::string& reason) {
  coalescer_.offer("route refresh", [this, reason] { service_.requestRouteRefresh(reason); });
}

void CoalescedRequests::pendingProbes() {
  coalescer_.offer("pending probes", [this] { service_.requestPendingProbes(); });
}

RequestCoalescer::Options daemonCoalescing(FabricService& service) {
  RequestCoalescer::Options o;
  o.onCounts = [&service](const CoalescingCounts& c) { service.setEventCoalescing(c); };
  return o;
}

}  // namespace ibfabric::api
