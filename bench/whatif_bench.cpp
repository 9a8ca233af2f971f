// What-if latency at scale: the daemon's service and its real RestServer on loopback in process
// (tests/support/in_process_daemon.h; the fake counter source serves shortest-path tables), on the
// generated superpod with LIDs (--sus 40: 10,240 HCAs, 896 switches). Times POST /api/v1/whatif
// draining one spine, one leaf–spine cable and one leaf (--requests each, while sweeps run) and
// prints p50 / max, the answer's size and what it found (docs/BENCHMARKS.md). With --jobs N
// (default 100) it first reports N jobs through the JobService (disjoint random host sets of 8–16
// hosts, seeded; every 7th alltoall, the others ring_allreduce), so each what-if also predicts
// the hit jobs' bottleneck after the drain on the drained model and asks the placement engine for
// their alternatives (routing/job_drain_impact.h).
//
//   build/bench/whatif_bench --sus 40 --requests 20 --jobs 100
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
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
  const json& model = last["allocations_model"];
  if (!last["allocations"].is_array() || !model.value("ready", false)) {
    std::printf("%-22s jobs: not ready (%s)\n", "", model.dump().c_str());
    return;
  }
  double maxDrop = 0.0;
  std::size_t dropped = 0, withAlternatives = 0;
  for (const auto& a : last["allocations"]) {
    const json& f = a["bottleneck"]["drop_fraction"];
    if (f.is_number() && f.get<double>() > 1e-9) {
      ++dropped;
      maxDrop = std::max(maxDrop, f.get<double>());
    }
    withAlternatives += a["alternatives"].is_array() && !a["alternatives"].empty();
  }
  std::printf(
      "%-22s jobs: %zu of %zu hit, %zu with a lower bottleneck (largest drop %.0f %%), %zu "
      "with alternatives; jobs part %.1f ms (last answer)\n",
      "", last["allocations"].size(), model.value("jobs", std::size_t{0}), dropped, 100.0 * maxDrop,
      withAlternatives, 1000.0 * model.value("seconds", 0.0));
}

/// Reports `n` jobs on disjoint random host sets of 8–16 hosts (seeded): every 7th alltoall.
bool reportJobs(testing::InProcessDaemon& d, const Topology& t, int n) {
  std::vector<std::size_t> order(t.hosts().size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937 rng(24);
  std::shuffle(order.begin(), order.end(), rng);
  std::size_t next = 0;
  for (int j = 0; j < n; ++j) {
    const std::size_t size = 8 + rng() % 9;
    if (next + size > order.size()) break;
    json hosts = json::array();
    for (std::size_t k = 0; k < size; ++k) hosts.push_back(t.hosts()[order[next++]].name);
    try {
      d.jobs()->report("job-" + std::to_string(j),
                       {{"hosts", hosts}, {"pattern", j % 7 == 6 ? "alltoall" : "ring_allreduce"}});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "report job-%d: %s\n", j, e.what());
      return false;
    }
  }
  const auto t0 = Clock::now();
  const auto v = d.jobs()->view();  // the attribution, once (the what-ifs reuse it)
  std::printf("jobs: %zu reported on %zu hosts; attribution %.1f ms%s\n", v->jobs.size(), next,
              std::chrono::duration<double, std::milli>(Clock::now() - t0).count(),
              v->attribution ? "" : (" (not attributed: " + v->notReady + ")").c_str());
  return v->attribution != nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const int sus = intArg(argc, argv, "--sus", 40);
  const int requests = std::max(1, intArg(argc, argv, "--requests", 20));
  const int jobs = std::max(0, intArg(argc, argv, "--jobs", 100));
  auto topology = testing::routableTopology(testing::superpod(sus));
  testing::InProcessDaemon::Options o;
  o.service.crawlInterval = 1h;
  o.service.sweepInterval = 2s;
  o.counters->serveTables = true;
  testing::InProcessDaemon d(o);
  d.topology().push(topology);
  d.startJobs();
  if (d.serve() <= 0) return 1;
  if (!d.startAndWaitReady(
          1, [](const api::ServiceState& s) { return s.forwarding != nullptr; }, 600s))
    return 1;
  std::printf("fabric: %d SUs, %zu nodes, %zu links; tables: %zu switches\n", sus,
              topology->nodes().size(), topology->links().size(),
              d.service().state()->forwarding->switchesWithTables());
  if (jobs > 0 && !reportJobs(d, *topology, jobs)) return 1;

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
