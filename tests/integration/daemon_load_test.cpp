// ibfabricd on an ibsim + OpenSM fabric (fat tree, 2 x 2 x 2) under 50 keep-alive clients, each
// asking ~3 requests a second for 20 s in turn for /api/v1/links, /api/v1/topology (the fabric
// document) and /metrics, while a liveness prober asks /api/v1/health/live 5 times a second on a
// connection of its own: every answer is 200 and every liveness answer comes within 1 s (the
// kubelet's probe timeout: a correctness bound). p50 / p99 of each path are printed (figures in
// docs/BENCHMARKS.md "Keep-alive load"). Every wait is bounded; the pacing sleeps are the load's
// shape.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/rest_get.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Samples {
  std::mutex mu;
  std::map<std::string, std::vector<double>> seconds;  ///< by path
  std::map<std::string, int> failures;
  void add(const std::string& path, bool ok, double s) {
    std::lock_guard lock(mu);
    seconds[path].push_back(s);
    if (!ok) ++failures[path];
  }
};

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

/// GETs `paths` in turn every `period` on one keep-alive connection until `end`.
void client(int port, const std::vector<std::string>& paths, Clock::duration period,
            Clock::time_point end, int offset, Samples& out) {
  httplib::Client c("127.0.0.1", port);
  c.set_keep_alive(true);
  c.set_read_timeout(10, 0);
  auto next = Clock::now() + period * offset / 50;  // spread the clients over one period
  for (std::size_t i = static_cast<std::size_t>(offset); Clock::now() < end; ++i) {
    std::this_thread::sleep_until(next);
    next += period;
    const std::string& path = paths[i % paths.size()];
    const auto t0 = Clock::now();
    auto res = c.Get(path.c_str());
    out.add(path, res && res->status == 200,
            std::chrono::duration<double>(Clock::now() - t0).count());
  }
}

TEST(DaemonLoad, FiftyKeepAliveClientsAndLivenessAnsweredWithinOneSecond) {
  auto net = writeScratchFile("load.net", fatTreeText("l", 2, 2, 2));
  SimFabric fabric(net, "load");
  auto config = writeScratchFile("load.yaml", "sweep_interval: 1\n");
  std::unique_ptr<JsonClient> http;
  int port = 0;
  auto daemon = startReadyDaemon(fabric, config, "load", http, &port);
  ASSERT_TRUE(daemon);

  Samples samples;
  const std::vector<std::string> paths = {"/api/v1/links", "/api/v1/topology", "/metrics"};
  const auto end = Clock::now() + 20s;
  std::vector<std::thread> clients;
  for (int i = 0; i < 50; ++i)
    clients.emplace_back([&, i] { client(port, paths, 333ms, end, i, samples); });
  std::thread prober([&] { client(port, {"/api/v1/health/live"}, 200ms, end, 0, samples); });
  for (auto& t : clients) t.join();
  prober.join();

  int total = 0;
  for (const auto& [path, v] : samples.seconds) {
    total += static_cast<int>(v.size());
    std::printf("[ load ] %-20s %5zu requests  p50 %.4f s  p99 %.4f s  max %.4f s\n", path.c_str(),
                v.size(), quantile(v, 0.50), quantile(v, 0.99), quantile(v, 1.0));
    EXPECT_EQ(samples.failures[path], 0) << path;
  }
  EXPECT_GT(total, 50 * 3 * 15);  // the load was offered (≈ 3 req/s per client for 20 s)
  const auto& live = samples.seconds["/api/v1/health/live"];
  EXPECT_GE(live.size(), 90u);
  EXPECT_LT(quantile(live, 1.0), 1.0) << "a liveness probe took over 1 s";
  EXPECT_LT(quantile(samples.seconds["/api/v1/links"], 0.99), 1.0);
  const int status = daemon->signalAndWait(SIGTERM, 10s);
  EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace ibfabric::testing
