#include "tests/fuzz/fuzz_support.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "discovery/topogen.h"
#include "discovery/topology_compare.h"

namespace ibfabric::fuzz {

NetFabric smallTwoLevel(int spines) {
  TopoOptions o;
  o.leaves = 2;
  o.spines = spines;
  o.hostsPerLeaf = 2;
  NetFabric fabric = generateTopology("two-level", o).fabric;
  for (NetNode& n : fabric.nodes) {
    if (n.type != NodeType::kSwitch) continue;
    n.numPorts = 1;
    for (const NetPort& p : n.ports) n.numPorts = std::max<int>(n.numPorts, p.port.value());
  }
  fabric.reindex();
  return fabric;
}

const NetFabric& sampleNetFabric() {
  static const NetFabric fabric = smallTwoLevel(1);
  return fabric;
}

const TopologyPtr& sampleTopology() {
  static const TopologyPtr topology = topologyAsCrawled(sampleNetFabric());
  return topology;
}

void quietLogs() { spdlog::set_level(spdlog::level::off); }

}  // namespace ibfabric::fuzz
