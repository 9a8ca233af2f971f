// ServiceConfig: everything ibfabricd can be told, from a YAML file and/or flags.
//
// The YAML keys (docs/daemon.md, example in packaging/ibfabricd.yaml):
//   listen: "127.0.0.1:9464"        # HOST:PORT; port 0 picks a free port (printed at start)
//   crawl_interval: 60              # seconds between fabric crawls
//   sweep_interval: 10              # seconds between counter sweeps
//   ca: ""                          # umad device; empty = the first
//   ca_port: 0                      # 0 = the first active port
//   log_level: info                 # trace|debug|info|warn|error|critical|off
//   api_token: ""                   # bearer token for POST endpoints; empty = writes disabled
//   node_name_map: ""               # <guid> "<name>" file for friendlier node names
//   k8s_node_name_map: ""           # <host> <node-name> file: Kubernetes node names that are
//                                   # not the lower-cased host names (read at start)
//   crawl_timeout: 120              # seconds before a crawl child is killed
//   mad: {window: 256, timeout_ms: 200, retries: 3}   # adaptive: window/timeout are max/initial
//   mad: {policy: adaptive, min_window: 8, timeout_min_ms: 200, timeout_max_ms: 2000,
//         retry_budget: 0.1, breaker_after: 3}          # or policy: fixed (docs/mad-engine.md)
//   history_depth: 64               # samples kept per port
//   event_capacity: 10000
//   clear_saturated_counters: false # clear narrow counters stuck at their maximum
//   expected_topology: ""           # net file or discovery JSON compared after each crawl
//   metrics:                        # what /metrics exports (api/metrics/metrics_options.h)
//     ports: switch                 # switch | all (CA ports too)
//     counters: [traffic, errors, congestion]   # or "all"; also packets, physical_errors,
//                                   # filter_errors, utilization, link, xmit_wait
//     collectors: {links: true}     # topology|mad|events|store|routing|lft|osm|ports|links: false
//     = off port_labels: full             # deprecated, ignored (a warning at start)
//   tls: {cert: "", key: ""}        # PEM files: serve HTTPS
//   osm_events: ""                  # Unix socket for the OpenSM event plugin; empty = off
//   mad_transport: subprocess       # sweeps' umad port in a child (recovers) or inprocess
//   wait_for_subnet: true           # wait for the local port Active with a LID and an SM
//   mad_proxy_restart_cap: 30       # seconds: longest backoff between MAD proxy re-creations
//   crawl_check: {enabled: true, max_loss: 0.10, removal_after: 3}   # api/service/crawl_check.h
//   pool: {inventory: FILE, journal: DIR, quotas: [...]}   # GPU pool allocator (docs/pool.md)
//   state: {dir: "", event_max_age_days: 30, event_max_count: 100000, max_size_mb: 1024,
//           forget_missing_after_days: 0}
//                                   # durable state: the SQLite store (events and the remembered
//                                   # fabric; docs/daemon.md); empty dir = in memory only
//   jobs: {congested_utilization: 0.8, clear_utilization: 0.6}
//                                   # job_congested events (api/service/job_service.h)
//   ha: {mode: always, peers: [], peer_timeout: 2, poll_interval: 1, standby_crawl_interval: 300}
//                                   # active/standby on one subnet (api/daemon/ha_config.h)
//   subnet_name: ""                 # the operator's name of this subnet (health, metrics)
//
// Plain value type; loading is a pure function of its input.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "api/daemon/ha_config.h"
#include "api/metrics/metrics_options.h"
#include "api/service/pool_config.h"

namespace YAML {
class Node;
}

namespace ibfabric::api {

/// The configuration is invalid; what() is one line naming the key.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ListenAddress {
  std::string host = "127.0.0.1";
  int port = 9464;
};
/// "HOST:PORT" (IPv6 as "[::1]:PORT"); throws ConfigError.
ListenAddress parseListenAddress(std::string_view text);

struct ServiceConfig {
  ListenAddress listen;
  std::chrono::milliseconds crawlInterval{60'000};
  std::chrono::milliseconds sweepInterval{10'000};
  std::chrono::milliseconds crawlTimeout{120'000};
  std::string ca;
  int caPort = 0;
  std::string logLevel = "info";
  /// ibnetdiscover-style node-name map applied to crawled descriptions; empty = none.
  std::string nodeNameMap;
  /// scheduler_hooks/k8s_node_name_map.h file for the Kubernetes exports and the extender; empty
  /// = node names are the lower-cased host names. Read at start.
  std::string k8sNodeNameMap;
  std::string apiToken;
  int madWindow = 256;  // MadEngineOptions::window default; see docs/BENCHMARKS.md
  int madTimeoutMs = 200;
  int madRetries = 3;
  /// The MAD engine's policy (telemetry/mad_policy/flow_control.h): "adaptive" or "fixed".
  std::string madPolicy = "adaptive";
  int madMinWindow = 8;       ///< adaptive: the overall window's floor (max: madWindow)
  int madTimeoutMinMs = 200;  ///< adaptive: RTO bounds (madTimeoutMs is the initial RTO)
  int madTimeoutMaxMs = 2000;
  double madRetryBudget = 0.1;  ///< adaptive: retries per first send, in the long run
  int madBreakerAfter = 3;      ///< adaptive: failed requests in a row that open a breaker
  std::size_t historyDepth = 64;
  std::size_t eventCapacity = 10000;
  bool clearSaturatedCounters = false;
  std::string expectedTopology;
  /// What /metrics exports (metrics.ports, metrics.counters, metrics.collectors).
  MetricsOptions metrics;
  /// metrics.port_labels as given ("" when absent): deprecated, ignored but for a warning.
  std::string metricsPortLabels;
  std::string tlsCert;
  std::string tlsKey;
  /// Unix socket the OpenSM event plugin connects to (docs/opensm-plugin.md); empty = off.
  std::string osmEvents;
  /// "subprocess": the sweeps' umad port lives in a MAD proxy child (re-created after failures,
  /// so the daemon reconnects to a restarted simulator/driver); "inprocess": in the daemon.
  std::string madTransport = "subprocess";
  /// Before crawling, wait until the local port is Active with a LID and an SM is known.
  bool waitForSubnet = true;
  /// Subscribe to the SM's traps 64/65/128/144 (SA InformInfo) on a port of its own and
  /// re-probe what they name (api/daemon/trap_wiring.h). Off by default until it has run on a
  /// 10,240-HCA plane without trouble (docs/BENCHMARKS.md 2026-12-03 21:08 and 21:14).
  bool smTraps = false;
  /// The longest wait between two re-creations of the sweeps' umad port (MAD proxy child).
  std::chrono::milliseconds madProxyRestartCap{30'000};
  double crawlCheckMaxLoss = 0.10;
  std::uint32_t crawlCheckRemovalAfter = 3;
  bool crawlCheckEnabled = true;
  PoolConfig pool;
  /// `jobs:`: a job's hottest link at this utilization fires `job_congested`; below the clear
  /// level the episode ends (0 < clear <= congested <= 1).
  double jobsCongestedUtilization = 0.8;
  double jobsClearUtilization = 0.6;
  /// The state directory (api/service/state_store.h); empty: nothing is kept across restarts.
  std::string stateDir;
  double stateEventMaxAgeDays = 30;         ///< 0: no age limit
  std::size_t stateEventMaxCount = 100000;  ///< 0: no count limit
  std::uint64_t stateMaxSizeMb = 1024;      ///< the store's file never grows past it; 0: no bound
  /// Missing hardware is forgotten after this many days missing; 0: kept until forgotten.
  double stateForgetMissingAfterDays = 0;
  /// `ha:`: several daemons on one subnet, one active (api/daemon/ha_config.h).
  HaConfig ha;
  /// `subnet_name`: the operator's name of this subnet (/api/v1/health, ibfabric_subnet_info).
  std::string subnetName;

  /// Throws ConfigError on out-of-range values.
  void validate() const;
  void validateOperational() const;
  /// The `mad.policy` keys (part of validate()).
  void validateMadPolicy() const;
};

/// Applies the YAML text over `base` (keys absent keep base's value); throws ConfigError for
/// unknown keys, wrong types and invalid values.
ServiceConfig loadConfigText(std::string_view yaml, ServiceConfig base = {});
/// Reads the file first; throws ConfigError when it cannot be read.
ServiceConfig loadConfigFile(const std::filesystem::path& path, ServiceConfig base = {});

/// Seconds as a duration; throws ConfigError for non-positive or absurd values.
std::chrono::milliseconds secondsToInterval(double seconds, std::string_view key);

/// Parses the `pool:` mapping; throws ConfigError naming the key.
PoolConfig parsePoolConfig(const YAML::Node& node);

}  // namespace ibfabric::api
