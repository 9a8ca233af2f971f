// What-if latency at scale: the daemon's service and its real RestServer on loopback in process
// (tests/support/in_process_daemon.h; the fake counter source serves shortest-path tables), on the
// generated superpod with LIDs (--sus 40: 10,240 HCAs, 896 switches). Times POST /api/v1/whatif
// draining one spine, one leaf–spine cable and one leaf (--requests each, while sweeps run) and
// prints p50 / max, the answer's size and what it found (docs/BENCHMARKS.md).
//
//   build/bench/whatif_bench --sus 40 --requests 20
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/fabrics.h"
#include "tests/support/in_process_daemon.h"

namespace {

using namespace ibfabric;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

int intArg(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return fallback;
}

/// POSTs `drain` `n` times; prints p50 / max and the last answer's summary.
void timeDrain(httplib::Client& c, const std::string& what, const json& drain, int n) {
  std::vector<double> ms;
  json last;
  std::size_t bytes = 0;
  const std::string body = json{{"drain", drain}}.dump();
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    auto r = c.Post("/api/v1/whatif", body, "application/json");
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!r || r->status != 200) {
      std::fprintf(stderr, "POST /api/v1/whatif (%s) failed: %d %s\n", what.c_str(),
                   r ? r->status : -1, r ? r->body.c_str() : "");
      return;
    }
    bytes = r->body.size();
    last = json::parse(r->body);
  }
  std::sort(ms.begin(), ms.end());
  const json& reroute = last["reroute"];
  std::printf(
      "%-22s p50 %7.1f ms, max %7.1f ms, %zu B: %d hosts cut off, %d HCAs lost, %zu leaves "
      "losing up-links, %s destinations to reroute\n",
      what.c_str(), ms[ms.size() / 2], ms.back(), bytes, last["hosts_cut_off"].get<int>(),
      last["hcas_lost"].get<int>(), last["leaves"].size(),
      reroute.is_object() ? std::to_string(reroute["destinations"].get<int>()).c_str() : "?");
}

}  // namespace

int main(int argc, char** argv) {
  const int sus = intArg(argc, argv, "--sus", 40);
  const int requests = std::max(1, intArg(argc, argv, "--requests", 20));
  auto topology = testing::routableTopology(testing::superpod(sus));
  testing::InProcessDaemon::Options o;
  o.service.crawlInterval = 1h;
  o.service.sweepInterval = 2s;
  o.counters->serveTables = true;
  testing::InProcessDaemon d(o);
  d.topology().push(topology);
  if (d.serve() <= 0) return 1;
  if (!d.startAndWaitReady(
          1, [](const api::ServiceState& s) { return s.forwarding != nullptr; }, 600s))
    return 1;
  std::printf("fabric: %d SUs, %zu nodes, %zu links; tables: %zu switches\n", sus,
              topology->nodes().size(), topology->links().size(),
              d.service().state()->forwarding->switchesWithTables());

  const Node* spine = nullptr;
  const Node* leaf = nullptr;
  const Port* up = nullptr;
  for (const Node& n : topology->nodes()) {
    if (!spine && n.isSwitch() && n.level == kLeafLevel + 1) spine = &n;
    if (!leaf && n.isSwitch() && n.level == kLeafLevel) {
      leaf = &n;
      for (const auto& p : n.ports)
        if (!up && p && p->direction == PortDirection::kUp) up = &*p;
    }
  }
  if (!spine || !leaf || !up) return 1;
  httplib::Client& c = d.client();
  timeDrain(c, "one spine", {{"switches", {toString(spine->guid)}}}, requests);
  timeDrain(c, "one leaf-spine cable",
            {{"cables", {{{"node", toString(leaf->guid)}, {"port", up->num.value()}}}}}, requests);
  timeDrain(c, "one leaf", {{"switches", {toString(leaf->guid)}}}, requests);
  return 0;
}
