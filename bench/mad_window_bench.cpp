// mad_window_bench: MADs per second of the MAD engine at several windows on a live (simulated)
// fabric. Finds the switches with libibnetdisc, then sends PortCountersExtended GETs to every
// port of every switch, one batch per round, at each window in turn.
//
//   ibfabric sim run --name F -- build-bench/mad_window_bench --windows 1,4,8,16,32,64,128
//
// Options: --windows LIST  --rounds N (batches per window, default 3)  --timeout-ms T (200)
//          --retries R (3)  --per-target P (0 = no per-target cap)  --watchdog-s S (30)
//          --ca NAME --port N  --attr pce|pc  --dump (print every decoded reply)
//          --save-targets FILE (write "lid ports" lines after discovery)
//          --targets FILE (read them instead of discovering, e.g. while MADs are being dropped)
// One output line per window:
//   window=W mads=N ok=K seconds=S mads_per_s=X timeouts=.. lost=.. retries=.. failed=..
//   aborted=.. duplicates=.. late=.. unmatched=.. max_in_flight=..
// Exit status 0 when every window completed every request, 1 otherwise, 2 on setup errors.
#include <infiniband/ibnetdisc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "telemetry/clock.h"
#include "telemetry/mad_engine.h"
#include "telemetry/pma_attributes.h"
#include "telemetry/umad_transport.h"

namespace {

using namespace ibfabric;
using namespace ibfabric::mad;

struct Switch {
  std::uint16_t lid;
  int ports;
  std::string desc;
};

std::vector<Switch> discoverSwitches(const std::string& ca, int port) {
  ibnd_config_t cfg{};
  cfg.max_smps = 8;
  cfg.timeout_ms = 1000;
  cfg.retries = 3;
  std::vector<char> caName(ca.begin(), ca.end());
  caName.push_back('\0');
  ibnd_fabric_t* fabric =
      ibnd_discover_fabric(ca.empty() ? nullptr : caName.data(), port, nullptr, &cfg);
  std::vector<Switch> out;
  if (!fabric) return out;
  for (ibnd_node_t* n = fabric->switches; n; n = n->type_next) {
    out.push_back(Switch{n->smalid, n->numports, n->nodedesc});
  }
  ibnd_destroy_fabric(fabric);
  return out;
}

std::vector<int> parseList(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::atoi(item.c_str()));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> windows{1, 4, 8, 16, 32, 64, 128};
  int rounds = 3, timeoutMs = 200, retries = 3, perTarget = 0, watchdogS = 30, port = 0;
  std::string ca, attr = "pce", saveTargets, targets;
  bool dump = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--windows")
      windows = parseList(next());
    else if (a == "--rounds")
      rounds = std::atoi(next().c_str());
    else if (a == "--timeout-ms")
      timeoutMs = std::atoi(next().c_str());
    else if (a == "--retries")
      retries = std::atoi(next().c_str());
    else if (a == "--per-target")
      perTarget = std::atoi(next().c_str());
    else if (a == "--watchdog-s")
      watchdogS = std::atoi(next().c_str());
    else if (a == "--ca")
      ca = next();
    else if (a == "--port")
      port = std::atoi(next().c_str());
    else if (a == "--attr")
      attr = next();
    else if (a == "--dump")
      dump = true;
    else if (a == "--save-targets")
      saveTargets = next();
    else if (a == "--targets")
      targets = next();
    else {
      std::fprintf(stderr, "mad_window_bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }

  std::vector<Switch> switches;
  if (targets.empty()) {
    switches = discoverSwitches(ca, port);
  } else {
    std::ifstream in(targets);
    Switch s{};
    while (in >> s.lid >> s.ports) switches.push_back(s);
  }
  if (!saveTargets.empty()) {
    std::ofstream out(saveTargets);
    for (const auto& s : switches) out << s.lid << ' ' << s.ports << '\n';
  }
  if (switches.empty()) {
    std::fprintf(stderr, "mad_window_bench: no switches discovered\n");
    return 2;
  }
  std::vector<MadRequest> requests;
  int maxPorts = 0;
  for (const auto& s : switches) maxPorts = std::max(maxPorts, s.ports);
  // Port-major order spreads consecutive requests over all switches.
  for (int p = 1; p <= maxPorts; ++p) {
    for (const auto& s : switches) {
      if (p > s.ports) continue;
      auto p8 = static_cast<std::uint8_t>(p);
      requests.push_back(MadRequest{
          pmaAddress(Lid(s.lid)),
          attr == "pc" ? buildPortCountersGet(p8) : buildPortCountersExtendedGet(p8), nullptr});
    }
  }
  std::printf("switches=%zu requests_per_batch=%zu\n", switches.size(), requests.size());

  UmadTransport transport(UmadTransport::Options{ca, port, {MgmtClass::kPerfMgt}});
  std::string error;
  if (!transport.open(error)) {
    std::fprintf(stderr, "mad_window_bench: %s\n", error.c_str());
    return 2;
  }
  SteadyClock clock;
  bool allOk = true;
  for (int w : windows) {
    MadEngineOptions o;
    o.policy = MadPolicy::kFixed;  // The window is the variable measured here.
    o.window = w;
    o.perTargetWindow = perTarget;
    o.timeout = std::chrono::milliseconds(timeoutMs);
    o.retries = retries;
    o.batchWatchdog = std::chrono::seconds(watchdogS);
    MadEngine engine(transport, clock, o);
    std::size_t ok = 0, total = 0;
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < rounds; ++r) {
      auto results = engine.run(requests);
      total += results.size();
      for (std::size_t i = 0; i < results.size(); ++i) {
        if (!results[i].ok() || madStatus(results[i].reply) != 0) continue;
        ++ok;
        if (dump && r == 0) {
          const auto lid = requests[i].to.lid.value();
          if (attr == "pc") {
            auto c = decodePortCounters(results[i].reply);
            std::printf(
                "lid=%u port=%u xmit_data=%u rcv_data=%u xmit_pkts=%u rcv_pkts=%u "
                "xmit_wait=%u symbol_errors=%u\n",
                lid, c.portSelect, c.portXmitData, c.portRcvData, c.portXmitPkts, c.portRcvPkts,
                c.portXmitWait, c.symbolErrorCounter);
          } else {
            auto c = decodePortCountersExtended(results[i].reply);
            std::printf(
                "lid=%u port=%u xmit_data=%llu rcv_data=%llu xmit_pkts=%llu "
                "rcv_pkts=%llu\n",
                lid, c.portSelect, static_cast<unsigned long long>(c.portXmitData),
                static_cast<unsigned long long>(c.portRcvData),
                static_cast<unsigned long long>(c.portXmitPkts),
                static_cast<unsigned long long>(c.portRcvPkts));
          }
        }
      }
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const MadEngineStats s = engine.stats();
    std::printf(
        "window=%d mads=%zu ok=%zu seconds=%.3f mads_per_s=%.0f timeouts=%llu lost=%llu "
        "retries=%llu failed=%llu aborted=%llu duplicates=%llu late=%llu unmatched=%llu "
        "max_in_flight=%llu\n",
        w, total, ok, secs, static_cast<double>(ok) / secs,
        static_cast<unsigned long long>(s.timeouts),
        static_cast<unsigned long long>(s.lostReported), static_cast<unsigned long long>(s.retries),
        static_cast<unsigned long long>(s.failed), static_cast<unsigned long long>(s.aborted),
        static_cast<unsigned long long>(s.duplicates),
        static_cast<unsigned long long>(s.lateReplies),
        static_cast<unsigned long long>(s.unmatched),
        static_cast<unsigned long long>(s.maxInFlight));
    std::fflush(stdout);
    if (ok != total) allOk = false;
  }
  transport.close();
  return allOk ? 0 : 1;
}
