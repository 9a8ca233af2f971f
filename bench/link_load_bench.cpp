// Link-load fold benchmark: the cost the daemon's sweep thread pays after every sweep to fold
// the sweep's rates and link health into the state's link-load model
// (routing::LinkLoadModel::fromSweep, api/service/link_load_fold.h), on a generated fabric with a
// rate for every port and a health report for every link.
//
//   link_load_bench [--fabric superpod-40|superpod-8|two-level-2048] [--sweeps N]
//
// Prints p50 / p99 / max wall time per fold and the process's peak RSS (VmHWM).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "discovery/net_topology.h"
#include "discovery/topogen.h"
#include "routing/link_load.h"

using namespace ibfabric;

namespace {

GeneratedTopology generate(const std::string& name) {
  TopoOptions o;
  if (name == "two-level-2048") {
    o.leaves = 64;
    o.spines = 32;
    o.hostsPerLeaf = 32;
    return generateTopology("two-level", o);
  }
  if (name.rfind("superpod-", 0) == 0) {
    o.sus = std::stoi(name.substr(9));
    return generateTopology("superpod", o);
  }
  std::fprintf(stderr, "unknown fabric %s\n", name.c_str());
  std::exit(2);
}

std::string peakRss() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmHWM:", 0) == 0) return line.substr(6);
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  std::string fabric = "superpod-40";
  int sweeps = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--fabric")
      fabric = argv[i + 1];
    else if (flag == "--sweeps")
      sweeps = std::max(1, std::stoi(argv[i + 1]));
  }
  TopologyPtr topo = topologyFromNetFabric(generate(fabric).fabric);
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> util(0.0, 1.0);

  std::vector<telemetry::PortRates> portRates;
  std::vector<telemetry::LinkHealthReport> health;
  for (std::uint32_t l = 0; l < topo->links().size(); ++l) {
    const Link& link = topo->links()[l];
    telemetry::LinkHealthReport r;
    r.link = l;
    for (PortRef end : {link.a, link.b}) {
      telemetry::PortKey key{topo->node(end.node).guid, end.port};
      (end == link.a ? r.a : r.b) = key;
      telemetry::PortRates pr;
      pr.key = key;
      pr.txUtilization = util(rng);
      pr.rxUtilization = util(rng);
      pr.congestion = util(rng) * 0.1;
      portRates.push_back(pr);
    }
    health.push_back(r);
  }

  const telemetry::RatesTable rates(portRates);
  std::shared_ptr<const routing::LinkLoadModel> model;
  std::vector<double> ms;
  for (int s = 0; s < sweeps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    model = std::make_shared<const routing::LinkLoadModel>(
        routing::LinkLoadModel::fromSweep(topo, &rates, &health, model.get()));
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms[std::min(ms.size() - 1, std::size_t(q * ms.size()))]; };
  std::printf(
      "fabric %s: %zu links, %zu port rates, %d folds: p50 %.1f ms, p99 %.1f ms, max "
      "%.1f ms; peak RSS%s\n",
      fabric.c_str(), topo->links().size(), rates.size(), sweeps, at(0.5), at(0.99), ms.back(),
      peakRss().c_str());
  return model && model->sweeps() == sweeps ? 0 : 1;
}
