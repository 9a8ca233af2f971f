#include "tests/fuzz/fuzz_support.h"

#include <spdlog/spdlog.h>

#include "discovery/topogen.h"
#include "discovery/topology_compare.h"

namespace ibfabric::fuzz {

const NetFabric& sampleNetFabric() {
  static const NetFabric fabric = [] {
    TopoOptions o;
    o.leaves = 2;
    o.spines = 1;
    o.hostsPerLeaf = 2;
    return generateTopology("two-level", o).fabric;
  }();
  return fabric;
}

const TopologyPtr& sampleTopology() {
  static const TopologyPtr topology = topologyAsCrawled(sampleNetFabric());
  return topology;
}

void quietLogs() { spdlog::set_level(spdlog::level::off); }

}  // namespace ibfabric::fuzz
