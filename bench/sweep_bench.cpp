// sweep_bench: full counter sweeps (CounterSweeper on the real UmadTransport + MadEngine) of
// every linked port of a live (simulated) fabric, at several MAD windows, and the simulator's
// own ceiling (MADs/s of the cheapest query at a deep window).
//
//   ibfabric sim run --name F -- build/bench/sweep_bench --windows 1,4,8,16,32,64,128,256
//   ibfabric sim run --name F -- build/bench/sweep_bench --ceiling --windows 32,64,128
//
// Every window runs in a child process (this program re-executed with --child W) under a wall-
// clock timeout: a window deep enough to wedge umad2sim blocks the child inside umad_send, which
// nothing in-process can interrupt, so the parent kills it, reports the window as hung and runs
// no deeper window. Each child crawls the fabric once (discovery's SMP crawler, not timed), runs
// one warm-up sweep (it also reads every node's ClassPortInfo), then --rounds timed sweeps; a
// periodic exporter pays the ClassPortInfo reads once per topology, so the timed sweeps are the
// steady state.
//
// Options: --windows LIST (1,4,8,16,32,64,128,256)  --rounds N (5)  --repeats R (1: each window
//          runs in R children, interleaved)  --timeout-ms T (200)  --retries R (3)
//          --per-target P (the engine default, 4)  --child-timeout-s S (180)
//          --ceiling (ClassPortInfo GETs to every switch; --ceiling-mads per batch, default as
//          many as one sweep sends: 2 per linked port)
//          --ceiling-targets switches|swept (swept: the sweep's own destination per linked port)
//          --ceiling-attr cpi|pc|pce (PortCounters / PortCountersExtended of port 1 instead)
//          --transport inprocess|subprocess (inprocess: UmadTransport in the window's child;
//          subprocess: the daemon's default, SubprocessMadTransport with this program re-executed
//          as its MAD proxy, `--mad-proxy`, so every MAD crosses a socketpair twice)
// Output: the children's lines ("round window=W ..."), then per window one "summary" line
// (median/min/max over every timed round of every repeat) and a Markdown table.
// Exit status 0 when every window completed, 1 if a request failed, 3 if a window hung.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "discovery/crawler.h"
#include "telemetry/clock.h"
#include "telemetry/counter_sweep.h"
#include "telemetry/heap_tuning.h"
#include "telemetry/mad_engine.h"
#include "telemetry/mad_proxy.h"
#include "telemetry/pma_attributes.h"
#include "telemetry/subprocess_mad_transport.h"
#include "telemetry/umad_transport.h"

namespace {

using namespace ibfabric;
using namespace ibfabric::mad;
using Seconds = std::chrono::duration<double>;

struct Options {
  std::vector<int> windows{1, 4, 8, 16, 32, 64, 128, 256};
  int rounds = 5;
  int repeats = 1;
  int timeoutMs = 200;
  int retries = 3;
  int perTarget = MadEngineOptions{}.perTargetWindow;
  int childTimeoutS = 180;
  bool ceiling = false;
  int ceilingMads = 0;                      // 0: as many as a sweep sends (2 per linked port)
  std::string ceilingTargets = "switches";  // switches | swept
  std::string ceilingAttr = "cpi";          // cpi | pc | pce
  int child = 0;                            // > 0: run this window in this process
  std::string transport = "inprocess";
};

std::vector<int> parseList(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(std::atoi(item.c_str()));
  return out;
}

double now() { return Seconds(std::chrono::steady_clock::now().time_since_epoch()).count(); }

MadEngineOptions engineOptions(const Options& o, int window) {
  MadEngineOptions e;
  e.policy = MadPolicy::kFixed;  // The window is the variable measured here (docs/BENCHMARKS.md).
  e.window = window;
  e.perTargetWindow = o.perTarget;
  e.timeout = std::chrono::milliseconds(o.timeoutMs);
  e.retries = o.retries;
  e.batchWatchdog = std::chrono::seconds(60);
  return e;
}

// ---- child: one window ----------------------------------------------------------------------

int runChild(const Options& o) {
  const int w = o.child;
  const double c0 = now();
  TopologyPtr topo;
  try {
    topo = makeSmpCrawler(CrawlOptions{})->discover();
  } catch (const CrawlError& e) {
    std::printf("error window=%d crawl: %s\n", w, e.what());
    return 2;
  }
  std::size_t switches = 0;
  for (const Node& n : topo->nodes()) switches += n.isSwitch() ? 1 : 0;
  std::printf("crawl window=%d nodes=%zu switches=%zu seconds=%.3f\n", w, topo->nodes().size(),
              switches, now() - c0);
  std::fflush(stdout);

  std::unique_ptr<MadTransport> owned;
  if (o.transport == "subprocess") {
    SubprocessMadTransport::Options po;
    po.argv = {"/proc/self/exe", "--mad-proxy"};
    owned = std::make_unique<SubprocessMadTransport>(po);
  } else {
    owned = std::make_unique<UmadTransport>(UmadTransport::Options{});
  }
  MadTransport& transport = *owned;
  std::string error;
  if (!transport.open(error)) {
    std::printf("error window=%d umad (%s): %s\n", w, o.transport.c_str(), error.c_str());
    return 2;
  }
  SteadyClock clock;
  bool allOk = true;
  {
    MadEngine engine(transport, clock, engineOptions(o, w));
    if (o.ceiling) {
      // The cheapest PMA query (ClassPortInfo) round-robin over every switch LID, or over the
      // sweep's own destinations (one entry per linked port: the switch's LID for a switch port,
      // the CA port's LID for an HCA port), optionally with the sweep's attributes instead.
      std::vector<Lid> swept;
      for (const Node& n : topo->nodes())
        for (const auto& p : n.ports) {
          if (!p || !p->connected() || p->num.value() == 0) continue;
          const Lid lid = n.isSwitch() ? n.lid() : p->lid;
          if (lid.value() != 0) swept.push_back(lid);
        }
      std::vector<Lid> lids;
      if (o.ceilingTargets == "swept") {
        lids = swept;
      } else {
        for (const Node& n : topo->nodes())
          if (n.isSwitch() && n.lid().value() != 0) lids.push_back(n.lid());
      }
      const int count = o.ceilingMads > 0 ? o.ceilingMads : static_cast<int>(2 * swept.size());
      if (lids.empty()) {
        std::printf("error window=%d no target with a LID\n", w);
        return 2;
      }
      auto query = [&]() -> MadBuffer {
        if (o.ceilingAttr == "pc") return buildPortCountersGet(1);
        if (o.ceilingAttr == "pce") return buildPortCountersExtendedGet(1);
        return buildClassPortInfoGet();
      };
      std::vector<MadRequest> batch;
      for (int i = 0; i < count; ++i)
        batch.push_back(
            {pmaAddress(lids[static_cast<std::size_t>(i) % lids.size()]), query(), nullptr});
      for (int r = 0; r <= o.rounds; ++r) {
        const double t0 = now();
        auto results = engine.run(batch);
        const double secs = now() - t0;
        std::size_t ok = 0;
        for (const auto& res : results) ok += res.ok() && madStatus(res.reply) == 0 ? 1 : 0;
        if (ok != results.size()) allOk = false;
        std::printf("%s window=%d i=%d ports=0 ok=%zu mads=%zu seconds=%.4f mads_per_s=%.0f\n",
                    r == 0 ? "warmup" : "round", w, r, ok, results.size(), secs,
                    static_cast<double>(ok) / secs);
        std::fflush(stdout);
      }
    } else {
      telemetry::SweepOptions so;
      so.samplesControlAvoid = {transport.smLid(), transport.localLid()};
      telemetry::CounterSweeper sweeper(engine, clock, so);
      sweeper.setTopology(topo);
      for (int r = 0; r <= o.rounds; ++r) {
        const double t0 = now();
        auto snap = sweeper.sweep();
        const double secs = now() - t0;
        const auto& s = snap->stats;
        const std::size_t okMads = s.requests - s.failedRequests;
        if (s.failedRequests != 0 || s.portsOk != s.ports) allOk = false;
        std::printf(
            "%s window=%d i=%d ports=%zu ok=%zu mads=%zu cpi=%zu seconds=%.4f ports_per_s=%.0f "
            "mads_per_s=%.0f mad_seconds=%.4f attempts=%zu retries=%zu failed=%zu\n",
            r == 0 ? "warmup" : "round", w, r, s.ports, s.portsOk, s.requests,
            s.classPortInfoQueries, secs, static_cast<double>(s.portsOk) / secs,
            static_cast<double>(okMads) / secs, Seconds(s.madDuration).count(), s.attempts,
            s.retries, s.failedRequests);
        std::fflush(stdout);
      }
    }
    const MadEngineStats st = engine.stats();
    std::printf(
        "done window=%d sent=%llu timeouts=%llu lost=%llu retries=%llu failed=%llu aborted=%llu "
        "max_in_flight=%llu\n",
        w, static_cast<unsigned long long>(st.sent), static_cast<unsigned long long>(st.timeouts),
        static_cast<unsigned long long>(st.lostReported),
        static_cast<unsigned long long>(st.retries), static_cast<unsigned long long>(st.failed),
        static_cast<unsigned long long>(st.aborted),
        static_cast<unsigned long long>(st.maxInFlight));
    std::fflush(stdout);
  }
  transport.close();
  return allOk ? 0 : 1;
}

// ---- parent: one child per window, with a timeout ------------------------------------------

struct ChildRun {
  bool hung = false;
  int status = 0;
  std::vector<std::string> lines;
};

ChildRun spawnChild(const Options& o, int window, char** argv0) {
  ChildRun run;
  int fds[2];
  if (pipe(fds) != 0) {
    run.status = 2;
    return run;
  }
  std::vector<std::string> args = {argv0[0],
                                   "--child",
                                   std::to_string(window),
                                   "--rounds",
                                   std::to_string(o.rounds),
                                   "--timeout-ms",
                                   std::to_string(o.timeoutMs),
                                   "--retries",
                                   std::to_string(o.retries),
                                   "--per-target",
                                   std::to_string(o.perTarget),
                                   "--ceiling-mads",
                                   std::to_string(o.ceilingMads),
                                   "--transport",
                                   o.transport};
  if (o.ceiling) {
    args.push_back("--ceiling");
    args.insert(args.end(),
                {"--ceiling-targets", o.ceilingTargets, "--ceiling-attr", o.ceilingAttr});
  }
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> av;
    for (auto& a : args) av.push_back(a.data());
    av.push_back(nullptr);
    execv("/proc/self/exe", av.data());
    _exit(127);
  }
  close(fds[1]);
  const double deadline = now() + o.childTimeoutS;
  std::string buf;
  char chunk[4096];
  for (;;) {
    const double left = deadline - now();
    if (left <= 0) {
      run.hung = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int rc = poll(&p, 1, static_cast<int>(std::min(left, 1.0) * 1000) + 1);
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) continue;
    const ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n <= 0) break;
    buf.append(chunk, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = buf.find('\n')) != std::string::npos) {
      std::string line = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      std::printf("  %s\n", line.c_str());
      std::fflush(stdout);
      run.lines.push_back(std::move(line));
    }
  }
  close(fds[0]);
  if (run.hung) {
    kill(pid, SIGKILL);
    std::printf("  hung window=%d: killed after %d s\n", window, o.childTimeoutS);
  }
  int ws = 0;
  waitpid(pid, &ws, 0);
  run.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
  return run;
}

double field(const std::string& line, const std::string& key) {
  const std::string k = " " + key + "=";
  const auto at = line.find(k);
  if (at == std::string::npos) return 0;
  return std::atof(line.c_str() + at + k.size());
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct WindowSummary {
  std::vector<double> portsPerS, madsPerS, seconds;
  double ports = 0, mads = 0, firstSeconds = 0, cpi = 0;
  double timeouts = 0, lost = 0, retries = 0, failed = 0, maxInFlight = 0;
  bool hung = false;
  int failedChildren = 0;
};

int runParent(const Options& o, char** argv) {
  std::map<int, WindowSummary> sums;
  std::set<int> hung;
  for (int rep = 0; rep < o.repeats && hung.empty(); ++rep) {
    for (int w : o.windows) {
      if (!hung.empty() && w >= *hung.begin()) break;
      std::printf("child window=%d repeat=%d\n", w, rep + 1);
      ChildRun run = spawnChild(o, w, argv);
      WindowSummary& s = sums[w];
      for (const auto& line : run.lines) {
        if (line.rfind("round ", 0) == 0) {
          s.portsPerS.push_back(field(line, "ports_per_s"));
          s.madsPerS.push_back(field(line, "mads_per_s"));
          s.seconds.push_back(field(line, "seconds"));
          s.ports = field(line, "ports");
          s.mads = field(line, "mads");
        } else if (line.rfind("warmup ", 0) == 0) {
          s.firstSeconds = std::max(s.firstSeconds, field(line, "seconds"));
          s.cpi = field(line, "cpi");
        } else if (line.rfind("done ", 0) == 0) {
          s.timeouts += field(line, "timeouts");
          s.lost += field(line, "lost");
          s.retries += field(line, "retries");
          s.failed += field(line, "failed");
          s.maxInFlight = std::max(s.maxInFlight, field(line, "max_in_flight"));
        }
      }
      if (run.hung) {
        s.hung = true;
        hung.insert(w);
        break;  // the simulator is probably wedged: nothing deeper, no further repeats
      }
      if (run.status != 0) ++s.failedChildren;
    }
  }

  bool anyFailed = false;
  for (const auto& [w, s] : sums) {
    std::printf(
        "summary mode=%s transport=%s window=%d ports=%.0f mads=%.0f rounds=%zu "
        "seconds_median=%.4f "
        "ports_per_s_median=%.0f ports_per_s_min=%.0f ports_per_s_max=%.0f mads_per_s_median=%.0f "
        "mads_per_s_min=%.0f mads_per_s_max=%.0f timeouts=%.0f lost=%.0f retries=%.0f "
        "failed=%.0f max_in_flight=%.0f hung=%d\n",
        o.ceiling ? "ceiling" : "sweep", o.transport.c_str(), w, s.ports, s.mads, s.madsPerS.size(),
        median(s.seconds), median(s.portsPerS),
        s.portsPerS.empty() ? 0 : *std::min_element(s.portsPerS.begin(), s.portsPerS.end()),
        s.portsPerS.empty() ? 0 : *std::max_element(s.portsPerS.begin(), s.portsPerS.end()),
        median(s.madsPerS),
        s.madsPerS.empty() ? 0 : *std::min_element(s.madsPerS.begin(), s.madsPerS.end()),
        s.madsPerS.empty() ? 0 : *std::max_element(s.madsPerS.begin(), s.madsPerS.end()),
        s.timeouts, s.lost, s.retries, s.failed, s.maxInFlight, s.hung ? 1 : 0);
    if (s.failed > 0 || s.failedChildren > 0) anyFailed = true;
  }
  std::fflush(stdout);
  if (!hung.empty()) return 3;
  return anyFailed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  ibfabric::telemetry::keepLargeBuffersInHeap();  // as the CLI does
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--windows")
      o.windows = parseList(next());
    else if (a == "--rounds")
      o.rounds = std::atoi(next().c_str());
    else if (a == "--repeats")
      o.repeats = std::atoi(next().c_str());
    else if (a == "--timeout-ms")
      o.timeoutMs = std::atoi(next().c_str());
    else if (a == "--retries")
      o.retries = std::atoi(next().c_str());
    else if (a == "--per-target")
      o.perTarget = std::atoi(next().c_str());
    else if (a == "--child-timeout-s")
      o.childTimeoutS = std::atoi(next().c_str());
    else if (a == "--ceiling")
      o.ceiling = true;
    else if (a == "--ceiling-targets")
      o.ceilingTargets = next();
    else if (a == "--ceiling-attr")
      o.ceilingAttr = next();
    else if (a == "--ceiling-mads")
      o.ceilingMads = std::atoi(next().c_str());
    else if (a == "--child")
      o.child = std::atoi(next().c_str());
    else if (a == "--transport")
      o.transport = next();
    else if (a == "--mad-proxy") {
      UmadTransport umad(UmadTransport::Options{});
      return proxy::runMadProxy(umad, 3, [] { return std::string("sweep_bench proxy"); });
    } else {
      std::fprintf(stderr, "sweep_bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (o.transport != "inprocess" && o.transport != "subprocess") {
    std::fprintf(stderr, "sweep_bench: --transport inprocess|subprocess\n");
    return 2;
  }
  if (o.child > 0) return runChild(o);
  if (o.windows.empty() || o.rounds < 1 || o.repeats < 1) {
    std::fprintf(stderr, "sweep_bench: need --windows, --rounds >= 1, --repeats >= 1\n");
    return 2;
  }
  return runParent(o, argv);
}
