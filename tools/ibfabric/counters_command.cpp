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
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <memory>
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
  double xmitWaitTickNs = static_cast<double>(kDefaultXmitWaitTick.count());
  bool clearSaturated = false;
  bool recrawl = false;
  CrawlOptions crawl;
};

std::string hex(Guid g) { return toString(g); }

json sampleJson(const PortSample& s) {
  json j;
  j["node_guid"] = hex(s.key.node);
  j["node"] = s.nodeDescription;
  j["port"] = s.key.port.value();
  j["lid"] = s.lid.value();
  j["type"] = s.nodeType == NodeType::kSwitch ? "switch" : "ca";
  j["status"] = std::string(toString(s.status));
  if (!s.detail.empty()) j["detail"] = s.detail;
  j["at_ns"] = s.at.time_since_epoch().count();
  if (s.rate) j["rate"] = s.rate->toString();
  if (s.remote) {
    j["remote"] = {{"node_guid", hex(s.remote->node)},
                   {"node", s.remoteDescription},
                   {"port", s.remote->port.value()}};
  }
  json counters = json::object(), bits = json::object(), saturated = json::array();
  for (Counter c : kAllCounters) {
    if (!s.counters.has(c)) continue;
    counters[std::string(toString(c))] = s.counters.get(c);
    bits[std::string(toString(c))] = s.counters.bits[index(c)];
    if (s.counters.saturated(c)) saturated.push_back(std::string(toString(c)));
  }
  j["counters"] = counters;
  j["bits"] = bits;
  j["saturated"] = saturated;
  if (!s.clearedAfterRead.empty()) {
    json cl = json::array();
    for (Counter c : s.clearedAfterRead) cl.push_back(std::string(toString(c)));
    j["cleared_after_read"] = cl;
  }
  return j;
}

std::optional<Counter> counterByName(const std::string& name) {
  for (Counter c : kAllCounters)
    if (toString(c) == name) return c;
  return std::nullopt;
}

PortSample sampleFromJson(const json& j) {
  PortSample s;
  auto guid = parseGuid(j.at("node_guid").get<std::string>());
  if (!guid) throw CliError("baseline: bad node_guid");
  s.key = {*guid, PortNum(j.at("port").get<std::uint8_t>())};
  s.nodeDescription = j.value("node", "");
  s.lid = Lid(j.value("lid", std::uint16_t{0}));
  const std::string status = j.value("status", "ok");
  s.status = status == "ok" ? PortStatus::kOk : PortStatus::kTimeout;
  s.at = mad::Clock::time_point(mad::Clock::duration(j.at("at_ns").get<std::int64_t>()));
  if (j.contains("rate")) s.rate = parseLinkRate(j["rate"].get<std::string>());
  for (auto& [name, v] : j.at("counters").items()) {
    auto c = counterByName(name);
    if (!c) continue;
    s.counters.set(*c, v.get<std::uint64_t>(), j.at("bits").at(name).get<int>());
  }
  if (j.contains("cleared_after_read")) {
    for (const auto& n : j["cleared_after_read"])
      if (auto c = counterByName(n.get<std::string>())) s.clearedAfterRead.push_back(*c);
  }
  return s;
}

json snapshotJson(const CounterSnapshot& snap) {
  json j;
  j["sequence"] = snap.sequence;
  j["started_ns"] = snap.started.time_since_epoch().count();
  j["duration_s"] = std::chrono::duration<double>(snap.stats.duration).count();
  j["ports_polled"] = snap.stats.ports;
  j["ports_ok"] = snap.stats.portsOk;
  j["requests"] = snap.stats.requests;
  j["attempts"] = snap.stats.attempts;
  j["retries"] = snap.stats.retries;
  j["failed_requests"] = snap.stats.failedRequests;
  j["class_port_info_queries"] = snap.stats.classPortInfoQueries;
  json failures = json::array();
  for (const auto& f : snap.failures) {
    failures.push_back({{"lid", f.lid.value()},
                        {"node_guid", hex(f.node)},
                        {"node", f.nodeDescription},
                        {"failed_requests", f.failedRequests},
                        {"requests", f.requests},
                        {"attempts", f.attempts},
                        {"reason", f.reason}});
  }
  j["failures"] = failures;
  json ports = json::array();
  for (const auto& s : snap.ports) ports.push_back(sampleJson(s));
  j["ports"] = ports;
  return j;
}

json optNum(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json ratesJson(const PortRates& r, const PortSample* s) {
  json j;
  j["node_guid"] = hex(r.key.node);
  if (s) j["node"] = s->nodeDescription;
  j["port"] = r.key.port.value();
  j["interval_s"] = r.intervalSeconds;
  j["tx_bytes_per_s"] = optNum(r.txBytesPerSecond);
  j["rx_bytes_per_s"] = optNum(r.rxBytesPerSecond);
  j["tx_packets_per_s"] = optNum(r.txPacketsPerSecond);
  j["rx_packets_per_s"] = optNum(r.rxPacketsPerSecond);
  j["tx_utilization"] = optNum(r.txUtilization);
  j["rx_utilization"] = optNum(r.rxUtilization);
  j["congestion"] = optNum(r.congestion);
  json deltas = json::object();
  for (Counter c : kAllCounters) {
    const CounterDelta& d = r[c];
    json x = {{"state", std::string(toString(d.state))}};
    if (d.ok()) {
      x["delta"] = d.delta;
      x["per_s"] = d.perSecond;
    }
    if (d.saturated) x["saturated"] = true;
    deltas[std::string(toString(c))] = x;
  }
  j["deltas"] = deltas;
  json resets = json::array(), saturated = json::array();
  for (Counter c : r.resets()) resets.push_back(std::string(toString(c)));
  for (Counter c : r.saturated()) saturated.push_back(std::string(toString(c)));
  j["resets"] = resets;
  j["saturated"] = saturated;
  return j;
}

json healthJson(const LinkHealthReport& r) {
  json reasons = json::array();
  for (const auto& x : r.reasons) {
    reasons.push_back({{"code", x.code},
                       {"node_guid", hex(x.port.node)},
                       {"port", x.port.port.value()},
                       {"text", x.text}});
  }
  return {
      {"a", {{"node_guid", hex(r.a.node)}, {"node", r.aDescription}, {"port", r.a.port.value()}}},
      {"b", {{"node_guid", hex(r.b.node)}, {"node", r.bDescription}, {"port", r.b.port.value()}}},
      {"state", std::string(toString(r.state))},
      {"congestion", optNum(r.congestion)},
      {"reasons", reasons}};
}

json eventJson(const Event& e) {
  json j = {
      {"id", e.id},
      {"type", std::string(toString(e.type))},
      {"time",
       std::chrono::duration_cast<std::chrono::milliseconds>(e.time.time_since_epoch()).count()},
      {"node_guid", hex(e.end.node)},
      {"node", e.end.description},
      {"port", e.end.port.value()},
      {"message", e.message}};
  if (e.remote) {
    j["remote"] = {{"node_guid", hex(e.remote->node)},
                   {"node", e.remote->description},
                   {"port", e.remote->port.value()}};
  }
  return j;
}

std::string fmtNum(const std::optional<double>& v, double scale, const char* f) {
  if (!v) return "?";
  char buf[32];
  std::snprintf(buf, sizeof buf, f, *v * scale);
  return buf;
}

void printRawTable(const CounterSnapshot& snap) {
  std::printf("sweep %" PRIu64 ": %zu/%zu ports ok in %.3f s, %zu retries\n", snap.sequence,
              snap.stats.portsOk, snap.stats.ports,
              std::chrono::duration<double>(snap.stats.duration).count(), snap.stats.retries);
  std::printf("%-32s %4s %5s %-11s %20s %20s %14s %14s %12s  %s\n", "node", "port", "lid", "status",
              "xmit_data", "rcv_data", "xmit_pkts", "rcv_pkts", "xmit_wait", "errors");
  for (const auto& s : snap.ports) {
    auto val = [&](Counter c) {
      if (!s.counters.has(c)) return std::string("-");
      return std::to_string(s.counters.get(c)) + (s.counters.saturated(c) ? "(sat)" : "");
    };
    std::string errors;
    for (Counter c : kAllCounters) {
      if (!isErrorCounter(c) || !s.counters.has(c) || s.counters.get(c) == 0) continue;
      errors += std::string(ibName(c)) + "=" + val(c) + " ";
    }
    if (s.status != PortStatus::kOk) errors = s.detail;
    std::printf("%-32.32s %4u %5u %-11s %20s %20s %14s %14s %12s  %s\n", s.nodeDescription.c_str(),
                s.key.port.value(), s.lid.value(), std::string(toString(s.status)).c_str(),
                val(Counter::kXmitData).c_str(), val(Counter::kRcvData).c_str(),
                val(Counter::kXmitPkts).c_str(), val(Counter::kRcvPkts).c_str(),
                val(Counter::kXmitWait).c_str(), errors.c_str());
  }
  for (const auto& f : snap.failures) {
    std::printf("target lid %u (%s): %d/%d requests failed, %d sends: %s\n", f.lid.value(),
                f.nodeDescription.c_str(), f.failedRequests, f.requests, f.attempts,
                f.reason.c_str());
  }
}

void printRatesTable(const CounterSnapshot& snap, const std::vector<PortRates>& rates) {
  std::printf("interval ending at sweep %" PRIu64 "\n", snap.sequence);
  std::printf("%-32s %4s %12s %12s %7s %7s %7s  %s\n", "node", "port", "tx MB/s", "rx MB/s", "tx %",
              "rx %", "cong %", "errors/s, resets, saturated");
  for (const auto& r : rates) {
    const PortSample* s = snap.find(r.key);
    std::string notes;
    for (Counter c : kAllCounters) {
      if (isErrorCounter(c) && r[c].ok() && r[c].delta > 0) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s=%.3g/s ", std::string(ibName(c)).c_str(),
                      r[c].perSecond);
        notes += buf;
      }
    }
    for (Counter c : r.resets()) notes += "reset:" + std::string(ibName(c)) + " ";
    for (Counter c : r.saturated()) notes += "saturated:" + std::string(ibName(c)) + " ";
    std::printf("%-32.32s %4u %12s %12s %7s %7s %7s  %s\n", s ? s->nodeDescription.c_str() : "",
                r.key.port.value(), fmtNum(r.txBytesPerSecond, 1e-6, "%.3f").c_str(),
                fmtNum(r.rxBytesPerSecond, 1e-6, "%.3f").c_str(),
                fmtNum(r.txUtilization, 100, "%.2f").c_str(),
                fmtNum(r.rxUtilization, 100, "%.2f").c_str(),
                fmtNum(r.congestion, 100, "%.2f").c_str(), notes.c_str());
  }
}

void runCounters(const CountersArgs& args) {
  if (args.count < 1) throw CliError("--count must be at least 1");
  CrawlOptions crawl = args.crawl;
  crawl.retries = static_cast<unsigned>(std::max(args.retries, 0));
  auto source = makeSmpCrawler(crawl);
  TopologyPtr topo;
  try {
    topo = source->discover();
  } catch (const CrawlError& e) {
    throw CliError(e.what());
  }

  SweepOptions so;
  so.clearSaturated = args.clearSaturated;
  std::optional<Guid> nodeGuid;
  std::set<Guid> hostGuids;
  if (!args.node.empty()) {
    nodeGuid = parseGuid(args.node);
    if (!nodeGuid) throw CliError("--node: not a GUID: " + args.node);
    if (!topo->findNode(*nodeGuid)) {
      auto port = topo->findPort(*nodeGuid);
      if (!port) throw CliError("--node: no node or port with GUID " + args.node);
      nodeGuid = topo->node(port->node).guid;
    }
  }
  if (!args.host.empty()) {
    const Host* h = topo->findHost(args.host);
    if (!h) throw CliError("--host: no host named \"" + args.host + "\"");
    for (NodeIndex n : h->hcas) hostGuids.insert(topo->node(n).guid);
  }
  if (nodeGuid || !hostGuids.empty() || args.port >= 0) {
    so.portFilter = [&, nodeGuid](const Node& n, const Port& p) {
      if (nodeGuid && n.guid != *nodeGuid) return false;
      if (!hostGuids.empty() && !hostGuids.count(n.guid)) return false;
      if (args.port >= 0 && p.num.value() != args.port) return false;
      return true;
    };
  }

  mad::UmadTransport::Options to;
  to.caName = args.crawl.ca;
  to.port = args.crawl.caPort;
  mad::UmadTransport transport(to);
  std::string error;
  if (!transport.open(error)) throw CliError("cannot open umad: " + error);
  so.samplesControlAvoid = {transport.smLid(), transport.localLid()};
  mad::SteadyClock clock;
  mad::MadEngineOptions eo;
  eo.window = args.madWindow;
  eo.timeout = std::chrono::milliseconds(args.timeoutMs);
  eo.retries = args.retries;
  RateOptions ro;
  ro.xmitWaitTick = std::chrono::nanoseconds(static_cast<std::int64_t>(args.xmitWaitTickNs));
  HealthThresholds ht = HealthThresholds::defaults();
  ht.errorWindow = std::chrono::seconds(static_cast<std::int64_t>(args.window));

  CounterHistory history(64);
  EventLog events(10000);
  SweepAnalyzer analyzer(history, {ht, ro});
  json out = {{"sweeps", json::array()},
              {"rates", json::array()},
              {"health", json::array()},
              {"xmit_wait_tick_ns", args.xmitWaitTickNs}};
  const bool asJson = args.format == "json";

  TopologyPtr savedTopology;  // what the baseline was swept on, when the file has it
  if (!args.baseline.empty()) {
    std::ifstream in(args.baseline);
    if (!in) throw CliError("cannot read " + args.baseline);
    json b = json::parse(in, nullptr, false);
    if (b.is_discarded() || !b.contains("ports")) throw CliError("bad baseline " + args.baseline);
    auto snap = std::make_shared<CounterSnapshot>();
    for (const auto& p : b["ports"]) snap->ports.push_back(sampleFromJson(p));
    std::sort(snap->ports.begin(), snap->ports.end(),
              [](const PortSample& x, const PortSample& y) { return x.key < y.key; });
    analyzer.setBaseline(snap);
    // Files from before the topology was saved carry counters only: rates, no link events.
    if (b.contains("topology_ibnetdiscover")) {
      try {
        savedTopology = topologyFromNetFabric(
            parseNetText(b["topology_ibnetdiscover"].get<std::string>(), args.baseline),
            "baseline " + args.baseline);
      } catch (const std::exception& e) {
        throw CliError("bad topology in baseline " + args.baseline + ": " + e.what());
      }
    }
  }

  std::vector<LinkHealthReport> health;
  {
    mad::MadEngine engine(transport, clock, eo);
    CounterSweeper sweeper(engine, clock, so);
    // With a saved topology, the sweeper starts from it, so the live crawl's differences are
    // events and the ports that lost their link are reported gone.
    if (savedTopology) sweeper.setTopology(savedTopology);
    followTopology(sweeper, events, topo);
    auto next = std::chrono::steady_clock::now();
    for (int i = 0; i < args.count; ++i) {
      if (i > 0) {
        next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(args.interval));
        std::this_thread::sleep_until(next);
        if (args.recrawl) {
          try {
            followTopology(sweeper, events, source->discover());
          } catch (const CrawlError& e) {
            std::fprintf(stderr,
                         "ibfabric: warning: re-crawl failed, sweeping the previous topology: %s\n",
                         e.what());
          }
        }
      }
      auto snap = sweeper.sweep();
      const bool previous = analyzer.previous() != nullptr;
      SweepAnalysis found = analyzer.analyze(snap, events);
      const std::vector<PortRates>& rates = found.rates;
      if (asJson) {
        out["sweeps"].push_back(snapshotJson(*snap));
        if (previous) {
          json rj = json::array();
          for (const auto& r : rates) rj.push_back(ratesJson(r, snap->find(r.key)));
          out["rates"].push_back({{"sequence", snap->sequence}, {"ports", rj}});
        }
      } else if (previous) {
        printRatesTable(*snap, rates);
      } else {
        printRawTable(*snap);
      }
      // A single sweep shows raw counters only: its health has no interval behind it.
      if (previous) health = std::move(found.health);
      std::fflush(stdout);
    }
    auto st = engine.stats();
    out["engine"] = {{"sent", st.sent},         {"retries", st.retries},
                     {"timeouts", st.timeouts}, {"lost_reported", st.lostReported},
                     {"failed", st.failed},     {"completed_ok", st.completedOk}};
  }
  transport.close();

  if (const auto& last = analyzer.previous(); !args.save.empty() && last) {
    json saved = snapshotJson(*last);
    saved["topology_ibnetdiscover"] = formatIbnetdiscover(last->topology ? *last->topology : *topo);
    std::ofstream o(args.save, std::ios::trunc);
    o << saved.dump() << '\n';
    if (!o) throw CliError("cannot write " + args.save);
  }
  if (asJson) {
    for (const auto& h : health) out["health"].push_back(healthJson(h));
    json ev = json::array();
    for (const auto& e : events.query()) ev.push_back(eventJson(e));
    out["events"] = ev;
    std::printf("%s\n", out.dump(1).c_str());
    return;
  }
  if (!health.empty()) {
    std::printf("link health\n");
    for (const auto& h : health) {
      std::printf("%-9s \"%s\"[%u] <-> \"%s\"[%u]", std::string(toString(h.state)).c_str(),
                  h.aDescription.c_str(), h.a.port.value(), h.bDescription.c_str(),
                  h.b.port.value());
      for (const auto& x : h.reasons) std::printf("  %s: %s;", x.code.c_str(), x.text.c_str());
      std::printf("\n");
    }
  }
  for (const auto& e : events.query()) {
    std::string remote;
    if (e.remote) {
      remote = " <-> \"" + e.remote->description + "\"[" + std::to_string(e.remote->port.value()) +
               "] (" + hex(e.remote->node) + ")";
    }
    std::printf("event %" PRIu64 " %s \"%s\"[%u] (%s)%s: %s\n", e.id,
                std::string(toString(e.type)).c_str(), e.end.description.c_str(),
                e.end.port.value(), hex(e.end.node).c_str(), remote.c_str(), e.message.c_str());
  }
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
