// Forwarding-table refresh benchmark (bench/lft_refresh_bench.sh): what a daemon refresh costs on
// a healthy fabric and with one switch that cannot be read, against the full read that every
// refresh used to be while any switch was unreadable. Runs under `ibfabric sim run` on an ibsim
// fabric whose SM does not reroute (sweep_on_trap FALSE, sweep_interval 0).
//
//   lft_refresh_bench --repeats 5 --go-file /tmp/x/go
//
// 1. Crawl (not timed); two LftReaders (retry backoff 0: the failed switch is retried on every
//    refresh; and the default 10 s backoff) over one MAD engine (daemon defaults: window 64,
//    timeout 200 ms, 3 retries).
// 2. `--repeats` full reads (`read()`), then as many refreshes of the unchanged fabric.
// 3. Prints "READY", waits (at most 300 s) for `--go-file` to exist: meanwhile the script cuts
//    one switch off (`Unlink "<leaf>"`, every cable).
// 4. One refresh per reader notices the switch (stale); then `--repeats` refreshes each (retry
//    every time / within the backoff), and `--repeats` full reads with the switch unreadable.
// Output: one "phase=... seconds=... mads=..." line per run (parsed by the script).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "discovery/crawler.h"
#include "routing/lft_reader.h"
#include "telemetry/mad_engine.h"
#include "telemetry/umad_transport.h"

using namespace ibfabric;
using namespace std::chrono_literals;

namespace {

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

void line(const char* phase, int run, std::chrono::steady_clock::duration took,
          const routing::LftRefreshStats& st, const routing::ForwardingTables& t) {
  std::printf(
      "phase=%s run=%d seconds=%.4f mads=%llu probe_mads=%llu read_mads=%llu switches_read=%zu "
      "by_dr=%zu failed=%zu backing_off=%zu ok=%zu stale=%zu missing=%zu full=%d\n",
      phase, run, seconds(took), static_cast<unsigned long long>(st.probeMads + st.readMads),
      static_cast<unsigned long long>(st.probeMads), static_cast<unsigned long long>(st.readMads),
      st.switchesRead, st.readByDirectRoute, st.readFailed, st.backingOff,
      t.switchesIn(routing::TableState::kOk), t.switchesIn(routing::TableState::kStale),
      t.switchesIn(routing::TableState::kMissing), st.fullRead ? 1 : 0);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  std::string goFile;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeats" && i + 1 < argc) {
      repeats = std::atoi(argv[++i]);
    } else if (a == "--go-file" && i + 1 < argc) {
      goFile = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--repeats N] --go-file PATH\n", argv[0]);
      return 2;
    }
  }
  if (goFile.empty() || repeats < 1) {
    std::fprintf(stderr, "give --go-file and --repeats >= 1\n");
    return 2;
  }
  TopologyPtr topo;
  try {
    topo = makeSmpCrawler(CrawlOptions{})->discover();
  } catch (const std::exception& e) {
    std::printf("error crawl: %s\n", e.what());
    return 2;
  }
  mad::UmadTransport transport(mad::UmadTransport::Options{
      "", 0, {mad::MgmtClass::kSubnLid, mad::MgmtClass::kSubnDirected}});
  std::string error;
  if (!transport.open(error)) {
    std::printf("error umad: %s\n", error.c_str());
    return 2;
  }
  std::printf("switches=%zu cas=%zu\n", topo->switchCount(), topo->caCount());
  mad::SteadyClock clock;
  {
    mad::MadEngine engine(transport, clock, mad::MadEngineOptions{});
    routing::LftReaderOptions eager;
    eager.localPort = transport.localPortGuid();
    eager.retryBackoff = 0s;
    routing::LftReaderOptions patient;
    patient.localPort = transport.localPortGuid();
    routing::LftReader retryEvery(engine, clock, eager);
    routing::LftReader backoff(engine, clock, patient);
    retryEvery.fullReadEvery = backoff.fullReadEvery = 1 << 30;
    routing::LftRefreshStats st;
    routing::ForwardingTablesPtr a, b;

    auto timed = [&](const char* phase, int run, auto&& fn) {
      const auto t0 = std::chrono::steady_clock::now();
      auto t = fn();
      line(phase, run, std::chrono::steady_clock::now() - t0, st, *t);
      return t;
    };
    for (int r = 1; r <= repeats; ++r) {
      a = timed("full_healthy", r, [&] { return retryEvery.read(topo, &st); });
    }
    b = backoff.read(topo, &st);
    for (int r = 1; r <= repeats; ++r) {
      a = timed("refresh_healthy", r, [&] { return retryEvery.refresh(topo, a, &st); });
    }

    std::printf("READY\n");
    std::fflush(stdout);
    const auto deadline = std::chrono::steady_clock::now() + 300s;
    while (!std::filesystem::exists(goFile)) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::printf("error no go file\n");
        return 2;
      }
      std::this_thread::sleep_for(50ms);
    }

    a = timed("refresh_first_failure", 1, [&] { return retryEvery.refresh(topo, a, &st); });
    b = timed("refresh_first_failure_backoff", 1, [&] { return backoff.refresh(topo, b, &st); });
    for (int r = 1; r <= repeats; ++r) {
      a = timed("refresh_stale_retry", r, [&] { return retryEvery.refresh(topo, a, &st); });
    }
    for (int r = 1; r <= repeats; ++r) {
      b = timed("refresh_stale_backoff", r, [&] { return backoff.refresh(topo, b, &st); });
    }
    for (int r = 1; r <= repeats; ++r) {
      timed("full_one_unreadable", r, [&] { return retryEvery.read(topo, &st); });
    }
  }
  transport.close();
  return 0;
}
