// ServiceState: one immutable, consistent view of everything the daemon knows, as the REST API
// and /metrics read it.
//
// FabricService publishes a new ServiceState after every crawl and every sweep (copy, change,
// swap); readers load the current pointer once and then read without locks. A reader therefore
// never blocks a sweep and never sees half of one: the counters, their rates and the link health
// in one state all come from the same sweep.
//
// Note: `topology` is the newest crawl; `counters->topology` is the snapshot the last sweep
// polled (it lags by at most one sweep). Health reports index `counters->topology`'s links.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/osm/osm_status.h"
#include "api/service/expected_topology.h"
#include "api/service/ha_status.h"
#include "discovery/topology.h"
#include "routing/forwarding.h"
#include "routing/link_load.h"
#include "telemetry/counter_sweep.h"
#include "telemetry/link_health_eval.h"
#include "telemetry/mad_engine.h"
#include "telemetry/port_rates.h"
#include "telemetry/rates_table.h"
#include "telemetry/trap_status.h"

namespace ibfabric::api {

/// How one periodic activity (crawl or sweep) is doing.
struct ActivityStatus {
  std::uint64_t runs = 0;      ///< Successful runs.
  std::uint64_t failures = 0;  ///< Failed attempts, all time.
  std::uint64_t consecutiveFailures = 0;
  std::optional<std::chrono::system_clock::time_point> lastAttempt;
  std::optional<std::chrono::system_clock::time_point> lastSuccess;
  std::chrono::nanoseconds lastDuration{0};  ///< Of the last successful run.
  std::string lastError;                     ///< Of the last attempt; empty when it succeeded.
  std::optional<std::chrono::system_clock::time_point> nextAttempt;
  /// Set while an attempt runs (a crawl child that hangs shows here).
  std::optional<std::chrono::system_clock::time_point> inProgressSince;

  /// The attempt started at `attempt` succeeded after `took`.
  void succeeded(std::chrono::system_clock::time_point attempt, std::chrono::nanoseconds took) {
    runs++;
    consecutiveFailures = 0;
    lastAttempt = attempt;
    lastSuccess = std::chrono::system_clock::now();
    lastDuration = took;
    lastError.clear();
  }
};

struct RoutingAnalysis;  // api/service/routing_state.h

/// The durable state store (state_store.h, event_journal.h); enabled with `state.dir`.
struct StoreStatus {
  bool enabled = false;
  std::string path;
  /// An unusable earlier file moved aside at start, and why (empty: none).
  std::string movedAside;
  std::string movedAsideReason;
  std::uint64_t restoredEvents = 0;  ///< Events of earlier runs loaded at start.
  std::uint64_t skippedEvents = 0;   ///< Stored rows this version could not read.
  std::uint64_t eventsWritten = 0;
  std::uint64_t lastWrittenId = 0;  ///< The newest event id in the store.
  std::uint64_t eventsPruned = 0;   ///< Deleted by retention.
  std::uint64_t writes = 0;         ///< Transactions committed.
  std::uint64_t writeFailures = 0;
  std::uint64_t consecutiveFailures = 0;
  /// Events the log dropped (it was full) before the journal could write them.
  std::uint64_t eventsMissed = 0;
  std::string lastError;
  std::optional<std::chrono::system_clock::time_point> lastWrite;
  double lastWriteSeconds = 0;  ///< Duration of the last write.
  /// The remembered fabric (discovery/fabric_memory.h) in the store: nodes and cables loaded at
  /// start, model writes (one per new model) and the rows they changed.
  std::uint64_t restoredNodes = 0;
  std::uint64_t restoredCables = 0;
  std::uint64_t fabricWrites = 0;
  std::uint64_t fabricRowsWritten = 0;
};

/// Whether the subnet can be read yet: before the local port is Active with a LID and an SM is
/// known, the daemon waits (health `waiting_for_subnet`) instead of crawling LID 0 everywhere.
struct SubnetStatus {
  bool waiting = false;  ///< True until the local port is Active with a LID and an SM LID.
  std::string reason;    ///< Why it waits: "port state Initialize", "no SM LID", ...
  std::uint16_t localLid = 0;
  std::uint16_t smLid = 0;
  std::string portState;        ///< Of the local port, as last read ("" before the first read).
  std::uint64_t gidPrefix = 0;  ///< Of the local port (PortInfo GidPrefix); 0 before a read.
  std::optional<std::chrono::system_clock::time_point> readySince;
};

/// Crawls checked before they are believed (api/service/crawl_check.h).
struct CrawlCheckStatus {
  bool suspect = false;            ///< The last crawl was implausible; the model kept.
  std::string reason;              ///< Of the last suspect crawl.
  std::uint64_t suspectTotal = 0;  ///< Crawls published as suspect, all time.
  std::uint64_t retries = 0;       ///< Implausible crawls retried at once, all time.
  std::uint64_t removalsKept = 0;  ///< Cables dropped from a kept model (confirmed removals).
  std::optional<std::chrono::system_clock::time_point> lastSuspect;
};

struct ServiceState {
  std::chrono::system_clock::time_point started{};

  TopologyPtr topology;
  ActivityStatus crawl;
  CrawlCheckStatus crawlCheck;
  SubnetStatus subnet;
  /// Counter sources (each one umad port: in subprocess mode one MAD proxy child) created, and
  /// those created to replace a failed one.
  std::uint64_t counterSourceStarts = 0;
  std::uint64_t counterSourceRestarts = 0;
  /// The last crawl compared with the configured expected topology (null: none configured).
  TopologyComparisonPtr comparison;

  telemetry::CounterSnapshotPtr counters;
  /// Rates between the last two successful sweeps, by port.
  std::shared_ptr<const telemetry::RatesTable> rates;
  /// Health of the links with at least one polled end (of counters->topology).
  std::shared_ptr<const std::vector<telemetry::LinkHealthReport>> health;
  /// Every sweep's rates and health folded into one moving average of link load
  /// (api/service/link_load_fold.h), on counters->topology; null before the first sweep.
  std::shared_ptr<const routing::LinkLoadModel> linkLoad;
  ActivityStatus sweep;
  std::string sweepSource;
  std::optional<mad::MadEngineStats> engine;
  /// Forwarding tables as last read (with the sweeps; null until then or when the source has
  /// none), their validation and balance (api/service/routing_state.h), and how reading them goes.
  routing::ForwardingTablesPtr forwarding;
  std::shared_ptr<const RoutingAnalysis> routeAnalysis;
  ActivityStatus routes;
  /// Events appended since the service started, by type name ("link_down", ...).
  std::map<std::string, std::uint64_t> eventsByType;
  /// The OpenSM event plugin link and what was done about its events.
  OsmState osm;
  /// The SM trap subscription (SA InformInfo); nullopt when it is off (config sm_traps).
  std::optional<mad::TrapSubscriptionStatus> traps;
  StoreStatus store;
  /// Active or standby among the daemons on this subnet, and the subnet's identity
  /// (api/service/ha_status.h, fabric_service_role.cpp).
  HaStatus ha;
  SubnetIdentity subnetId;

  bool standby() const { return ha.role == HaRole::kStandby; }
  /// First crawl and first sweep done.
  bool ready() const { return topology && counters; }
  std::optional<telemetry::PortRates> ratesOf(telemetry::PortKey key) const {
    if (!rates) return std::nullopt;
    return rates->find(key);
  }
};
using ServiceStatePtr = std::shared_ptr<const ServiceState>;

}  // namespace ibfabric::api
