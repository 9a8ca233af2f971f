// The collectors of /metrics, one per concern, one file each (api/metrics/*_collector.cpp; the
// metric names of each at the top of its file). Thread-safe as Collector is.
#pragma once

#include <string>
#include <vector>

#include "api/metrics/collector.h"
#include "api/service/daemon_services.h"
#include "routing/forwarding.h"

namespace ibfabric::api {

/// State collectors, in page order: daemon, ha, subnet, topology, mad, events, store, routing, lft,
/// osm, sm_traps, ports, links.
std::vector<CollectorPtr> stateCollectors();
/// Live collectors: the process, placement, and the pool and the jobs when there are.
std::vector<CollectorPtr> liveCollectors(const DaemonServices& services);

CollectorPtr daemonCollector();    ///< readiness, failures per fabric read
CollectorPtr haCollector();        ///< active/standby among the daemons on the subnet
CollectorPtr subnetCollector();    ///< the subnet's identity (name, GID prefix, SM)
CollectorPtr topologyCollector();  ///< the crawl, nodes, fabric counts, expected topology
CollectorPtr madCollector();       ///< the counter sweep and its MAD engine
CollectorPtr eventCollector();     ///< the event log
CollectorPtr storeCollector();     ///< the durable state store and its event journal
CollectorPtr routingCollector();   ///< route validation and up-link balance
CollectorPtr lftCollector();       ///< forwarding-table freshness per switch
CollectorPtr osmCollector();       ///< the OpenSM plugin link
CollectorPtr smTrapCollector();    ///< the SM trap subscription (SA InformInfo)
CollectorPtr portCollector();      ///< per-port counters, rates, link rates, state, info
CollectorPtr linkCollector();      ///< per-link health
CollectorPtr processCollector();   ///< live: the daemon's memory, CPU, threads, fds and heap
CollectorPtr placementCollector(const PlacementService& placement);
CollectorPtr poolCollector(const PoolService& pool);
CollectorPtr jobCollector(const JobService& jobs);  ///< live: jobs and their hottest links

/// The forwarding-table freshness families of `tables` (what lftCollector writes).
void writeLftStatus(MetricWriter& out, const routing::ForwardingTables& tables);
/// The placement families (what placementCollector writes), as text.
std::string renderPlacementMetrics(const PlacementStats& stats);

}  // namespace ibfabric::api
