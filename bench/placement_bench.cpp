// Placement benchmark (bench/placement_bench.sh runs all three):
//
//   placement_bench quality [--trials N] [--seed S]
//       4 leaves x 4 hosts (2 spines), random link loads, jobs of 2..8 hosts (ring and alltoall):
//       the engine's best answer vs the brute-force optimum of the same objective over every
//       host subset (each in the engine's canonical rank order: leaf, then name; a ring answer
//       can beat it, its entry hosts need not come first by name). Trials more than 5% below
//       are listed.
//   placement_bench compare --fabric F [--requests N] [--hosts LIST] [--free FRACTION]
//       A loaded fabric (synthetic load on the fabric's routes): the predicted ring bottleneck of
//       the engine's answer vs random placement vs topology-only best fit (Slurm-style: fewest
//       leaf blocks, fullest first), over many requests with random free lists.
//   placement_bench speed --fabric F [--requests N] [--hosts LIST]
//       p50/p99 of one answer (index and load prebuilt, as the daemon caches them).
//
// Fabrics: two-level-2048 (64 leaves x 32 hosts, 32 spines), superpod-8 (2,048 HCAs),
// superpod-40 (10,240 HCAs). Routes: shortest-path tables computed in memory
// (routing/synthetic_tables.h), or OpenSM's real LFTs with --lfts opensm-lfts.dump (the file
// an `ibfabric sim up` of the same fabric leaves in its OpenSM state directory).
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "discovery/net_topology.h"
#include "discovery/topogen.h"
#include "routing/lft_reader.h"
#include "routing/link_load.h"
#include "routing/placement_engine.h"
#include "routing/synthetic_tables.h"

using namespace ibfabric;
using namespace ibfabric::routing;

namespace {

struct Args {
  std::string mode;
  std::string fabric = "superpod-8";
  std::string lfts;
  int trials = 200;
  int requests = 200;
  std::vector<int> hosts;
  double freeFraction = 0.5;
  std::string pattern = "ring_allreduce";
  unsigned seed = 1;
};

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: placement_bench quality|compare|speed [--fabric two-level-2048|superpod-8|"
               "superpod-40] [--lfts FILE] [--trials N] [--requests N] [--hosts 64,512] "
               "[--free F] [--pattern P] [--seed S]\n");
  std::exit(2);
}

GeneratedTopology generate(const std::string& name) {
  TopoOptions o;
  if (name == "two-level-2048") {
    o.leaves = 64;
    o.spines = 32;
    o.hostsPerLeaf = 32;
    return generateTopology("two-level", o);
  }
  if (name == "superpod-8" || name == "superpod-40" || name == "superpod-2") {
    o.sus = std::stoi(name.substr(9));
    return generateTopology("superpod", o);
  }
  if (name == "small") {
    o.leaves = 4;
    o.spines = 2;
    o.hostsPerLeaf = 4;
    return generateTopology("two-level", o);
  }
  std::fprintf(stderr, "unknown fabric %s\n", name.c_str());
  std::exit(2);
}

/// LIDs from OpenSM's opensm-lfts.dump ("Unicast lids [0-N] of switch Lid L guid 0x... ('d'):"
/// headers, then "0x0001 001 # Channel Adapter portguid 0x...: 'name'" lines): the generated
/// fabric has none, the subnet manager assigned them. The tables themselves are parsed by
/// routing::parseOpensmLftDump.
struct DumpLids {
  std::map<std::uint64_t, std::uint16_t> lidOfPortGuid;
  std::map<std::uint64_t, std::uint16_t> lidOfSwitch;
};

DumpLids readDumpLids(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(1);
  }
  DumpLids d;
  std::string line;
  std::regex head(R"(of switch Lid (\d+) guid 0x([0-9a-fA-F]+))");
  std::regex entry(R"(^0x([0-9a-fA-F]+) +\d+ +# +Channel Adapter portguid 0x([0-9a-fA-F]+))");
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.rfind("Unicast", 0) == 0 && std::regex_search(line, m, head)) {
      d.lidOfSwitch[std::stoull(m[2], nullptr, 16)] = static_cast<std::uint16_t>(std::stoul(m[1]));
    } else if (line.find("Channel Adapter") != std::string::npos &&
               std::regex_search(line, m, entry)) {
      d.lidOfPortGuid[std::stoull(m[2], nullptr, 16)] =
          static_cast<std::uint16_t>(std::stoul(m[1], nullptr, 16));
    }
  }
  return d;
}

struct Fabric {
  TopologyPtr topo;
  ForwardingTablesPtr tables;
  PlacementIndexPtr index;
  std::string routes;
};

Fabric build(const std::string& name, const std::string& lfts) {
  Fabric f;
  NetFabric net = generate(name).fabric;
  if (lfts.empty()) {
    assignSequentialLids(net);
    net.reindex();
    f.topo = topologyFromNetFabric(net, "memory");
    f.tables = computeShortestPathTables(f.topo);
    f.routes = "shortest-path tables computed in memory (routing/synthetic_tables.h)";
  } else {
    DumpLids d = readDumpLids(lfts);
    for (auto& n : net.nodes) {
      if (!n.guid) continue;
      if (n.type == NodeType::kSwitch) {
        if (auto it = d.lidOfSwitch.find(n.guid->value()); it != d.lidOfSwitch.end()) {
          n.lid = Lid(it->second);
        }
      } else {
        for (auto& p : n.ports) {
          std::uint64_t pg = n.guid->value() + p.port.value();
          if (auto it = d.lidOfPortGuid.find(pg); it != d.lidOfPortGuid.end()) {
            p.lid = Lid(it->second);
          }
        }
      }
    }
    net.reindex();
    f.topo = topologyFromNetFabric(net, "memory");
    f.tables = parseOpensmLftDump(lfts, f.topo);
    f.routes = "OpenSM ftree LFTs from " + lfts;
  }
  f.index = std::make_shared<const PlacementIndex>(f.topo, f.tables);
  return f;
}

/// CPU time of this thread: on a shared, overloaded machine the wall time mostly measures the
/// wait for a core.
double threadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double lowest(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
  return v[std::min(i, v.size() - 1)];
}

/// Synthetic load: every switch-to-switch direction gets a baseline in [0, 0.3); a quarter of
/// the leaves (and a quarter of the spines) are hot: all their up-links in both directions in
/// [0.6, 0.95). HCA links of free hosts stay idle (nothing runs there).
std::shared_ptr<LinkLoadModel> syntheticLoad(const Fabric& f, std::mt19937& rng) {
  auto load = std::make_shared<LinkLoadModel>(f.topo);
  std::uniform_real_distribution<double> base(0.0, 0.3), hot(0.6, 0.95), coin(0.0, 1.0);
  std::vector<char> hotNode(f.topo->nodes().size(), 0);
  for (const auto& n : f.topo->nodes()) {
    if (n.isSwitch() && n.level >= kLeafLevel && coin(rng) < 0.25) hotNode[n.index] = 1;
  }
  const auto& links = f.topo->links();
  for (std::uint32_t l = 0; l < links.size(); ++l) {
    const Link& link = links[l];
    if (!f.topo->node(link.a.node).isSwitch()) continue;  // HCA link
    bool isHot = hotNode[link.a.node];
    load->setUtilization(directedLink(l, false), isHot ? hot(rng) : base(rng));
    load->setUtilization(directedLink(l, true), isHot ? hot(rng) : base(rng));
  }
  return load;
}

std::vector<std::string> names(const Fabric& f, const std::vector<std::uint32_t>& ids) {
  std::vector<std::string> out;
  for (auto id : ids) out.push_back(f.index->hosts()[id].name);
  return out;
}

/// Engine order: leaf group, block, name.
void canonical(const Fabric& f, std::vector<std::uint32_t>& ids) {
  const auto& hosts = f.index->hosts();
  const auto& blocks = f.index->blocks();
  std::sort(ids.begin(), ids.end(), [&](std::uint32_t x, std::uint32_t y) {
    if (hosts[x].block != hosts[y].block) {
      int gx = blocks[hosts[x].block].group, gy = blocks[hosts[y].block].group;
      if (gx != gy) return gx < gy;
      return hosts[x].block < hosts[y].block;
    }
    return hosts[x].name < hosts[y].name;
  });
}

/// Slurm-style topology best fit: the fewest leaf blocks, fullest blocks first; when one block
/// holds the job, the block with the fewest free hosts that fits (tightest fit).
std::vector<std::uint32_t> bestFit(const Fabric& f, const std::vector<char>& isFree, int n) {
  const auto& blocks = f.index->blocks();
  std::vector<std::pair<int, int>> freeCount;  // (free, block)
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    int c = 0;
    for (auto h : blocks[b].hosts) c += isFree[h];
    if (c > 0) freeCount.emplace_back(c, static_cast<int>(b));
  }
  std::vector<int> order;
  int tight = -1;
  int tightFree = 1 << 30;
  for (auto [c, b] : freeCount) {
    if (c >= n && c < tightFree) {
      tightFree = c;
      tight = b;
    }
  }
  if (tight >= 0) {
    order.push_back(tight);
  } else {
    std::stable_sort(freeCount.begin(), freeCount.end(),
                     [](auto x, auto y) { return x.first > y.first; });
    for (auto [c, b] : freeCount) order.push_back(b);
  }
  std::vector<std::uint32_t> out;
  for (int b : order) {
    for (auto h : blocks[b].hosts) {
      if (isFree[h] && static_cast<int>(out.size()) < n) out.push_back(h);
    }
  }
  canonical(f, out);
  return out;
}

int runQuality(const Args& a) {
  Fabric f = build("small", "");
  std::mt19937 rng(a.seed);
  std::uniform_real_distribution<double> util(0.0, 0.8);
  std::uniform_int_distribution<int> size(2, 8);
  const std::size_t nHosts = f.index->hosts().size();
  int within = 0, total = 0, optimal = 0;
  double worst = 1.0, sumRatio = 0;
  for (int t = 0; t < a.trials; ++t) {
    auto load = std::make_shared<LinkLoadModel>(f.topo);
    for (DirectedLinkId d = 0; d < load->size(); ++d) load->setUtilization(d, util(rng));
    PlacementEngine engine(f.index, load);
    PlacementRequest r;
    r.hosts = size(rng);
    r.pattern = t % 2 ? CommPattern::kAllToAll : CommPattern::kRingAllreduce;
    const PlacementAnswer answer = engine.place(r);
    double ours = answer.options.front().score.objective;
    double best = -1e9;
    std::vector<std::string> bestSet;
    for (std::uint32_t mask = 0; mask < (1u << nHosts); ++mask) {
      if (std::popcount(mask) != r.hosts) continue;
      std::vector<std::uint32_t> ids;
      for (std::uint32_t h = 0; h < nHosts; ++h) {
        if (mask & (1u << h)) ids.push_back(h);
      }
      canonical(f, ids);
      double objective = engine.score(names(f, ids), r.pattern).objective;
      if (objective > best) {
        best = objective;
        bestSet = names(f, ids);
      }
    }
    double ratio = best > 0 ? ours / best : 1.0;
    if (ours < best - 0.05 * std::abs(best)) {
      auto list = [](const std::vector<std::string>& hosts) {
        std::string out;
        for (const auto& h : hosts) out += (out.empty() ? "" : " ") + h;
        return out;
      };
      std::printf("  trial %d (%d hosts, %s): %.6f (%s) vs optimum %.6f (%s)\n", t, r.hosts,
                  std::string(toString(r.pattern)).c_str(), ours,
                  list(answer.options.front().hosts).c_str(), best, list(bestSet).c_str());
    }
    ++total;
    within += ours >= best - 0.05 * std::abs(best);
    optimal += ours >= best - 1e-12;
    worst = std::min(worst, ratio);
    sumRatio += ratio;
  }
  std::printf(
      "quality (4 leaves x 4 hosts, 2 spines, random utilization [0,0.8) per direction, "
      "%d trials, jobs of 2-8 hosts, ring and alltoall, seed %u):\n",
      total, a.seed);
  std::printf(
      "  within 5%% of brute-force optimum: %d/%d; optimal: %d/%d; worst ratio %.3f; "
      "mean ratio %.4f\n",
      within, total, optimal, total, worst, sumRatio / total);
  return within == total ? 0 : 1;
}

int runCompare(const Args& a) {
  Fabric f = build(a.fabric, a.lfts);
  auto pattern = parseCommPattern(a.pattern).value_or(CommPattern::kRingAllreduce);
  std::printf(
      "compare on %s (%zu hosts, %zu HCAs), routes: %s, pattern %s, free fraction %.2f, "
      "%d requests per size, seed %u\n",
      a.fabric.c_str(), f.index->hosts().size(), f.topo->caCount(), f.routes.c_str(),
      a.pattern.c_str(), a.freeFraction, a.requests, a.seed);
  std::printf(
      "| hosts | ibfabric median GB/s | best-fit median | random median | ibfabric / "
      "best-fit (median of ratios) | ibfabric >= best-fit | worst ratio |\n"
      "|---|---|---|---|---|---|---|\n");
  std::vector<double> allOurs, allFit, allRnd, allRatios;
  int allNotWorse = 0;
  for (int n : a.hosts) {
    std::mt19937 rng(a.seed + static_cast<unsigned>(n));
    std::vector<double> ours, fit, rnd, ratios;
    int notWorse = 0;
    for (int i = 0; i < a.requests; ++i) {
      auto load = syntheticLoad(f, rng);
      PlacementEngine engine(f.index, load);
      std::uniform_real_distribution<double> coin(0.0, 1.0);
      std::vector<char> isFree(f.index->hosts().size(), 0);
      std::vector<std::uint32_t> freeIds;
      for (std::uint32_t h = 0; h < isFree.size(); ++h) {
        if (coin(rng) < a.freeFraction) {
          isFree[h] = 1;
          freeIds.push_back(h);
        }
      }
      if (static_cast<int>(freeIds.size()) < n) continue;
      PlacementRequest r;
      r.hosts = n;
      r.pattern = pattern;
      r.candidates = names(f, freeIds);
      double o = engine.place(r).options.front().score.bottleneckBytesPerSecond;
      double b = engine.score(names(f, bestFit(f, isFree, n)), pattern).bottleneckBytesPerSecond;
      std::vector<std::uint32_t> pick = freeIds;
      std::shuffle(pick.begin(), pick.end(), rng);
      pick.resize(static_cast<std::size_t>(n));
      canonical(f, pick);
      double x = engine.score(names(f, pick), pattern).bottleneckBytesPerSecond;
      ours.push_back(o / 1e9);
      fit.push_back(b / 1e9);
      rnd.push_back(x / 1e9);
      ratios.push_back(b > 0 ? o / b : 1.0);
      notWorse += o >= b - 1e-6;
    }
    std::printf("| %d | %.2f | %.2f | %.2f | %.2fx (median of medians %.2fx) | %d/%zu | %.3f |\n",
                n, percentile(ours, 0.5), percentile(fit, 0.5), percentile(rnd, 0.5),
                percentile(ratios, 0.5), percentile(ours, 0.5) / percentile(fit, 0.5), notWorse,
                ours.size(), lowest(ratios));
    allOurs.insert(allOurs.end(), ours.begin(), ours.end());
    allFit.insert(allFit.end(), fit.begin(), fit.end());
    allRnd.insert(allRnd.end(), rnd.begin(), rnd.end());
    allRatios.insert(allRatios.end(), ratios.begin(), ratios.end());
    allNotWorse += notWorse;
  }
  // Every request of every size above, equally many per size.
  std::printf("| all | %.2f | %.2f | %.2f | %.2fx (median of medians %.2fx) | %d/%zu | %.3f |\n",
              percentile(allOurs, 0.5), percentile(allFit, 0.5), percentile(allRnd, 0.5),
              percentile(allRatios, 0.5), percentile(allOurs, 0.5) / percentile(allFit, 0.5),
              allNotWorse, allOurs.size(), lowest(allRatios));
  return 0;
}

int runSpeed(const Args& a) {
  auto t0 = std::chrono::steady_clock::now();
  Fabric f = build(a.fabric, a.lfts);
  auto t1 = std::chrono::steady_clock::now();
  std::mt19937 rng(a.seed);
  auto load = syntheticLoad(f, rng);
  auto t2 = std::chrono::steady_clock::now();
  auto index = std::make_shared<const PlacementIndex>(f.topo, f.tables);
  auto t3 = std::chrono::steady_clock::now();
  PlacementEngine engine(index, load);
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::printf(
      "speed on %s (%zu hosts, %zu HCAs), routes: %s; fabric+tables %.0f ms, load %.0f "
      "ms, placement index %.1f ms (once per topology/tables snapshot)\n",
      a.fabric.c_str(), f.index->hosts().size(), f.topo->caCount(), f.routes.c_str(), ms(t1 - t0),
      ms(t2 - t1), ms(t3 - t2));
  std::printf(
      "| hosts | pattern | free | p50 ms | p99 ms | max ms | CPU p50 ms | CPU p99 ms |\n"
      "|---|---|---|---|---|---|---|---|\n");
  for (const char* pat : {"ring_allreduce", "alltoall"}) {
    for (int n : a.hosts) {
      for (double freeFraction : {1.0, 0.5}) {
        std::vector<double> times, cpu;
        std::uniform_real_distribution<double> coin(0.0, 1.0);
        for (int i = 0; i < a.requests; ++i) {
          PlacementRequest r;
          r.hosts = n;
          r.pattern = *parseCommPattern(pat);
          if (freeFraction < 1.0) {
            for (const auto& h : index->hosts()) {
              if (coin(rng) < freeFraction) r.candidates.push_back(h.name);
            }
          }
          auto s = std::chrono::steady_clock::now();
          double c0 = threadCpuMs();
          auto answer = engine.place(r);
          cpu.push_back(threadCpuMs() - c0);
          times.push_back(ms(std::chrono::steady_clock::now() - s));
          if (answer.options.empty()) return 1;
        }
        std::printf("| %d | %s | %.0f%% | %.2f | %.2f | %.2f | %.2f | %.2f |\n", n, pat,
                    freeFraction * 100, percentile(times, 0.5), percentile(times, 0.99),
                    *std::max_element(times.begin(), times.end()), percentile(cpu, 0.5),
                    percentile(cpu, 0.99));
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage();
  Args a;
  a.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string k = argv[i];
    if (i + 1 >= argc) usage();
    std::string v = argv[++i];
    if (k == "--fabric") {
      a.fabric = v;
    } else if (k == "--lfts") {
      a.lfts = v;
    } else if (k == "--trials") {
      a.trials = std::stoi(v);
    } else if (k == "--requests") {
      a.requests = std::stoi(v);
    } else if (k == "--free") {
      a.freeFraction = std::stod(v);
    } else if (k == "--pattern") {
      a.pattern = v;
    } else if (k == "--seed") {
      a.seed = static_cast<unsigned>(std::stoul(v));
    } else if (k == "--hosts") {
      std::size_t pos = 0;
      while (pos < v.size()) {
        std::size_t comma = v.find(',', pos);
        a.hosts.push_back(std::stoi(v.substr(pos, comma - pos)));
        pos = comma == std::string::npos ? v.size() : comma + 1;
      }
    } else {
      usage();
    }
  }
  if (a.hosts.empty()) a.hosts = {64, 512};
  if (a.mode == "quality") return runQuality(a);
  if (a.mode == "compare") return runCompare(a);
  if (a.mode == "speed") return runSpeed(a);
  usage();
}
