// A trap storm on the daemon's OpenSM socket (the test plays the plugin) against an ibsim +
// OpenSM fabric: 19,800 trap 128 lines in 10 s — from every switch, from a LID no switch has and
// without a LID — plus reroutes, become a bounded number of probes, crawls and route refreshes,
// counted as bursts and coalesced events in /health and /metrics; a cable Unlinked halfway
// through the storm is still a link_down. Every wait is bounded.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "discovery/netfile.h"
#include "tests/support/daemon_process.h"
#include "tests/support/fabrics.h"
#include "tests/support/net_edits.h"
#include "tests/support/rest_get.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

int connectUnix(const std::filesystem::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool writeAll(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

std::string trapLine(std::uint64_t seq, int lid) {
  return R"({"type":"trap","seq":)" + std::to_string(seq) + R"(,"time":0,"dropped":0,"trap":128,)" +
         R"("issuer_lid":)" + std::to_string(lid) + "}\n";
}

TEST(OsmStormSim, ATrapStormIsCoalescedAndALinkChangeInsideItIsReported) {
  const auto gen = generate(twoLevel(2, 2, 2));
  const auto net = writeScratchFile("storm.net", gen.headerComment() + formatNetFile(gen.fabric));
  const NetNode* leaf = gen.fabric.find("leaf-02");  // the daemon and OpenSM sit under leaf-01
  ASSERT_NE(leaf, nullptr);
  const NetPort* up = firstSwitchPort(gen.fabric, *leaf);
  ASSERT_NE(up, nullptr);
  SimFabric fabric(net, "storm");
  const auto socket = scratchDir() / "storm-osm.sock";
  // Crawls only when asked (600 s), so every crawl counted is one the storm asked for.
  const auto config = writeScratchFile(
      "storm.yaml", "sweep_interval: 60\ncrawl_interval: 600\nsm_traps: false\nosm_events: " +
                        socket.string() + "\n");
  std::unique_ptr<JsonClient> http;
  auto daemon = startReadyDaemon(fabric, config, "storm", http);
  ASSERT_TRUE(daemon);
  std::vector<int> switchLids;
  const json nodes = http->ok("/api/v1/nodes");
  for (const auto& n : nodes["nodes"])
    if (n["type"] == "switch") switchLids.push_back(n["lid"]);
  ASSERT_EQ(switchLids.size(), 4u);
  const json before = http->ok("/api/v1/health");
  const std::uint64_t crawlsBefore = before["crawl"]["runs"];
  const int fd = connectUnix(socket);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(waitFor([&] { return http->ok("/api/v1/health")["osm"]["connected"] == true; }, 10s));

  // 19,800 lines in 10 s, in 100 slices of 198; halfway, leaf-02's first cable is Unlinked.
  std::vector<int> from = switchLids;
  from.push_back(9999);  // no switch has it
  from.push_back(0);     // no LID at all
  std::uint64_t seq = 0;
  const auto start = Clock::now();
  for (int slice = 0; slice < 100; ++slice) {
    std::string batch;
    for (int i = 0; i < 198; ++i, ++seq) batch += trapLine(seq + 1, from[seq % from.size()]);
    if (slice % 2 == 0)  // reroutes 200 ms apart: a burst too
      batch += R"({"type":"ucast_routing_done","seq":)" + std::to_string(++seq) +
               R"(,"time":0,"dropped":0,"reason":"reroute"})" + "\n";
    ASSERT_TRUE(writeAll(fd, batch));
    if (slice == 50) {
      const auto r =
          fabric.cmd("Unlink \"" + leaf->id + "\"[" + std::to_string(up->port.value()) + "]");
      ASSERT_EQ(r.exitCode, 0) << r.describe();
    }
    std::this_thread::sleep_until(start + (slice + 1) * 100ms);  // the storm's pace, not a wait
  }
  // The cable is reported, and the storm's bursts end (1 s quiet) with their trailing runs.
  ASSERT_TRUE(waitFor([&] { return hasEvent(*http, "link_down", leaf->name()); }, 20s, 100ms))
      << daemon->log();
  json osm;
  ASSERT_TRUE(waitFor(
      [&] {
        osm = http->ok("/api/v1/health")["osm"];
        return osm["coalescing"]["events"].get<std::uint64_t>() >= 19800 &&
               osm["coalescing"]["bursts"].get<std::uint64_t>() >= 3;
      },
      20s, 100ms))
      << osm.dump();
  ::close(fd);
  const json after = http->ok("/api/v1/health");
  const std::uint64_t crawls = after["crawl"]["runs"].get<std::uint64_t>() - crawlsBefore;
  const std::uint64_t probes = after["osm"]["port_probes"];
  const std::uint64_t refreshes = after["osm"]["route_refresh_requests"];
  const json& c = after["osm"]["coalescing"];
  std::printf(
      "[ storm ] %llu events in %.1f s: %llu runs, %llu bursts; %llu crawls, %llu probes, "
      "%llu route refreshes\n",
      static_cast<unsigned long long>(c["events"].get<std::uint64_t>()),
      std::chrono::duration<double>(Clock::now() - start).count(),
      static_cast<unsigned long long>(c["runs"].get<std::uint64_t>()),
      static_cast<unsigned long long>(c["bursts"].get<std::uint64_t>()),
      static_cast<unsigned long long>(crawls), static_cast<unsigned long long>(probes),
      static_cast<unsigned long long>(refreshes));
  // 6 keys (4 switch probes, the crawl, the refresh), each at most 2 + 10 s / 5 s runs.
  EXPECT_LE(c["runs"].get<std::uint64_t>(), 6u * 4u);
  EXPECT_GE(c["coalesced"].get<std::uint64_t>(), 19800u - 24u);
  EXPECT_LE(crawls, 4u + 2u);  // the coalesced ones, and what a probe may ask for
  // The coalesced probe runs (at most 16) and what the service adds for the downed cable (its
  // far end, the retries while the SM reroutes, the sweeps' own probes): was 1,201.
  EXPECT_LE(probes, 50u);
  EXPECT_LE(refreshes, 4u);
  const std::string page = metricsWith(http->client, {"ibfabric_osm_event_bursts_total"});
  EXPECT_NE(page.find("ibfabric_osm_events_coalesced_total "), std::string::npos);
  const std::string log = daemon->log();
  EXPECT_LT(std::count(log.begin(), log.end(), '\n'), 400)
      << "logging is summarised, not one line per trap";
  const int st = daemon->signalAndWait(SIGTERM, 10s);
  EXPECT_NE(st, -1);
}

}  // namespace
}  // namespace ibfabric::testing
