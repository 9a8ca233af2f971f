// `ibfabric counters`: crawl the fabric, then sweep the port counters of every linked port (or
// the selected ones) with the MAD engine. One sweep prints raw counters; two or more print
// rates, utilization, congestion and link health for every interval, plus the events seen.
//
// `--save FILE` writes the last sweep's raw samples together with the topology it swept (as
// ibnetdiscover text); `--baseline FILE` reads such a file as the sweep before the first one, so
// two invocations give rates (the steady clock is system-wide), and compares the saved topology
// with the fresh crawl: links that went down or came up in between become link_down / link_up
// events, and ports that lost their link are reported gone once and not polled.
// `--recrawl` crawls again before every sweep after the first, with the same effect mid-run.
//
// Output is streamed (counters/counters_report.h): each port is printed as soon as the sweep has
// read it (CounterSweeper::sweep with a sink), so memory stays at the topology, one sweep's
// samples and the engine's slices, and the first lines appear while the sweep still runs.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "discovery/crawler.h"
#include "discovery/formats.h"
#include "discovery/net_topology.h"
#include "telemetry/clock.h"
#include "telemetry/counter_history.h"
#include "telemetry/counter_sweep.h"
#include "telemetry/event_log.h"
#include "telemetry/link_health_eval.h"
#include "telemetry/mad_engine.h"
#include "telemetry/port_rates.h"
#include "telemetry/sweep_analysis.h"
#include "telemetry/umad_transport.h"
#include "tools/ibfabric/commands.h"
#include "tools/ibfabric/counters/counters_json.h"
#include "tools/ibfabric/counters/counters_report.h"

namespace ibfabric::cli {
namespace {

using nlohmann::json;
using namespace ibfabric::telemetry;

struct CountersArgs {
  std::string node;
  std::string host;
  int port = -1;
  double interval = 1.0;
  int count = 1;
  std::string format = "table";
  double window = 300.0;
  std::string save;
  std::string baseline;
  int madWindow = 256;  // MadEngineOptions::window default; see docs/BENCHMARKS.md
  int timeoutMs = 200;
  int retries = 3;
  std::string madPolicy = "adaptive";  // telemetry/mad_policy/flow_control.h
  double xmitWaitTickNs = static_cast<double>(kDefaultXmitWaitTick.count());
  bool clearSaturated = false;
  bool recrawl = false;
  CrawlOptions crawl;
};

// The sweep before the first one, read from a --save file.
struct Baseline {
  CounterSnapshotPtr snapshot;
  TopologyPtr topology;  ///< What it was swept on; null for files from before it was saved.
};

TopologyPtr crawl(TopologySource& source) {
  try {
    return source.discover();
  } catch (const CrawlError& e) {
    throw CliError(e.what());
  }
}

// The ports --node / --host / --port select, and the clear-saturated policy.
SweepOptions sweepOptions(const CountersArgs& args, const Topology& topo) {
  SweepOptions so;
  so.clearSaturated = args.clearSaturated;
  std::optional<Guid> nodeGuid;
  std::set<Guid> hostGuids;
  if (!args.node.empty()) {
    nodeGuid = parseGuid(args.node);
    if (!nodeGuid) throw CliError("--node: not a GUID: " + args.node);
    if (!topo.findNode(*nodeGuid)) {
      auto port = topo.findPort(*nodeGuid);
      if (!port) throw CliError("--node: no node or port with GUID " + args.node);
      nodeGuid = topo.node(port->node).guid;
    }
  }
  if (!args.host.empty()) {
    const Host* h = topo.findHost(args.host);
    if (!h) throw CliError("--host: no host named \"" + args.host + "\"");
    for (NodeIndex n : h->hcas) hostGuids.insert(topo.node(n).guid);
  }
  if (nodeGuid || !hostGuids.empty() || args.port >= 0) {
    so.portFilter = [nodeGuid, hostGuids, port = args.port](const Node& n, const Port& p) {
      if (nodeGuid && n.guid != *nodeGuid) return false;
      if (!hostGuids.empty() && !hostGuids.count(n.guid)) return false;
      if (port >= 0 && p.num.value() != port) return false;
      return true;
    };
  }
  return so;
}

std::optional<Baseline> loadBaseline(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  if (!in) throw CliError("cannot read " + path);
  json b = json::parse(in, nullptr, false);
  if (b.is_discarded() || !b.contains("ports")) throw CliError("bad baseline " + path);
  auto snap = std::make_shared<CounterSnapshot>();
  try {
    for (const auto& p : b["ports"]) snap->ports.push_back(sampleFromJson(p));
  } catch (const std::exception& e) {
    throw CliError("baseline: " + std::string(e.what()));
  }
  std::sort(snap->ports.begin(), snap->ports.end(),
            [](const PortSample& x, const PortSample& y) { return x.key < y.key; });
  Baseline out{snap, nullptr};
  // Files from before the topology was saved carry counters only: rates, no link events.
  if (b.contains("topology_ibnetdiscover")) {
    try {
      out.topology = topologyFromNetFabric(
          parseNetText(b["topology_ibnetdiscover"].get<std::string>(), path), "baseline " + path);
    } catch (const std::exception& e) {
      throw CliError("bad topology in baseline " + path + ": " + e.what());
    }
  }
  return out;
}

// The last sweep's summary and raw samples (sorted) and the topology it was swept on, written
// record by record.
void saveLast(const std::string& path, const CounterSnapshot& last, const Topology& crawled) {
  std::ofstream o(path, std::ios::trunc);
  const std::string summary = sweepSummaryJson(last).dump();
  o << summary.substr(0, summary.size() - 1) << ",\"ports\":[";
  for (std::size_t i = 0; i < last.ports.size(); ++i)
    o << (i ? ",\n" : "\n") << sampleJson(last.ports[i]).dump();
  o << "\n],\"topology_ibnetdiscover\":"
    << json(formatIbnetdiscover(last.topology ? *last.topology : crawled)).dump() << "}\n";
  if (!o) throw CliError("cannot write " + path);
}

mad::MadEngineOptions engineOptions(const CountersArgs& args) {
  mad::MadEngineOptions eo;
  eo.window = args.madWindow;
  eo.timeout = std::chrono::milliseconds(args.timeoutMs);
  eo.retries = args.retries;
  eo.policy = mad::parseMadPolicy(args.madPolicy).value_or(mad::MadPolicy::kAdaptive);
  return eo;
}

SweepAnalysisOptions analysisOptions(const CountersArgs& args) {
  RateOptions ro;
  ro.xmitWaitTick = std::chrono::nanoseconds(static_cast<std::int64_t>(args.xmitWaitTickNs));
  HealthThresholds ht = HealthThresholds::defaults();
  ht.errorWindow = std::chrono::seconds(static_cast<std::int64_t>(args.window));
  return {ht, ro};
}

// A run holds at most the baseline and its own sweeps: a deeper history would only be
// allocated, never filled (each port's ring is sized up front).
std::size_t historyDepth(const CountersArgs& args) {
  return static_cast<std::size_t>(std::min(args.count + 1, 64));
}

// The sweeps, each printed as it goes; returns the health of the last interval.
std::vector<LinkHealthReport> sweepLoop(const CountersArgs& args, TopologySource& source,
                                        CounterSweeper& sweeper, SweepAnalyzer& analyzer,
                                        EventLog& events, CountersReport& report) {
  std::vector<LinkHealthReport> health;
  auto next = std::chrono::steady_clock::now();
  for (int i = 0; i < args.count; ++i) {
    if (i > 0) {
      next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(args.interval));
      std::this_thread::sleep_until(next);
      if (args.recrawl) {
        try {
          followTopology(sweeper, events, source.discover());
        } catch (const CrawlError& e) {
          std::fprintf(stderr,
                       "ibfabric: warning: re-crawl failed, sweeping the previous topology: %s\n",
                       e.what());
        }
      }
    }
    const bool previous = analyzer.previous() != nullptr;
    report.beginSweep(!previous);
    auto snap = sweeper.sweep([&](const PortSample& s) { report.port(s); });
    report.endSweep(*snap);
    SweepAnalysis found = analyzer.analyze(snap, events);
    // A single sweep shows raw counters only: its health has no interval behind it.
    if (previous) {
      report.rates(*snap, found.rates);
      health = std::move(found.health);
    }
  }
  return health;
}

void runCounters(const CountersArgs& args) {
  if (args.count < 1) throw CliError("--count must be at least 1");
  CrawlOptions crawlOptions = args.crawl;
  crawlOptions.retries = static_cast<unsigned>(std::max(args.retries, 0));
  auto source = makeSmpCrawler(crawlOptions);
  TopologyPtr topo = crawl(*source);
  SweepOptions so = sweepOptions(args, *topo);
  const std::optional<Baseline> baseline = loadBaseline(args.baseline);

  mad::UmadTransport::Options to;
  to.caName = args.crawl.ca;
  to.port = args.crawl.caPort;
  mad::UmadTransport transport(to);
  std::string error;
  if (!transport.open(error)) throw CliError("cannot open umad: " + error);
  so.samplesControlAvoid = {transport.smLid(), transport.localLid()};

  CounterHistory history(historyDepth(args), analysisOptions(args).rates);
  EventLog events(10000);
  SweepAnalyzer analyzer(history, analysisOptions(args));
  if (baseline) analyzer.setBaseline(baseline->snapshot);
  auto report =
      args.format == "json" ? makeJsonReport(stdout, args.xmitWaitTickNs) : makeTableReport(stdout);

  std::vector<LinkHealthReport> health;
  mad::MadEngineStats engineStats;
  {
    mad::SteadyClock clock;
    mad::MadEngine engine(transport, clock, engineOptions(args));
    CounterSweeper sweeper(engine, clock, so);
    // With a saved topology, the sweeper starts from it, so the live crawl's differences are
    // events and the ports that lost their link are reported gone.
    if (baseline && baseline->topology) sweeper.setTopology(baseline->topology);
    followTopology(sweeper, events, topo);
    health = sweepLoop(args, *source, sweeper, analyzer, events, *report);
    engineStats = engine.stats();
  }
  transport.close();
  if (const auto& last = analyzer.previous(); !args.save.empty() && last)
    saveLast(args.save, *last, *topo);
  report->finish(health, events.query(), engineStats);
}

}  // namespace

void addCountersCommand(CLI::App& app) {
  auto args = std::make_shared<CountersArgs>();
  auto* cmd = app.add_subcommand(
      "counters", "Sweep port counters: raw values (one sweep) or rates and health (two or more)");
  auto* node = cmd->add_option("--node", args->node, "only this node (node or port GUID)");
  cmd->add_option("--host", args->host, "only the HCAs of this host")->excludes(node);
  cmd->add_option("--port", args->port, "only this port number");
  cmd->add_option("--interval", args->interval, "seconds between sweeps")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--count", args->count, "number of sweeps")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--format", args->format, "table|json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->add_option("--window", args->window, "seconds of history for error-rate health checks")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--save", args->save,
                  "write the last sweep's raw samples and its topology to FILE (JSON)");
  cmd->add_option("--baseline", args->baseline,
                  "a file written by --save: rates from it to the first sweep, link down/up "
                  "events from its topology to the crawl")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--recrawl", args->recrawl,
                "crawl again before every sweep after the first: links that go down or come up "
                "mid-run become events, ports that lose their link stop being polled");
  cmd->add_option("--mad-window", args->madWindow, "MADs in flight")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--timeout-ms", args->timeoutMs, "per-MAD timeout")->capture_default_str();
  cmd->add_option("--retries", args->retries, "re-sends per MAD")->capture_default_str();
  cmd->add_option("--mad-policy", args->madPolicy,
                  "adaptive: window, timeout and retries are limits the engine adapts within; "
                  "fixed: used as given")
      ->check(CLI::IsMember({"adaptive", "fixed"}))
      ->capture_default_str();
  cmd->add_option("--xmit-wait-tick-ns", args->xmitWaitTickNs,
                  "length of one PortXmitWait tick in ns")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--clear-saturated", args->clearSaturated,
                "clear saturated counters after reading them (PortCounters SET)");
  cmd->add_option("--ca", args->crawl.ca, "umad device (default: the first)");
  cmd->add_option("--ca-port", args->crawl.caPort, "port of that device (default: first active)");
  cmd->callback([args] { runCounters(*args); });
}

}  // namespace ibfabric::cli
