// /metrics served off the request path: a generated superpod with fake counters, the daemon's
// FabricService + RestServer on loopback. The rendering happens after each state change; a scrape
// serves it (the stored gzip members as they are, or inflated for plain text) and must not wait
// for a render.
//
// Benchmark mode: IBFABRIC_METRICS_BENCH_SUS=40 (the 10,240-HCA superpod) prints size, series,
// render, gzip and scrape times (docs/BENCHMARKS.md), at the default options and with every port
// and every counter set; IBFABRIC_METRICS_BENCH_DUMP=DIR also writes each page there (to see
// where the bytes go). Default: 1 SU (256 HCAs), a few seconds. Render times are given as wall
// and CPU time of the rendering thread (the CPU time is what a busy shared machine does not
// inflate).
// ApiMetricsScale.PageMemory prints what the page costs in resident memory (VmRSS / VmHWM
// deltas of this process, the peak reset through /proc/self/clear_refs): a rendering, a plain
// and a gzip scrape, a new rendering while a scrape holds the old one, and for comparison the
// text-then-gzip rendering the page no longer does.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "api/http/rest_server.h"
#include "api/metrics/collectors.h"
#include "api/metrics/gzip.h"
#include "api/metrics/metrics.h"
#include "api/metrics/metrics_page.h"
#include "tests/fakes/fake_sources.h"
#include "tests/support/fabrics.h"
#include "tests/support/scope_exit.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// CPU time of the calling thread, in seconds.
double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// Samples (lines not starting with '#') of a page.
std::size_t seriesCount(const std::string& text) {
  std::size_t n = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    if (text[at] != '#') ++n;
    at = end == std::string::npos ? text.size() : end + 1;
  }
  return n;
}

void measure(const MetricsOptions& options, const char* what) {
  const char* env = std::getenv("IBFABRIC_METRICS_BENCH_SUS");
  const int sus = env ? std::atoi(env) : 1;
  auto topology = testing::netfileTopology(testing::superpod(sus), "superpod");

  auto source = std::make_unique<ScriptedTopologySource>();
  source->push(topology);
  FabricServiceOptions o;
  o.crawlInterval = 1h;
  o.sweepInterval = 200ms;  // two sweeps (for the rates), then none (below)
  auto control = std::make_shared<FakeCounterControl>();
  FabricService service(
      std::move(source), [control] { return std::make_unique<FakeCounterSource>(control); }, o);
  RestOptions ro;
  ro.metrics = options;
  PlacementService placement(service);
  RestServer server(DaemonServices{service, placement}, ro);
  const int port = server.bind("127.0.0.1", 0);
  ASSERT_GT(port, 0);
  std::thread http([&] { server.run(); });
  const testing::ScopeExit joinHttp([&] {  // also when an ASSERT below returns early
    server.stop();
    if (http.joinable()) http.join();
  });
  service.start();
  ASSERT_TRUE(testing::waitFor([&] { return service.state()->ready(); }, 600s));
  // A second sweep, for the rates (utilization, congestion), then none: the state stays put.
  ASSERT_TRUE(testing::waitFor(
      [&] {
        auto s = service.state();
        return s->sweep.runs >= 2 && s->rates && !s->rates->empty();
      },
      600s));
  service.setIntervals(1h, 1h);  // from the next wait on
  std::uint64_t runs = 0;
  ASSERT_TRUE(testing::waitFor(
      [&] {
        const auto now = service.state()->sweep.runs;
        const bool still = now == runs;
        runs = now;
        return still;
      },
      600s, 2s));

  // Direct render (what the background thread does after each sweep).
  auto state = service.state();
  auto t0 = Clock::now();
  const double cpu0 = threadCpuSeconds();
  const std::string text = renderMetrics(*state, service.events(), ro.metrics);
  const double renderCpu = threadCpuSeconds() - cpu0;
  const double render = since(t0);
  if (const char* dir = std::getenv("IBFABRIC_METRICS_BENCH_DUMP")) {
    std::ofstream(std::string(dir) + "/metrics-" + std::to_string(sus) + "su-" +
                  (options.ports == PortScope::kAll ? "all" : "default") + ".prom")
        << text;
  }
  t0 = Clock::now();
  const std::string gz = gzipCompress(text);
  const double gzipTime = since(t0);
  ASSERT_FALSE(gz.empty());
  EXPECT_LT(gz.size(), text.size() / 5);

  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(600, 0);
  // The first scrape may have to wait for the first rendering; wait until the page has the
  // current state (a scrape starts with the state families of the direct render; the live ones
  // such as placement's and the collector status, with its durations, follow them).
  const std::size_t families = text.find("# HELP ibfabric_collector_success ");
  ASSERT_NE(families, std::string::npos);
  ASSERT_TRUE(testing::waitFor(
      [&] {
        auto r = c.Get("/metrics");
        return r && r->body.size() >= families &&
               r->body.compare(0, families, text, 0, families) == 0;
      },
      100s, 200ms));
  t0 = Clock::now();
  auto plain = c.Get("/metrics");
  const double scrapePlain = since(t0);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 200);
  EXPECT_EQ(plain->get_header_value("Content-Encoding"), "");
  c.set_decompress(false);
  t0 = Clock::now();
  auto compressed = c.Get("/metrics", {{"Accept-Encoding", "gzip"}});
  const double scrapeGzip = since(t0);
  ASSERT_TRUE(compressed);
  EXPECT_EQ(compressed->get_header_value("Content-Encoding"), "gzip");
  EXPECT_LT(compressed->body.size(), plain->body.size() / 5);
  // Serving gzip sends the stored chunks: much faster than rendering them.
  EXPECT_LT(scrapeGzip, render + 1.0);

  std::printf(
      "metrics bench: %d SUs, %zu nodes, %zu ports polled, %s: text %zu bytes, %zu series, "
      "render %.3f s (CPU %.3f s); gzip %zu bytes in %.3f s; scrape plain %.3f s, gzip %.3f s\n",
      sus, topology->nodes().size(), state->counters->ports.size(), what, text.size(),
      seriesCount(text), render, renderCpu, gz.size(), gzipTime, scrapePlain, scrapeGzip);
  server.stop();
  http.join();
  service.stop();
}

/// This process's resident set and its peak, in bytes.
struct Resident {
  long long rss = 0;
  long long peak = 0;
};
Resident resident() {
  std::ifstream in("/proc/self/status");
  Resident r;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key;
    long long kb = 0;
    words >> key >> kb;
    if (key == "VmRSS:") r.rss = kb * 1024;
    if (key == "VmHWM:") r.peak = kb * 1024;
  }
  return r;
}
/// Resets VmHWM to the current VmRSS (Linux: clear_refs 5); false where not allowed.
bool resetPeak() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return f.good();
}
double mb(long long bytes) { return static_cast<double>(bytes) / 1e6; }

TEST(ApiMetricsScale, PageMemory) {
  const char* env = std::getenv("IBFABRIC_METRICS_BENCH_SUS");
  const int sus = env ? std::atoi(env) : 1;
  auto source = std::make_unique<ScriptedTopologySource>();
  source->push(testing::netfileTopology(testing::superpod(sus), "superpod"));
  FabricServiceOptions o;
  o.crawlInterval = 1h;
  o.sweepInterval = 1h;
  auto control = std::make_shared<FakeCounterControl>();
  FabricService service(
      std::move(source), [control] { return std::make_unique<FakeCounterSource>(control); }, o);
  service.start();
  ASSERT_TRUE(testing::waitFor([&] { return service.state()->ready(); }, 600s));
  // Settled: no state published for a second (the page then renders once per phase below).
  ServiceStatePtr settled = service.state();
  ASSERT_TRUE(testing::waitFor(
      [&] {
        const auto now = service.state();
        const bool same = now == settled;
        settled = now;
        return same;
      },
      600s, 1s));
  const MetricsOptions options;
  if (!resetPeak()) GTEST_SKIP() << "/proc/self/clear_refs not writable: no peak to measure";

  const Resident before = resident();
  MetricsPage page(service, options, {});
  ASSERT_TRUE(
      testing::waitFor([&] { return page.latest()->state.lock() == service.state(); }, 600s, 10ms));
  const RenderedMetricsPtr first = page.latest();
  const Resident rendered = resident();
  const std::size_t text = first->page.textBytes;

  resetPeak();
  const Resident beforePlain = resident();
  std::size_t sent = 0;
  {
    MetricsBody plain = page.body(false);
    for (std::size_t at = 0; at < plain.size(); at += plain.chunk(at, 1 << 20).size()) {
    }
    sent = plain.size();
  }
  const Resident plainScrape = resident();
  resetPeak();
  const Resident beforeGzip = resident();
  {
    MetricsBody gz = page.body(true);
    for (std::size_t at = 0; at < gz.size(); at += gz.chunk(at, 1 << 20).size()) {
    }
  }
  const Resident gzipScrape = resident();
  EXPECT_EQ(page.latest(), first) << "no rendering while the scrapes were measured";

  // A new state while a scrape still sends the old rendering.
  resetPeak();
  const Resident beforeSecond = resident();
  {
    MetricsBody held = page.body(true);
    const std::uint64_t id = service.events().append(telemetry::EventType::kLinkDown, {}, {}, "x");
    ASSERT_TRUE(testing::waitFor([&] { return page.latest()->lastEventId == id; }, 600s, 10ms));
  }
  const Resident second = resident();
  const std::size_t held = page.heldBytes();
  page.stop();

  // The rendering the page no longer does: the whole text, then its gzip.
  resetPeak();
  const Resident beforeOld = resident();
  std::size_t oldText = 0, oldGzip = 0;
  {
    const std::string t =
        renderState(stateCollectors(), *service.state(), service.events(), options).text;
    const std::string g = gzipCompress(t);
    oldText = t.size();
    oldGzip = g.size();
  }
  const Resident old = resident();
  service.stop();

  std::printf(
      "metrics page memory: %d SUs: text %.1f MB, gzip %.2f MB in %zu chunks, rendered in %.2f s "
      "(scratch %.2f MB); page keeps %.2f MB\n"
      "  first rendering: VmRSS +%.1f MB, VmHWM +%.1f MB over the RSS before\n"
      "  plain scrape (%.1f MB sent): VmHWM +%.1f MB; gzip scrape: VmHWM +%.1f MB\n"
      "  new rendering while a scrape holds the old: VmRSS %+.1f MB, VmHWM +%.1f MB\n"
      "  before (text then gzip, %.1f MB + %.2f MB): VmHWM +%.1f MB\n",
      sus, mb(text), mb(first->page.bytes), first->page.chunks.size(), first->renderSeconds,
      mb(first->page.scratchBytes), mb(held), mb(rendered.rss - before.rss),
      mb(rendered.peak - before.rss), mb(sent), mb(plainScrape.peak - beforePlain.rss),
      mb(gzipScrape.peak - beforeGzip.rss), mb(second.rss - beforeSecond.rss),
      mb(second.peak - beforeSecond.rss), mb(oldText), mb(oldGzip), mb(old.peak - beforeOld.rss));
  EXPECT_EQ(oldText, text) << "the same page";
  // No whole copy of the text exists at any point: each costs less than the old way (text and
  // gzip at once) in the same process, and at scale less than half the text (the fixed buffers
  // — 256 KB chunks, the text buffer — dominate a 1-SU page).
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "resident memory under AddressSanitizer (quarantine, shadow) is not the page's";
#endif
  const long long oldPeak = old.peak - beforeOld.rss;
  const long long half = static_cast<long long>(text / 2);
  for (long long cost : {rendered.peak - before.rss, plainScrape.peak - beforePlain.rss,
                         second.peak - beforeSecond.rss}) {
    EXPECT_LT(cost, oldPeak);
    if (text > (64u << 20)) {
      EXPECT_LT(cost, half);
    }
  }
}

TEST(ApiMetricsScale, ScrapesServeTheLastRenderingPlainOrGzip) {
  measure(MetricsOptions{}, "defaults (switch ports; traffic, errors, congestion)");
}
TEST(ApiMetricsScale, EveryPortEveryCounterSet) {
  MetricsOptions all;
  all.ports = PortScope::kAll;
  all.counterSets = MetricsOptions::allCounterSets();
  measure(all, "ports all, every counter set");
}

}  // namespace
}  // namespace ibfabric::api
