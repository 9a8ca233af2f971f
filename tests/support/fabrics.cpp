#include "tests/support/fabrics.h"

#include <memory>
#include <utility>

#include "discovery/net_topology.h"
#include "discovery/node_name_map.h"
#include "discovery/topology_compare.h"
#include "routing/synthetic_tables.h"
#include "tests/support/sim_fixture.h"

namespace ibfabric::testing {
namespace {

const LinkRate k4xHdr{LinkWidth::k4x, LinkSpeed::kHdr};

NetFabric parsedFatTree(std::string_view prefix, int spines, int leaves, int hostsPerLeaf) {
  return parseNetText(fatTreeText(prefix, spines, leaves, hostsPerLeaf), "fat tree");
}

Port activePort(int num, Guid guid, Lid lid) {
  Port p;
  p.num = PortNum{static_cast<std::uint8_t>(num)};
  p.guid = guid;
  p.lid = lid;
  p.state = PortState::kActive;
  p.physState = PhysPortState::kLinkUp;
  if (num != 0) p.activeRate = k4xHdr;
  return p;
}

}  // namespace

FabricShape twoLevel(int leaves, int spines, int hostsPerLeaf) {
  FabricShape s{"two-level", {}};
  s.options.leaves = leaves;
  s.options.spines = spines;
  s.options.hostsPerLeaf = hostsPerLeaf;
  return s;
}

FabricShape threeLevel(int pods, int leavesPerPod, int spinesPerPod, int cores, int hostsPerLeaf) {
  FabricShape s{"three-level", {}};
  s.options.pods = pods;
  s.options.leavesPerPod = leavesPerPod;
  s.options.spinesPerPod = spinesPerPod;
  s.options.cores = cores;
  s.options.hostsPerLeaf = hostsPerLeaf;
  return s;
}

FabricShape superpod(int sus) {
  FabricShape s{"superpod", {}};
  s.options.sus = sus;
  return s;
}

GeneratedTopology generate(const FabricShape& shape) {
  return generateTopology(shape.preset, shape.options);
}

NetFabric routableNet(const FabricShape& shape) {
  NetFabric f = generate(shape).fabric;
  routing::assignSequentialLids(f);
  f.reindex();
  return f;
}

TopologyPtr netfileTopology(const FabricShape& shape, std::string source) {
  return topologyFromNetFabric(generate(shape).fabric, std::move(source));
}

TopologyPtr crawledTopology(const FabricShape& shape) {
  return topologyAsCrawled(generate(shape).fabric);
}

TopologyPtr routableTopology(const FabricShape& shape) {
  return topologyFromNetFabric(routableNet(shape), "memory");
}

TopologyPtr fatTreeTopology(std::string_view prefix, int spines, int leaves, int hostsPerLeaf,
                            std::string source) {
  return topologyFromNetFabric(parsedFatTree(prefix, spines, leaves, hostsPerLeaf),
                               std::move(source));
}

TopologyPtr crawledFatTreeTopology(std::string_view prefix, int spines, int leaves,
                                   int hostsPerLeaf) {
  return topologyAsCrawled(parsedFatTree(prefix, spines, leaves, hostsPerLeaf));
}

TopologyPtr switchCaPair(Port port, bool linked, std::string caDescription) {
  TopologyBuilder b;
  b.addNode({NodeType::kSwitch, kPairSwitch, kPairSwitch, "sw", 0, 0, 0, 2});
  b.addNode({NodeType::kCa, kPairCa, kPairCa, std::move(caDescription), 0, 0, 0, 1});
  port.num = PortNum{1};
  b.addPort(kPairSwitch, port);
  b.addPort(kPairCa, port);
  if (linked) b.connect(kPairSwitch, PortNum{1}, kPairCa, PortNum{1});
  return b.build();
}

TopologyPtr hostLeafSpine(const HostLeafSpineOptions& options) {
  const int leafPorts = options.spareLeafPort ? 3 : 2;
  TopologyBuilder b;
  const bool host = !options.hostUnplugged;
  if (host) b.addNode({NodeType::kCa, kHlsCa, kHlsCa, "host1 mlx5_0", 0, 0, 0, 1});
  b.addNode({NodeType::kSwitch, kHlsLeaf, kHlsLeaf, "leaf", 0, 0, 0, leafPorts});
  b.addNode({NodeType::kSwitch, kHlsSpine, kHlsSpine, "spine", 0, 0, 0, 1});
  if (host) b.addPort(kHlsCa, activePort(1, Guid{kHlsCa.value() + 1}, kHlsCaLid));
  for (int p = 0; p <= 2; ++p) {
    Port port = activePort(p, kHlsLeaf, kHlsLeafLid);
    if (p == 1 && !host) {
      port.state = PortState::kDown;
      port.physState = PhysPortState::kPolling;
      port.activeRate.reset();
    }
    b.addPort(kHlsLeaf, port);
  }
  if (options.spareLeafPort) {
    Port idle = activePort(3, kHlsLeaf, kHlsLeafLid);
    idle.state = PortState::kDown;
    idle.physState = PhysPortState::kPolling;
    idle.activeRate.reset();
    b.addPort(kHlsLeaf, idle);
  }
  for (int p = 0; p <= 1; ++p) b.addPort(kHlsSpine, activePort(p, kHlsSpine, kHlsSpineLid));
  if (host) b.connect(kHlsCa, PortNum{1}, kHlsLeaf, PortNum{1});
  b.connect(kHlsLeaf, PortNum{2}, kHlsSpine, PortNum{1});
  if (!options.nodeNameMap.empty()) {
    b.setNodeNameMap(
        std::make_shared<const NodeNameMap>(NodeNameMap::parse(options.nodeNameMap, "map")));
  }
  return b.build();
}

}  // namespace ibfabric::testing
