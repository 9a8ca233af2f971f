#include "api/metrics/collectors.h"

namespace ibfabric::api {

std::vector<CollectorPtr> stateCollectors() {
  std::vector<CollectorPtr> c;
  c.push_back(daemonCollector());
  c.push_back(haCollector());
  c.push_back(subnetCollector());
  c.push_back(topologyCollector());
  c.push_back(madCollector());
  c.push_back(eventCollector());
  c.push_back(storeCollector());
  c.push_back(routingCollector());
  c.push_back(lftCollector());
  c.push_back(osmCollector());
  c.push_back(smTrapCollector());
  c.push_back(portCollector());
  c.push_back(linkCollector());
  return c;
}

std::vector<CollectorPtr> liveCollectors(const DaemonServices& services) {
  std::vector<CollectorPtr> c;
  c.push_back(processCollector());
  c.push_back(placementCollector(services.placement));
  if (services.pool) c.push_back(poolCollector(*services.pool));
  if (services.jobs) c.push_back(jobCollector(*services.jobs));
  return c;
}

}  // namespace ibfabric::api
