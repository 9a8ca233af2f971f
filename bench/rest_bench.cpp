// REST latency at scale: the daemon's FabricService (fake counter source, sweeping on its
// interval and publishing a new state each time, with /metrics rendered after each sweep as in
// ibfabricd) and its real RestServer on loopback, on the generated superpod (--sus 40: 10,240
// HCAs). Times GET /links?limit=100 page by page (by cursor, from the start again at the end),
// a filtered page, /nodes?limit=100, and the full documents (/topology/full, /links) plain and
// gzip, while sweeps run; prints p50/p99/max, sizes and the process's RSS (docs/api.md).
//
//   build/bench/rest_bench --sus 40 --requests 400 --sweep-ms 2000
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "api/http/gzip_stream.h"
#include "api/http/rest_server.h"
#include "api/service/placement_service.h"
#include "discovery/formats.h"
#include "tests/fakes/fake_sources.h"
#include "tests/support/fabrics.h"

namespace {

using namespace ibfabric;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

/// "VmRSS" or "VmHWM" of this process, in MB.
double statusMb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) return std::stod(line.substr(std::strlen(field) + 1)) / 1024.0;
  return 0;
}

struct Timing {
  std::vector<double> ms;
  std::size_t bytes = 0;
  void print(const char* what) {
    if (ms.empty()) return;
    std::sort(ms.begin(), ms.end());
    const auto at = [&](double q) {
      return ms[std::min(ms.size() - 1, std::size_t(q * ms.size()))];
    };
    std::printf("%-44s n=%4zu  p50 %8.1f ms  p99 %8.1f ms  max %8.1f ms  body %9zu B\n", what,
                ms.size(), at(0.5), at(0.99), ms.back(), bytes);
  }
};

/// `n` GETs of `path`; `gzip`: with Accept-Encoding gzip (the body is not inflated).
Timing timeGets(httplib::Client& c, const std::string& path, int n, bool gzip) {
  Timing t;
  httplib::Headers h{{"Accept-Encoding", gzip ? "gzip" : "identity"}};
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    auto r = c.Get(path.c_str(), h);
    t.ms.push_back(ms(Clock::now() - t0));
    if (!r || r->status != 200) {
      std::fprintf(stderr, "GET %s failed: %d\n", path.c_str(), r ? r->status : -1);
      break;
    }
    t.bytes = r->body.size();
  }
  return t;
}

/// `n` pages of `query` (limit=100), following next_cursor and starting over at the end;
/// `firstAfterSweep` gets the pages that were the first after a new state.
Timing timePages(api::FabricService& service, httplib::Client& c, const std::string& query, int n,
                 int* walks, Timing* firstAfterSweep = nullptr) {
  Timing t;
  auto seen = service.state();
  std::string cursor;
  *walks = 0;
  for (int i = 0; i < n; ++i) {
    const std::string path = query + (cursor.empty() ? "" : "&cursor=" + cursor);
    const auto t0 = Clock::now();
    auto r = c.Get(path.c_str());
    const double took = ms(Clock::now() - t0);
    auto now = service.state();
    if (firstAfterSweep && now->counters != seen->counters)
      firstAfterSweep->ms.push_back(took);
    else
      t.ms.push_back(took);
    seen = now;
    if (!r || r->status != 200) {
      std::fprintf(stderr, "GET %s failed: %d\n", path.c_str(), r ? r->status : -1);
      break;
    }
    t.bytes = r->body.size();
    auto j = nlohmann::json::parse(r->body);
    if (j.contains("next_cursor")) {
      cursor = j["next_cursor"];
    } else {
      cursor.clear();
      ++*walks;
    }
  }
  return t;
}

int intArg(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int sus = intArg(argc, argv, "--sus", 40);
  const int requests = intArg(argc, argv, "--requests", 400);
  const int docRequests = intArg(argc, argv, "--doc-requests", 10);
  const int sweepMs = intArg(argc, argv, "--sweep-ms", 2000);
  const int scrapeMs = intArg(argc, argv, "--scrape-ms", 0);  // 0: no /metrics scraper

  auto t0 = Clock::now();
  auto topology = testing::netfileTopology(testing::superpod(sus), "superpod");
  std::printf("fabric: %d SUs, %zu nodes, %zu links, %zu hosts (generated in %.1f s)\n", sus,
              topology->nodes().size(), topology->links().size(), topology->hosts().size(),
              ms(Clock::now() - t0) / 1000);
  {  // The /topology/full rendering, step by step (before the service loads the machine).
    const double rssBefore = statusMb("VmRSS:");
    auto t1 = Clock::now();
    const nlohmann::json tree = toJson(*topology);
    const double treeMs = ms(Clock::now() - t1);
    t1 = Clock::now();
    const std::string text = tree.dump();
    const double dumpMs = ms(Clock::now() - t1);
    t1 = Clock::now();
    api::GzipWriter w;
    {
      api::GzipWriter::Stream os(w);
      os << tree;
    }
    const std::size_t gz = w.finish().size();
    std::printf(
        "/topology/full: toJson %.0f ms, dump %.0f ms (%zu B), streamed into gzip %.0f ms "
        "(%zu B); RSS %.0f MB before, peak %.0f MB (tree + text + gzip)\n",
        treeMs, dumpMs, text.size(), ms(Clock::now() - t1), gz, rssBefore, statusMb("VmHWM:"));
  }
  auto source = std::make_unique<api::ScriptedTopologySource>();
  source->push(topology);
  api::FabricServiceOptions o;
  o.crawlInterval = 1h;
  o.sweepInterval = std::chrono::milliseconds(sweepMs);
  auto control = std::make_shared<api::FakeCounterControl>();
  api::FabricService service(
      std::move(source), [control] { return std::make_unique<api::FakeCounterSource>(control); },
      o);
  api::PlacementService placement(service);
  api::RestServer server(api::DaemonServices{service, placement}, api::RestOptions{});
  const int port = server.bind("127.0.0.1", 0);
  if (port <= 0) return 1;
  std::thread http([&] { server.run(); });
  service.start();
  while (!(service.state()->ready() && service.state()->sweep.runs >= 2))
    std::this_thread::sleep_for(100ms);
  std::printf("ready after %.1f s; sweeps every %d ms (last took %.2f s); RSS %.0f MB\n",
              ms(Clock::now() - t0) / 1000, sweepMs,
              std::chrono::duration<double>(service.state()->sweep.lastDuration).count(),
              statusMb("VmRSS:"));

  std::atomic<bool> done{false};
  std::atomic<int> scrapes{0};
  std::thread scraper([&] {
    if (scrapeMs <= 0) return;
    httplib::Client m("127.0.0.1", port);
    m.set_read_timeout(600, 0);
    m.set_decompress(false);
    while (!done) {
      m.Get("/metrics", {{"Accept-Encoding", "gzip"}});
      ++scrapes;
      for (int i = 0; i < scrapeMs / 100 && !done; ++i) std::this_thread::sleep_for(100ms);
    }
  });

  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(600, 0);
  c.set_decompress(false);
  const std::uint64_t sweepsBefore = service.state()->sweep.runs;
  int walks = 0;
  Timing firsts;
  Timing page = timePages(service, c, "/api/v1/links?limit=100", requests, &walks, &firsts);
  page.print("GET /links?limit=100 (by cursor)");
  firsts.print("  of which the first after a new sweep");
  std::printf("  (%d whole walks; %llu sweeps published meanwhile)\n", walks,
              static_cast<unsigned long long>(service.state()->sweep.runs - sweepsBefore));
  timePages(service, c, "/api/v1/links?limit=100&state=ok&level=spine", requests / 4, &walks)
      .print("GET /links?limit=100&state=ok&level=spine");
  timePages(service, c, "/api/v1/nodes?limit=100", requests / 4, &walks)
      .print("GET /nodes?limit=100");
  timeGets(c, "/api/v1/links?sort=utilization&limit=10", requests / 8, false)
      .print("GET /links?sort=utilization&limit=10");
  for (const char* path : {"/api/v1/topology/full", "/api/v1/links", "/api/v1/nodes"}) {
    for (bool gzip : {true, false}) {
      auto first = timeGets(c, path, 1, gzip);  // may render (a new state or topology)
      auto rest = timeGets(c, path, docRequests, gzip);
      const std::string what = std::string("GET ") + (path + 7) + (gzip ? " gzip" : " plain");
      std::printf("%-44s first %8.1f ms\n", what.c_str(), first.ms.empty() ? 0.0 : first.ms[0]);
      rest.print((what + ", then").c_str());
    }
  }
  std::printf("RSS %.0f MB, peak %.0f MB; /metrics scrapes %d\n", statusMb("VmRSS:"),
              statusMb("VmHWM:"), scrapes.load());
  done = true;
  scraper.join();
  server.stop();
  http.join();
  service.stop();
  return 0;
}
