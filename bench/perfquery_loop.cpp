// perfquery_loop: the peer baseline of the counter-sweep benchmark. What `perfquery -x` followed
// by `perfquery` does for one port, done for every linked port of the fabric one at a time:
// libibmad's blocking pma_query_via, PortCountersExtended then PortCounters, one MAD in flight.
// Process start-up, umad open and the ClassPortInfo query each perfquery invocation also makes
// are left out (--with-cpi adds the ClassPortInfo queries), so the loop is the most favourable
// form of "shell out to perfquery per port".
//
//   ibfabric sim run --name F -- build/bench/perfquery_loop --rounds 3
//
// The port list is the counter sweep's: discovery's SMP crawler (not timed), every connected
// port; switch ports at the switch LID, CA ports at their own LID.
// Options: --rounds N (3)  --timeout-ms T (200)  --retries R (3)  --with-cpi
// Output: one "round" line per round, then one "summary" line (median/min/max).
// Exit status 0 when every query was answered, 1 otherwise, 2 on setup errors.
#include <infiniband/mad.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "discovery/crawler.h"

namespace {

using namespace ibfabric;
using Seconds = std::chrono::duration<double>;

struct Target {
  int lid;
  int port;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 3, timeoutMs = 200, retries = 3;
  bool withCpi = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--rounds")
      rounds = std::atoi(next().c_str());
    else if (a == "--timeout-ms")
      timeoutMs = std::atoi(next().c_str());
    else if (a == "--retries")
      retries = std::atoi(next().c_str());
    else if (a == "--with-cpi")
      withCpi = true;
    else {
      std::fprintf(stderr, "perfquery_loop: unknown option %s\n", a.c_str());
      return 2;
    }
  }

  TopologyPtr topo;
  const auto c0 = std::chrono::steady_clock::now();
  try {
    topo = makeSmpCrawler(CrawlOptions{})->discover();
  } catch (const CrawlError& e) {
    std::fprintf(stderr, "perfquery_loop: crawl: %s\n", e.what());
    return 2;
  }
  std::vector<Target> targets;
  for (const Node& node : topo->nodes()) {
    for (const auto& p : node.ports) {
      if (!p || !p->connected()) continue;
      if (node.isSwitch() && p->num.value() == 0) continue;
      Lid lid = node.isSwitch() ? node.lid() : p->lid;
      if (lid.value() == 0) continue;
      targets.push_back({lid.value(), p->num.value()});
    }
  }
  std::printf("crawl nodes=%zu ports=%zu seconds=%.3f\n", topo->nodes().size(), targets.size(),
              Seconds(std::chrono::steady_clock::now() - c0).count());

  int classes[] = {IB_SMI_CLASS, IB_SA_CLASS, IB_PERFORMANCE_CLASS};
  ibmad_port* src = mad_rpc_open_port(nullptr, 0, classes, 3);
  if (!src) {
    std::fprintf(stderr, "perfquery_loop: mad_rpc_open_port failed\n");
    return 2;
  }
  mad_rpc_set_timeout(src, timeoutMs);
  mad_rpc_set_retries(src, retries);

  const unsigned perPort = withCpi ? 4 : 2;
  std::vector<double> portsPerS, madsPerS, secs;
  bool allOk = true;
  std::uint64_t checksum = 0;
  for (int r = 0; r < rounds; ++r) {
    std::size_t ok = 0, failed = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (const Target& t : targets) {
      bool portOk = true;
      const unsigned ids[] = {IB_GSI_PORT_COUNTERS_EXT, IB_GSI_PORT_COUNTERS};
      for (unsigned id : ids) {
        std::uint8_t buf[1024];
        ib_portid_t portid{};
        if (withCpi) {
          std::memset(buf, 0, sizeof buf);
          ib_portid_set(&portid, t.lid, 0, 0);
          if (!pma_query_via(buf, &portid, t.port, static_cast<unsigned>(timeoutMs),
                             CLASS_PORT_INFO, src)) {
            ++failed;
            portOk = false;
          }
        }
        std::memset(buf, 0, sizeof buf);
        ib_portid_set(&portid, t.lid, 0, 0);
        if (!pma_query_via(buf, &portid, t.port, static_cast<unsigned>(timeoutMs), id, src)) {
          ++failed;
          portOk = false;
          continue;
        }
        // Decode one counter of each, as a consumer would.
        std::uint64_t v = 0;
        if (id == IB_GSI_PORT_COUNTERS_EXT)
          mad_decode_field(buf, IB_PC_EXT_XMT_BYTES_F, &v);
        else
          mad_decode_field(buf, IB_PC_ERR_SYM_F, &v);
        checksum += v;
      }
      ok += portOk ? 1 : 0;
    }
    const double s = Seconds(std::chrono::steady_clock::now() - t0).count();
    const double mads = static_cast<double>(targets.size() * perPort - failed);
    portsPerS.push_back(static_cast<double>(ok) / s);
    madsPerS.push_back(mads / s);
    secs.push_back(s);
    if (failed) allOk = false;
    std::printf(
        "round i=%d ports=%zu ok=%zu mads=%zu failed=%zu seconds=%.4f ports_per_s=%.0f "
        "mads_per_s=%.0f\n",
        r + 1, targets.size(), ok, targets.size() * perPort, failed, s, portsPerS.back(),
        madsPerS.back());
    std::fflush(stdout);
  }
  mad_rpc_close_port(src);
  std::printf(
      "summary mode=loop window=1 ports=%zu mads=%zu rounds=%d seconds_median=%.4f "
      "ports_per_s_median=%.0f ports_per_s_min=%.0f ports_per_s_max=%.0f mads_per_s_median=%.0f "
      "mads_per_s_min=%.0f mads_per_s_max=%.0f checksum=%llu\n",
      targets.size(), targets.size() * perPort, rounds, median(secs), median(portsPerS),
      *std::min_element(portsPerS.begin(), portsPerS.end()),
      *std::max_element(portsPerS.begin(), portsPerS.end()), median(madsPerS),
      *std::min_element(madsPerS.begin(), madsPerS.end()),
      *std::max_element(madsPerS.begin(), madsPerS.end()),
      static_cast<unsigned long long>(checksum));
  return allOk ? 0 : 1;
}
