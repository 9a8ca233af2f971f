// `ibfabric routes`: crawl the fabric, read every switch's forwarding table (LFT) over umad (or
// take OpenSM's dump file with --lft-dump), then
//   --src X --dst Y   print the hop-by-hop route(s) (X, Y: host, HCA description, GUID or LID;
//                     two hosts are paired rail by rail),
//   --validate        check that every CA reaches every CA (loops, black holes, missing
//                     tables); exit status 2 when a problem is found,
//   --balance         destinations per up-port of every leaf, and the imbalance.
// Run it under the simulator with `ibfabric sim run NAME -- ibfabric routes ...`.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "api/http/routing_json.h"
#include "discovery/crawler.h"
#include "routing/lft_reader.h"
#include "routing/route_query.h"
#include "routing/routes.h"
#include "telemetry/clock.h"
#include "telemetry/mad_engine.h"
#include "telemetry/umad_transport.h"
#include "tools/ibfabric/commands.h"

namespace ibfabric::cli {
namespace {

using nlohmann::json;

struct RoutesArgs {
  std::string src, dst;
  bool validate = false;
  bool balance = false;
  std::string lftDump;
  std::string format = "text";
  int madWindow = 64;
  int timeoutMs = 200;
  int retries = 3;
  std::string madPolicy = "adaptive";  // telemetry/mad_policy/flow_control.h
  std::size_t limit = 20;
  CrawlOptions crawl;
};

std::string hopText(const Topology& t, const routing::DirectedHop& h) {
  const Node& n = t.node(h.to.node);
  const Port* p = t.port(h.to);
  char buf[64];
  std::snprintf(buf, sizeof buf, "[%u] -> %s {%s}[%u]", h.from.port.value(),
                n.isSwitch() ? "switch" : "ca", toString(n.guid).c_str(), h.to.port.value());
  std::string s = buf;
  if (p) s += " lid " + toString(p->lid);
  return s + " \"" + n.description + "\"";
}

void printRoute(const Topology& t, const routing::Route& r, const routing::RouteEndpoint& src) {
  const Node& from = t.node(src.port.node);
  std::printf("From %s {%s} portnum %u lid %u \"%s\"\n", from.isSwitch() ? "switch" : "ca",
              toString(from.guid).c_str(), src.port.port.value(), src.lid.value(),
              from.description.c_str());
  for (const auto& h : r.hops) std::printf("%s\n", hopText(t, h).c_str());
  if (r.ok()) {
    std::printf("To lid %u: ok, %d switch hop%s\n", r.dst.value(), r.switchHops(),
                r.switchHops() == 1 ? "" : "s");
  } else {
    std::printf("To lid %u: %s: %s\n", r.dst.value(),
                std::string(routing::toString(r.status)).c_str(), r.problem.c_str());
  }
}

routing::ForwardingTablesPtr readTables(const RoutesArgs& args, const TopologyPtr& topo) {
  if (!args.lftDump.empty()) {
    try {
      return routing::parseOpensmLftDump(args.lftDump, topo);
    } catch (const routing::LftDumpError& e) {
      throw CliError(e.what());
    }
  }
  mad::UmadTransport::Options to;
  to.caName = args.crawl.ca;
  to.port = args.crawl.caPort;
  to.classes = {mad::MgmtClass::kSubnLid, mad::MgmtClass::kSubnDirected};
  mad::UmadTransport transport(to);
  std::string error;
  if (!transport.open(error)) throw CliError("cannot open umad: " + error);
  mad::SteadyClock clock;
  mad::MadEngineOptions eo;
  eo.window = args.madWindow;
  eo.timeout = std::chrono::milliseconds(args.timeoutMs);
  eo.retries = args.retries;
  eo.policy = mad::parseMadPolicy(args.madPolicy).value_or(mad::MadPolicy::kAdaptive);
  routing::ForwardingTablesPtr tables;
  {
    mad::MadEngine engine(transport, clock, eo);
    routing::LftReaderOptions lo;
    lo.localPort = transport.localPortGuid();  // directed-route fallback
    routing::LftReader reader(engine, clock, lo);
    tables = reader.read(topo);
  }
  transport.close();
  return tables;
}

void runRoutes(const RoutesArgs& args) {
  const bool trace = !args.src.empty() || !args.dst.empty();
  if (trace && (args.src.empty() || args.dst.empty())) {
    throw CliError("--src and --dst go together");
  }
  if (!trace && !args.validate && !args.balance) {
    throw CliError("nothing to do: give --src and --dst, --validate or --balance");
  }
  if (args.format != "text" && args.format != "json") {
    throw CliError("--format: text or json, not " + args.format);
  }
  auto source = makeSmpCrawler(args.crawl);
  TopologyPtr topo;
  try {
    topo = source->discover();
  } catch (const CrawlError& e) {
    throw CliError(e.what());
  }
  // Endpoints are resolved before any LFT is read: a typo fails fast.
  std::vector<std::pair<routing::RouteEndpoint, routing::RouteEndpoint>> pairs;
  if (trace) {
    try {
      pairs = routing::pairEndpoints(routing::resolveEndpoint(*topo, args.src),
                                     routing::resolveEndpoint(*topo, args.dst));
    } catch (const routing::EndpointError& e) {
      throw CliError(e.what());
    }
  }
  auto tables = readTables(args, topo);
  const bool asJson = args.format == "json";
  json out = {{"source", tables->source()},
              {"switches", topo->switchCount()},
              {"switches_with_tables", tables->switchesWithTables()},
              {"read_seconds", std::chrono::duration<double>(tables->readTime).count()},
              {"mads", tables->madsUsed},
              {"table_failures", tables->failures}};
  json direct = json::array();
  for (const auto& s : tables->switchStatus) {
    if (s.directRoute && s.state != routing::TableState::kMissing) {
      direct.push_back(topo->node(s.node).description);
    }
  }
  out["switches_read_by_direct_route"] = direct;
  if (!asJson) {
    std::printf("LFTs: %zu of %zu switches from %s", tables->switchesWithTables(),
                topo->switchCount(), tables->source().c_str());
    if (tables->madsUsed > 0) {
      std::printf(" in %.1f ms (%llu MADs)",
                  std::chrono::duration<double, std::milli>(tables->readTime).count(),
                  static_cast<unsigned long long>(tables->madsUsed));
    }
    if (!direct.empty()) std::printf(", %zu by directed route", direct.size());
    std::printf("\n");
    for (const auto& f : tables->failures) std::printf("  unread: %s\n", f.c_str());
  }

  int status = 0;
  if (trace) {
    json routes = json::array();
    for (const auto& [a, b] : pairs) {
      auto r = routing::traceRoute(*topo, *tables, a.port, b.lid);
      if (!r.ok()) status = 2;
      if (asJson) {
        routes.push_back(api::routeJson(*topo, a.port, r, nullptr));
      } else {
        printRoute(*topo, r, a);
      }
    }
    out["routes"] = routes;
  }
  if (args.validate) {
    const auto t0 = std::chrono::steady_clock::now();
    auto v = routing::validateRoutes(*topo, *tables);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!v.problems.empty() || v.pairsOk != v.pairsChecked) status = 2;
    if (asJson) {
      out["validation"] = api::validationJson(*topo, *tables, v, args.limit);
      out["validation"]["seconds"] = secs;
    } else {
      std::printf(
          "validation: %llu CA pairs, %llu ok; %llu black holes, %llu loops, %llu without "
          "tables (%.3f s)\n",
          static_cast<unsigned long long>(v.pairsChecked),
          static_cast<unsigned long long>(v.pairsOk), static_cast<unsigned long long>(v.blackHoles),
          static_cast<unsigned long long>(v.loops),
          static_cast<unsigned long long>(v.missingTables), secs);
      for (std::size_t i = 0; i < v.problems.size() && i < args.limit; ++i) {
        const auto& p = v.problems[i];
        std::printf("  %s lid %u -> lid %u: %s\n", std::string(routing::toString(p.status)).c_str(),
                    p.src.value(), p.dst.value(), p.detail.c_str());
      }
      if (v.problems.size() > args.limit) {
        std::printf("  ... %zu more listed (--limit)\n", v.problems.size() - args.limit);
      }
    }
  }
  if (args.balance) {
    auto b = routing::routeBalance(*topo, *tables);
    if (asJson) {
      out["balance"] = api::balanceJson(*topo, b);
    } else {
      std::printf("balance: destinations per up-port\n");
      for (const auto& lb : b) {
        std::string ports;
        for (const auto& [port, n] : lb.destinationsPerUpPort) {
          ports += " " + std::to_string(port.value()) + ":" + std::to_string(n);
        }
        std::printf("  %-40s imbalance %.2f |%s\n", topo->node(lb.leaf).description.c_str(),
                    lb.imbalance, ports.c_str());
      }
    }
  }
  if (asJson) std::printf("%s\n", out.dump(2).c_str());
  if (status != 0) throw CliExit{status};
}

}  // namespace

void addRoutesCommand(CLI::App& app) {
  auto args = std::make_shared<RoutesArgs>();
  auto* cmd = app.add_subcommand(
      "routes", "Read the switches' forwarding tables: trace routes, validate, show balance");
  cmd->add_option("--src", args->src, "source: host, HCA description, GUID or LID");
  cmd->add_option("--dst", args->dst, "destination: host, HCA description, GUID or LID");
  cmd->add_flag("--validate", args->validate,
                "check every CA pair (exit status 2 on loops, black holes, missing tables)");
  cmd->add_flag("--balance", args->balance, "destinations per up-port of every leaf");
  cmd->add_option("--lft-dump", args->lftDump,
                  "read the tables from OpenSM's opensm-lfts.dump instead of the switches");
  cmd->add_option("--format", args->format, "text|json")->capture_default_str();
  cmd->add_option("--limit", args->limit, "problems to list")->capture_default_str();
  cmd->add_option("--mad-window", args->madWindow, "LFT MADs in flight")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--mad-timeout-ms", args->timeoutMs, "per-MAD timeout")->capture_default_str();
  cmd->add_option("--mad-retries", args->retries, "re-sends per MAD")->capture_default_str();
  cmd->add_option("--mad-policy", args->madPolicy,
                  "adaptive: window, timeout and retries are limits the engine adapts within; "
                  "fixed: used as given")
      ->check(CLI::IsMember({"adaptive", "fixed"}))
      ->capture_default_str();
  addCrawlOptions(*cmd, args->crawl);
  cmd->callback([args] { runRoutes(*args); });
}

}  // namespace ibfabric::cli
