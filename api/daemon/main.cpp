// ibfabricd: the fabric manager daemon. Crawls the fabric (each crawl in a short-lived child
// process, see api/service/child_crawl_source.h), sweeps port counters through one long-lived umad
// port, and serves the REST API (/api/v1) and Prometheus metrics (/metrics). docs/daemon.md.
//
// Signals: SIGTERM/SIGINT stop it (within a second); SIGHUP re-reads the config file (intervals,
// log level, API token; listen address and CA need a restart).
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>

#include "api/daemon/config_check.h"
#include "api/daemon/crawl_child.h"
#include "api/daemon/ha_monitor.h"
#include "api/daemon/mad_engine_config.h"
#include "api/daemon/mad_proxy_child.h"
#include "api/daemon/osm_wiring.h"
#include "api/daemon/service_config.h"
#include "api/daemon/startup_signal_guard.h"
#include "api/daemon/trap_wiring.h"
#include "api/daemon/version.h"
#include "api/http/rest_server.h"
#include "api/service/child_crawl_source.h"
#include "api/service/counter_source.h"
#include "api/service/event_journal.h"
#include "api/service/fabric_service.h"
#include "api/service/job_service.h"
#include "api/service/state_store.h"
#include "discovery/node_name_map.h"
#include "telemetry/heap_tuning.h"

namespace {

using namespace ibfabric;
using namespace ibfabric::api;

struct Flags {
  std::string config;
  std::optional<std::string> listen;
  std::optional<double> sweepInterval;
  std::optional<double> crawlInterval;
  std::optional<std::string> ca;
  std::optional<int> caPort;
  std::optional<std::string> logLevel;
  std::optional<std::string> nodeNameMap;
  std::optional<std::string> osmEvents;
  std::optional<std::string> madTransport;
  std::optional<std::string> haMode;
  std::vector<std::string> haPeers;
  std::optional<std::string> subnetName;
};

/// Defaults, then the file, then the flags.
ServiceConfig resolveConfig(const Flags& f) {
  ServiceConfig c;
  if (!f.config.empty()) c = loadConfigFile(f.config, c);
  if (f.listen) c.listen = parseListenAddress(*f.listen);
  if (f.sweepInterval) c.sweepInterval = secondsToInterval(*f.sweepInterval, "--sweep-interval");
  if (f.crawlInterval) c.crawlInterval = secondsToInterval(*f.crawlInterval, "--crawl-interval");
  if (f.ca) c.ca = *f.ca;
  if (f.caPort) c.caPort = *f.caPort;
  if (f.logLevel) c.logLevel = *f.logLevel;
  if (f.nodeNameMap) c.nodeNameMap = *f.nodeNameMap;
  if (f.osmEvents) c.osmEvents = *f.osmEvents;
  if (f.madTransport) c.madTransport = *f.madTransport;
  if (f.haMode) c.ha.mode = *f.haMode;
  if (!f.haPeers.empty()) c.ha.peers = f.haPeers;
  if (f.subnetName) c.subnetName = *f.subnetName;
  c.validate();
  return c;
}

/// The MAD proxy child's command (telemetry/subprocess_mad_transport.h).
std::vector<std::string> madProxyArgv(const std::string& self, const ServiceConfig& config) {
  std::vector<std::string> argv = {self, "--mad-proxy"};
  if (!config.ca.empty()) argv.insert(argv.end(), {"--ca", config.ca});
  if (config.caPort) argv.insert(argv.end(), {"--ca-port", std::to_string(config.caPort)});
  return argv;
}

std::string selfPath(const char* argv0) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

/// The crawl child's command line (api/daemon/crawl_child.h).
std::vector<std::string> crawlChildArgv(const std::string& self, const ServiceConfig& config) {
  std::vector<std::string> argv = {self, "--crawl-once"};
  if (!config.ca.empty()) argv.insert(argv.end(), {"--ca", config.ca});
  if (config.caPort) argv.insert(argv.end(), {"--ca-port", std::to_string(config.caPort)});
  if (!config.nodeNameMap.empty()) argv.insert(argv.end(), {"--node-name-map", config.nodeNameMap});
  return argv;
}

/// The sweeps' umad port: MAD engine limits, counter clearing, the MAD proxy child.
UmadCounterOptions umadOptions(const std::string& self, const ServiceConfig& config) {
  UmadCounterOptions uo;
  uo.ca = config.ca;
  uo.caPort = config.caPort;
  uo.engine = madEngineOptions(config);
  uo.engine.batchWatchdog = std::chrono::seconds(30);
  uo.sweep.clearSaturated = config.clearSaturatedCounters;
  if (config.madTransport == "subprocess") uo.proxyArgv = madProxyArgv(self, config);
  return uo;
}

/// The service's intervals and limits; throws when the expected topology cannot be loaded.
FabricServiceOptions serviceOptions(const ServiceConfig& config) {
  FabricServiceOptions so;
  so.crawlInterval = config.crawlInterval;
  so.sweepInterval = config.sweepInterval;
  so.historyDepth = config.historyDepth;
  so.eventCapacity = config.eventCapacity;
  if (!config.expectedTopology.empty()) so.expected = loadExpectedTopology(config.expectedTopology);
  so.waitForSubnet = config.waitForSubnet;
  so.sourceRestartCap = config.madProxyRestartCap;
  so.crawlCheck.enabled = config.crawlCheckEnabled;
  so.crawlCheck.maxLoss = config.crawlCheckMaxLoss;
  so.crawlCheck.removalAfter = config.crawlCheckRemovalAfter;
  so.remember.forgetAfter = std::chrono::seconds(
      static_cast<std::int64_t>(config.stateForgetMissingAfterDays * 24 * 3600));
  so.haMode = parseHaMode(config.ha.mode).value_or(HaMode::kAlways);
  so.standbyCrawlInterval = config.ha.standbyCrawlInterval;
  so.subnetName = config.subnetName;
  return so;
}

EventJournalOptions journalOptions(const ServiceConfig& config) {
  EventJournalOptions jo;
  jo.retention.eventMaxAge =
      std::chrono::seconds(static_cast<std::int64_t>(config.stateEventMaxAgeDays * 24 * 3600));
  jo.retention.eventMaxCount = config.stateEventMaxCount;
  return jo;
}

/// The jobs' thresholds; reported jobs are kept in the state directory when there is one.
JobServiceOptions jobOptions(const ServiceConfig& config) {
  JobServiceOptions jo;
  jo.congestedUtilization = config.jobsCongestedUtilization;
  jo.clearUtilization = config.jobsClearUtilization;
  if (!config.stateDir.empty())
    jo.registryFile = std::filesystem::path(config.stateDir) / JobRegistry::kFileName;
  return jo;
}

RestOptions restOptions(const ServiceConfig& config) {
  RestOptions ro;
  ro.token = config.apiToken;
  ro.tlsCert = config.tlsCert;
  ro.tlsKey = config.tlsKey;
  ro.metrics = config.metrics;
  if (!config.k8sNodeNameMap.empty()) {
    auto map = std::make_shared<const scheduler_hooks::K8sNodeNameMap>(
        scheduler_hooks::K8sNodeNameMap::load(config.k8sNodeNameMap));
    for (const auto& p : map->problems())
      spdlog::warn("k8s_node_name_map: {} (line skipped)", p.message);
    spdlog::info("k8s_node_name_map: {} node names from {}", map->size(), config.k8sNodeNameMap);
    ro.k8sNodeNames = std::move(map);
  }
  if (!config.metricsPortLabels.empty())
    spdlog::warn(
        "config: metrics.port_labels is deprecated and ignored: per-port series carry guid and "
        "port only, node and remote names are on ibfabric_port_info (docs/api.md); choose what "
        "is exported with metrics.ports, metrics.counters and metrics.collectors");
  return ro;
}

/// Waits for signals until SIGTERM or SIGINT; SIGHUP re-reads the configuration (intervals, log
/// level, API token; the listen address and the CA need a restart).
void runSignalLoop(const sigset_t& signals, const Flags& flags, ServiceConfig config,
                   FabricService& service, RestServer& server) {
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    if (sig != SIGHUP) {
      spdlog::info("signal {}: shutting down", sig);
      return;
    }
    try {
      ServiceConfig next = resolveConfig(flags);
      spdlog::set_level(spdlog::level::from_str(next.logLevel));
      service.setIntervals(next.crawlInterval, next.sweepInterval);
      server.setToken(next.apiToken);
      if (next.listen.host != config.listen.host || next.listen.port != config.listen.port ||
          next.ca != config.ca || next.caPort != config.caPort)
        spdlog::warn("reload: listen address and CA changes take effect after a restart");
      config = next;
      spdlog::info("reloaded the configuration");
    } catch (const std::exception& e) {
      // ConfigError names the key; anything else from a parser is reported alike.
      spdlog::error("reload failed, keeping the running configuration: {}", e.what());
    }
  }
}

/// The daemon: the services (main owns them; each outlives what it is given to), the HTTP
/// server, the OpenSM listener, then the signal loop and an orderly stop.
int serve(const ServiceConfig& config, const Flags& flags, const std::string& self) {
  // Termination and reload signals are taken by sigwait() on this thread only.
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // Until the signal loop runs, SIGTERM/SIGINT end the process at once (a long start-up step
  // cannot be interrupted).
  auto startupGuard = std::make_unique<StartupSignalGuard>();
  ::signal(SIGPIPE, SIG_IGN);

  auto crawlSource =
      std::make_unique<ChildCrawlSource>(crawlChildArgv(self, config), config.crawlTimeout);
  ChildCrawlSource* crawl = crawlSource.get();
  const UmadCounterOptions uo = umadOptions(self, config);
  std::unique_ptr<FabricService> servicePtr;
  // Declared in the order each needs the ones before it (destroyed in reverse).
  std::unique_ptr<StateStore> store;      // with `state.dir`: the durable store
  std::unique_ptr<EventJournal> journal;  // the event log written to it
  std::unique_ptr<PlacementService> placement;
  std::unique_ptr<PoolService> pool;  // the GPU pool allocator, with a `pool:` block
  std::unique_ptr<JobService> jobs;   // jobs and the links they load
  std::unique_ptr<RestServer> serverPtr;
  std::unique_ptr<OsmEventListener> osm;
  std::unique_ptr<mad::TrapSubscription> traps;  // with sm_traps (the default)
  std::unique_ptr<HaMonitor> ha;                 // with ha.mode other than always
  try {
    servicePtr = std::make_unique<FabricService>(
        std::move(crawlSource), [uo] { return makeUmadCounterSource(uo); }, serviceOptions(config));
    if (!config.stateDir.empty()) {
      store = std::make_unique<StateStore>(config.stateDir, config.stateMaxSizeMb << 20);
      FabricService* svc = servicePtr.get();
      journal =
          std::make_unique<EventJournal>(*store, svc->events(), journalOptions(config),
                                         [svc](const StoreStatus& st) { svc->setStoreStatus(st); });
      journal->restore();
      try {
        if (auto fabric = journal->restoreFabric())
          svc->setRemembered(fabric->topology, fabric->seenAt);
      } catch (const StoreError& e) {  // the events are kept; the fabric is written anew
        spdlog::error("{}: starting without the remembered fabric", e.what());
      }
      journal->setFabricSource([svc] {
        const ServiceStatePtr s = svc->state();
        return FabricModel{s->topology,
                           s->crawl.lastSuccess.value_or(std::chrono::system_clock::now())};
      });
    }
    // One placement engine for REST, the kube-scheduler extender and the pool.
    placement = std::make_unique<PlacementService>(*servicePtr);
    if (config.pool.enabled) {
      try {
        pool = std::make_unique<PoolService>(*servicePtr, *placement, config.pool);
      } catch (const std::exception& e) {
        throw std::runtime_error(std::string("pool: ") + e.what());
      }
    }
    jobs = std::make_unique<JobService>(*servicePtr, *placement, pool.get(), jobOptions(config));
    serverPtr = std::make_unique<RestServer>(
        DaemonServices{*servicePtr, *placement, pool.get(), jobs.get()}, restOptions(config));
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
  FabricService& service = *servicePtr;
  RestServer& server = *serverPtr;
  service.setCancelCrawl([crawl] { crawl->cancel(); });
  const int port = server.bind(config.listen.host, config.listen.port);
  if (port < 0) {
    spdlog::critical("cannot listen on {}:{}", config.listen.host, config.listen.port);
    return 1;
  }
  std::printf("ibfabricd listening on %s://%s:%d\n", config.tlsCert.empty() ? "http" : "https",
              config.listen.host.c_str(), port);
  std::fflush(stdout);
  spdlog::info("ibfabricd {} listening on {}:{} (crawl every {} ms, sweep every {} ms)",
               versionString(), config.listen.host, port, config.crawlInterval.count(),
               config.sweepInterval.count());
  // Trap storms (OpenSM socket and SA subscription) coalesced; started before either source.
  RequestCoalescer coalescer(daemonCoalescing(service));
  CoalescedRequests requests(service, coalescer);
  coalescer.start();
  if (!config.osmEvents.empty()) {
    try {
      osm = startOsmEventListener(config.osmEvents, service, requests);
    } catch (const std::exception& e) {
      spdlog::critical("{}", e.what());
      return 1;
    }
  }
  if (journal) journal->start();
  service.start();
  if (const HaMode mode = parseHaMode(config.ha.mode).value_or(HaMode::kAlways);
      mode != HaMode::kAlways) {
    ha = std::make_unique<HaMonitor>(
        service,
        HaMonitorOptions{mode, config.ha.peers, config.ha.peerTimeout, config.ha.pollInterval});
    ha->start();
  }
  if (config.smTraps)
    traps = startTrapSubscription(service, requests, uo.proxyArgv, config.ca, config.caPort);
  if (pool) pool->start();
  jobs->start();
  std::thread http([&server] {
    if (!server.run()) spdlog::error("http server stopped with an error");
  });
  startupGuard.reset();  // the signal loop takes the signals from here on
  runSignalLoop(signals, flags, config, service, server);
  server.stop();
  if (traps) traps->stop();  // unsubscribes
  if (osm) osm->stop();
  coalescer.stop();  // after its sources, before the service its work calls
  if (ha) ha->stop();
  jobs->stop();
  if (pool) pool->stop();
  service.stop();
  if (journal) journal->stop();  // writes the last events
  http.join();
  spdlog::info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The daemon's memory follows its work (docs/daemon.md, "Memory"): few arenas, free pages
  // given back after every sweep, crawl and rendering, blocks of 1 MiB and more mapped on their
  // own.
  ibfabric::telemetry::limitHeapArenas(4);
  ibfabric::telemetry::mapLargeBuffers(std::size_t{1} << 20);
  CLI::App app{"ibfabricd - InfiniBand fabric manager and telemetry daemon"};
  Flags flags;
  bool version = false, checkConfig = false, crawlOnce = false, madProxy = false,
       madProxySa = false;
  app.add_flag("--version", version, "Print the version and exit");
  app.add_option("--config", flags.config, "YAML configuration file")->check(CLI::ExistingFile);
  app.add_option("--listen", flags.listen, "HOST:PORT to serve on (port 0: any free port)");
  app.add_option("--sweep-interval", flags.sweepInterval, "seconds between counter sweeps");
  app.add_option("--crawl-interval", flags.crawlInterval, "seconds between fabric crawls");
  app.add_option("--ca", flags.ca, "umad device (default: the first)");
  app.add_option("--ca-port", flags.caPort, "port of that device (default: the first active)");
  app.add_option("--log-level", flags.logLevel,
                 "trace|debug|info|warn|error|critical|off (default: info)");
  app.add_option("--node-name-map", flags.nodeNameMap,
                 "ibnetdiscover-style map of node GUIDs to names");
  app.add_option("--osm-events", flags.osmEvents,
                 "Unix socket for the OpenSM event plugin (docs/opensm-plugin.md; default off)");
  app.add_option("--ha-mode", flags.haMode,
                 "always (default: no HA) | follow_sm | lowest_guid (docs/scale-out.md)");
  app.add_option("--ha-peer", flags.haPeers,
                 "URL of another instance on this subnet (repeat; ha.peers; lowest_guid)");
  app.add_option("--subnet-name", flags.subnetName,
                 "the operator's name of this subnet (subnet_name; health and metrics)");
  app.add_flag("--check-config", checkConfig, "validate the configuration and exit (0 ok, 1 not)");
  app.add_flag("--crawl-once", crawlOnce,
               "internal: crawl once and print the topology JSON (the daemon's crawl child)")
      ->group("");
  app.add_option("--mad-transport", flags.madTransport,
                 "subprocess (default: the sweeps' umad port in a child process, re-created "
                 "after failures) or inprocess");
  app.add_flag("--mad-proxy", madProxy,
               "internal: serve MADs for the daemon on fd 3 (its MAD proxy child)")
      ->group("");
  app.add_flag("--sa", madProxySa,
               "internal: with --mad-proxy, the SA class (the trap subscription's port)")
      ->group("");
  CLI11_PARSE(app, argc, argv);
  if (version) {
    std::printf("ibfabricd %s\n", versionString());
    return 0;
  }
  auto logger = spdlog::stderr_color_mt("ibfabricd");
  spdlog::set_default_logger(logger);

  if (madProxy) {
    spdlog::set_level(spdlog::level::warn);
    return runMadProxyChild(flags.ca.value_or(""), flags.caPort.value_or(0), madProxySa);
  }
  if (crawlOnce) {
    spdlog::set_level(spdlog::level::warn);
    CrawlOptions co;
    co.ca = flags.ca.value_or("");
    co.caPort = flags.caPort.value_or(0);
    if (flags.nodeNameMap) {
      try {
        co.nodeNameMap = std::make_shared<const NodeNameMap>(NodeNameMap::load(*flags.nodeNameMap));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 3;
      }
    }
    return runCrawlChild(co);
  }

  ServiceConfig config;
  try {
    config = resolveConfig(flags);
    if (checkConfig) checkConfigFiles(config);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ibfabricd: invalid configuration: %s\n", e.what());
    return 1;
  }
  if (checkConfig) {
    std::printf("configuration ok: listen %s:%d, crawl every %.3f s, sweep every %.3f s\n",
                config.listen.host.c_str(), config.listen.port,
                std::chrono::duration<double>(config.crawlInterval).count(),
                std::chrono::duration<double>(config.sweepInterval).count());
    return 0;
  }
  spdlog::set_level(spdlog::level::from_str(config.logLevel));
  return serve(config, flags, selfPath(argv[0]));
}
