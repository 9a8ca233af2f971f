// Route validation speed on generated fabrics without a simulator: shortest-path forwarding
// tables for a preset (LIDs assigned in file order), then validateRoutes (every CA pair) and
// routeBalance, timed. The LFT *read* time over MADs is measured on ibsim by
// bench/lft_read_bench.sh.
//
//   routing_bench [--preset superpod --sus 40 | --preset two-level --leaves 64 --spines 32
//                  --hosts-per-leaf 32] [--repeats 3]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "discovery/net_topology.h"
#include "discovery/topogen.h"
#include "routing/routes.h"
#include "routing/synthetic_tables.h"

using namespace ibfabric;
using Clock = std::chrono::steady_clock;

static double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int main(int argc, char** argv) {
  std::string preset = "superpod";
  TopoOptions o;
  int repeats = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (k == "--preset") {
      preset = argv[i + 1];
    } else if (k == "--sus") {
      o.sus = v;
    } else if (k == "--leaves") {
      o.leaves = v;
    } else if (k == "--spines") {
      o.spines = v;
    } else if (k == "--hosts-per-leaf") {
      o.hostsPerLeaf = v;
    } else if (k == "--repeats") {
      repeats = v;
    } else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (preset == "superpod" && !o.sus) o.sus = 40;
  try {
    auto gen = generateTopology(preset, o);
    routing::assignSequentialLids(gen.fabric);
    gen.fabric.reindex();
    auto topo = topologyFromNetFabric(gen.fabric, "memory");
    auto t0 = Clock::now();
    auto tables = routing::computeShortestPathTables(topo);
    const double tablesSecs = since(t0);
    std::printf("fabric: %s (%zu CAs, %zu switches); shortest-path tables in %.3f s\n",
                gen.commandLine.c_str(), topo->caCount(), topo->switchCount(), tablesSecs);
    for (int r = 0; r < repeats; ++r) {
      t0 = Clock::now();
      auto v = routing::validateRoutes(*topo, *tables);
      const double vs = since(t0);
      t0 = Clock::now();
      auto b = routing::routeBalance(*topo, *tables);
      const double bs = since(t0);
      double worst = 1.0;
      for (const auto& l : b) worst = std::max(worst, l.imbalance);
      std::printf(
          "run %d: validate %llu pairs (%llu ok, %zu problems) in %.3f s (%.1f M pairs/s); "
          "balance of %zu leaves in %.3f s (max imbalance %.2f)\n",
          r + 1, static_cast<unsigned long long>(v.pairsChecked),
          static_cast<unsigned long long>(v.pairsOk), v.problems.size(), vs,
          static_cast<double>(v.pairsChecked) / vs / 1e6, b.size(), bs, worst);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "routing_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
