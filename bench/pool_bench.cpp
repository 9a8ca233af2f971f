// GPU pool allocator latency at 10,240 GPUs: a generated superpod (--sus 40: 1,280 hosts x 8
// HCAs) joined with an inventory of 1,280 hosts x 8 H100s, the leaf-packing placer
// (scheduler_hooks/pool_placer.h, in memory: no routes, no load model), and the decisions the
// REST face makes:
//   1. training allocations of 4 hosts (32 GPUs) until half the pool is taken;
//   2. inference allocations (1 whole GPU; 2 x 1g.10gb MIG slices) packing the rest;
//   3. preemption: the rest filled with preemptible 1-GPU jobs, then priority-10 training jobs
//      of 16 hosts (128 GPUs) that each evict 128 of them (victims: lowest priority, youngest
//      first);
//   4. the same with the journal on (fsync per decision), when --journal DIR is given.
// Prints per-phase count, p50, p99 and max in milliseconds.
//
//   pool_bench [--sus 40] [--journal DIR]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "discovery/net_topology.h"
#include "discovery/topogen.h"
#include "scheduler_hooks/pool.h"
#include "scheduler_hooks/pool_placer.h"

using namespace ibfabric;
using namespace ibfabric::scheduler_hooks;
using Clock = std::chrono::steady_clock;

namespace {

struct Stats {
  std::vector<double> ms;
  void add(Clock::duration d) {
    ms.push_back(std::chrono::duration<double, std::milli>(d).count());
  }
  void print(const char* what) {
    if (ms.empty()) return std::printf("%-44s none\n", what), void();
    std::sort(ms.begin(), ms.end());
    std::printf("%-44s n=%-6zu p50 %8.3f ms  p99 %8.3f ms  max %8.3f ms\n", what, ms.size(),
                ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 99 / 100)], ms.back());
  }
};

AllocationRequest request(std::string id, int gpus, JobClass c, int prio, bool preemptible,
                          int perHost, std::string sharing = "exclusive") {
  AllocationRequest r;
  r.jobId = std::move(id);
  r.gpus = gpus;
  r.jobClass = c;
  r.priority = prio;
  r.preemptible = preemptible;
  r.gpusPerHost = perHost;
  r.sharing = std::move(sharing);
  return r;
}

void run(TopologyPtr topology, const std::filesystem::path& journal) {
  PoolOptions o;
  o.placer = makeLeafPackingPlacer([topology] { return topology; });
  o.journalDir = journal;
  o.compactEvery = 100000;
  Pool pool(o);
  const auto t0 = Clock::now();
  for (const Host& h : topology->hosts())
    pool.putHost(hostFromJson(
        h.name,
        {{"gpu_count", 8}, {"model", "H100-80GB"}, {"memory_gb", 80}, {"mig_capable", true}}));
  pool.setTopology(topology);
  std::printf("%s: %d GPUs on %zu hosts, inventory + join %.1f ms\n",
              journal.empty() ? "in memory" : ("journal " + journal.string()).c_str(),
              pool.usage().totalGpus, topology->hosts().size(),
              std::chrono::duration<double, std::milli>(Clock::now() - t0).count());

  Stats training, inference, mig, preempt, release;
  int n = 0;
  const int total = pool.usage().totalGpus;
  while (pool.usage().usedGpus < total / 2) {
    const auto t = Clock::now();
    pool.allocate(request("train-" + std::to_string(n++), 32, JobClass::kTraining, 5, false, 8));
    training.add(Clock::now() - t);
  }
  for (int i = 0; i < 200; ++i) {
    auto t = Clock::now();
    pool.allocate(request("inf-" + std::to_string(i), 1, JobClass::kInference, 1, false, 0));
    inference.add(Clock::now() - t);
    t = Clock::now();
    pool.allocate(
        request("mig-" + std::to_string(i), 2, JobClass::kInference, 1, false, 0, "1g.10gb"));
    mig.add(Clock::now() - t);
  }
  // Fill the rest with preemptible single-GPU jobs (not timed individually).
  int filler = 0;
  for (;;) {
    try {
      pool.allocate(
          request("fill-" + std::to_string(filler++), 1, JobClass::kInference, 0, true, 0));
    } catch (const PoolError&) {
      break;
    }
  }
  std::printf("filled: %.0f of %d GPUs used, %d preemptible 1-GPU jobs, %zu allocations\n",
              pool.usage().usedGpus, total, filler - 1, pool.list().size());
  std::size_t victims = 0;
  for (int i = 0; i < 20; ++i) {
    const auto t = Clock::now();
    auto r = pool.allocate(
        request("urgent-" + std::to_string(i), 128, JobClass::kTraining, 10, false, 8));
    preempt.add(Clock::now() - t);
    victims += r.victims.size();
  }
  for (int i = 0; i < 50; ++i) {
    const auto t = Clock::now();
    pool.release("train-" + std::to_string(i));
    release.add(Clock::now() - t);
  }
  training.print("training 32 GPUs (4 whole hosts)");
  inference.print("inference 1 GPU (packing)");
  mig.print("inference 2 x 1g.10gb (MIG packing)");
  preempt.print("training 128 GPUs preempting 1-GPU jobs");
  std::printf("%-44s %zu victims over %zu decisions (%.0f each)\n", "", victims, preempt.ms.size(),
              double(victims) / preempt.ms.size());
  release.print("release");
}

}  // namespace

int main(int argc, char** argv) {
  int sus = 40;
  std::filesystem::path journal;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--sus") && i + 1 < argc)
      sus = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--journal") && i + 1 < argc)
      journal = argv[++i];
    else {
      std::fprintf(stderr, "usage: pool_bench [--sus N] [--journal DIR]\n");
      return 2;
    }
  }
  TopoOptions o;
  o.sus = sus;
  const auto t0 = Clock::now();
  auto topology = topologyFromNetFabric(generateTopology("superpod", o).fabric);
  std::printf("superpod --sus %d: %zu hosts, %zu HCAs, built in %.1f s\n", sus,
              topology->hosts().size(), topology->caCount(),
              std::chrono::duration<double>(Clock::now() - t0).count());
  run(topology, {});
  if (!journal.empty()) {
    std::filesystem::remove_all(journal);
    run(topology, journal);
    std::filesystem::remove_all(journal);
  }
  return 0;
}
