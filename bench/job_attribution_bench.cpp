// Job attribution at scale: what the daemon's JobService pays (api/service/job_service.h) on a
// generated fabric with synthetic shortest-path tables (routing/synthetic_tables.h; no subnet
// manager needed): the full attribution of N allocations (routing::JobAttribution::compute, run
// when the tables, the topology or the jobs change) and the per-sweep join with the link load
// (routing::hottestLinks, 3 per job, run on every new state).
//
//   job_attribution_bench [--fabric superpod-40] [--jobs 100] [--min-hosts 8] [--max-hosts 16]
//                         [--alltoall-percent 0] [--reps 20] [--seed 1]
//
// Jobs take disjoint random host sets (sizes uniform in [min, max], hosts in random rank order);
// a job is alltoall with the given probability, ring_allreduce otherwise. Prints the set-up
// costs, then p50 / max of thread CPU time and wall time per attribution and per join, and the
// process's peak RSS.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "discovery/net_topology.h"
#include "discovery/topogen.h"
#include "routing/job_attribution.h"
#include "routing/synthetic_tables.h"

using namespace ibfabric;

namespace {

using Clock = std::chrono::steady_clock;

double threadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string peakRss() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmHWM:", 0) == 0) return line.substr(6);
  return "?";
}

struct Args {
  std::string fabric = "superpod-40";
  int jobs = 100, minHosts = 8, maxHosts = 16, alltoallPercent = 0, reps = 20, seed = 1;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string f = argv[i];
    const std::string v = argv[i + 1];
    if (f == "--fabric") a.fabric = v;
    if (f == "--jobs") a.jobs = std::stoi(v);
    if (f == "--min-hosts") a.minHosts = std::stoi(v);
    if (f == "--max-hosts") a.maxHosts = std::stoi(v);
    if (f == "--alltoall-percent") a.alltoallPercent = std::stoi(v);
    if (f == "--reps") a.reps = std::max(1, std::stoi(v));
    if (f == "--seed") a.seed = std::stoi(v);
  }
  return a;
}

TopologyPtr generate(const std::string& name) {
  TopoOptions o;
  if (name.rfind("superpod-", 0) != 0) {
    std::fprintf(stderr, "unknown fabric %s (superpod-N)\n", name.c_str());
    std::exit(2);
  }
  o.sus = std::stoi(name.substr(9));
  NetFabric net = generateTopology("superpod", o).fabric;
  routing::assignSequentialLids(net);
  return topologyFromNetFabric(net, "memory");
}

std::vector<routing::JobTraffic> makeJobs(const Topology& t, const Args& a) {
  std::mt19937 rng(static_cast<unsigned>(a.seed));
  std::vector<std::string> hosts;
  for (const auto& h : t.hosts()) hosts.push_back(h.name);
  std::shuffle(hosts.begin(), hosts.end(), rng);
  std::uniform_int_distribution<int> size(a.minHosts, a.maxHosts);
  std::uniform_int_distribution<int> percent(0, 99);
  std::vector<routing::JobTraffic> jobs;
  std::size_t next = 0;
  for (int j = 0; j < a.jobs; ++j) {
    const auto n = static_cast<std::size_t>(size(rng));
    if (next + n > hosts.size()) {
      std::fprintf(stderr, "not enough hosts for %d jobs (stopped at %d)\n", a.jobs, j);
      break;
    }
    routing::JobTraffic job;
    job.id = "job-" + std::to_string(j);
    job.hosts.assign(hosts.begin() + static_cast<std::ptrdiff_t>(next),
                     hosts.begin() + static_cast<std::ptrdiff_t>(next + n));
    next += n;
    job.pattern = percent(rng) < a.alltoallPercent ? routing::CommPattern::kAllToAll
                                                   : routing::CommPattern::kRingAllreduce;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

struct Sample {
  std::vector<double> cpu, wall;
  void print(const char* what) {
    std::sort(cpu.begin(), cpu.end());
    std::sort(wall.begin(), wall.end());
    std::printf(
        "%-12s CPU p50 %8.2f ms, max %8.2f ms; wall p50 %8.2f ms, max %8.2f ms (%zu runs)\n", what,
        cpu[cpu.size() / 2], cpu.back(), wall[wall.size() / 2], wall.back(), cpu.size());
  }
};

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  auto t0 = Clock::now();
  TopologyPtr topo = generate(a.fabric);
  const double genMs = msSince(t0);
  t0 = Clock::now();
  routing::ForwardingTablesPtr tables = routing::computeShortestPathTables(topo);
  const double tablesMs = msSince(t0);
  t0 = Clock::now();
  routing::PlacementIndex index(topo, tables);
  const double indexMs = msSince(t0);
  std::printf(
      "fabric %s: %zu nodes, %zu hosts, %zu links; generated in %.0f ms, tables %.0f ms, "
      "placement index %.0f ms (shared with the placement engine)\n",
      a.fabric.c_str(), topo->nodes().size(), topo->hosts().size(), topo->links().size(), genMs,
      tablesMs, indexMs);

  const auto jobs = makeJobs(*topo, a);
  std::size_t hostsUsed = 0, alltoall = 0;
  for (const auto& j : jobs) {
    hostsUsed += j.hosts.size();
    alltoall += j.pattern == routing::CommPattern::kAllToAll;
  }
  std::printf("jobs: %zu (%zu alltoall), %zu hosts\n", jobs.size(), alltoall, hostsUsed);

  Sample attribution, join;
  routing::JobAttribution result;
  for (int r = 0; r < a.reps; ++r) {
    const double c0 = threadCpuMs();
    t0 = Clock::now();
    result = routing::JobAttribution::compute(index, jobs);
    attribution.wall.push_back(msSince(t0));
    attribution.cpu.push_back(threadCpuMs() - c0);
  }
  std::uint64_t flows = 0, unrouted = 0;
  for (const auto& j : result.jobs()) {
    flows += j.flows;
    unrouted += j.unrouted;
  }
  std::printf("attribution: %llu flows (%llu unrouted), %zu directed links used\n",
              static_cast<unsigned long long>(flows), static_cast<unsigned long long>(unrouted),
              result.linksUsed());

  routing::LinkLoadModel load(topo);
  std::mt19937 rng(static_cast<unsigned>(a.seed));
  std::uniform_real_distribution<double> util(0.0, 1.0);
  for (routing::DirectedLinkId d = 0; d < load.size(); ++d) load.setUtilization(d, util(rng));
  std::size_t kept = 0;
  for (int r = 0; r < a.reps; ++r) {
    const double c0 = threadCpuMs();
    t0 = Clock::now();
    std::vector<std::vector<routing::JobLinkNow>> hottest(result.jobs().size());
    for (std::size_t i = 0; i < hottest.size(); ++i)
      hottest[i] = routing::hottestLinks(result.jobs()[i], load, 3);
    join.wall.push_back(msSince(t0));
    join.cpu.push_back(threadCpuMs() - c0);
    kept = 0;
    for (const auto& h : hottest) kept += h.size();
  }
  attribution.print("attribution");
  join.print("join");
  std::printf("hottest links kept: %zu; peak RSS%s\n", kept, peakRss().c_str());
  return unrouted == 0 ? 0 : 1;
}
