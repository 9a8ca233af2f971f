// FabricService: the daemon's engine room. Owns a discovery thread and a sweep thread and
// publishes ServiceState snapshots.
//
//   discovery thread  crawls through a TopologySource every `crawlInterval` (and at once on
//                     requestCrawl()); each new topology is diffed against the previous one and
//                     the TopologyDelta becomes link_down / link_up events in the EventLog.
//   sweep thread      every `sweepInterval`, once a topology exists: hands new topologies to
//                     the CounterSource, sweeps, and has a telemetry::SweepAnalyzer compute
//                     rates against the previous sweep, keep per-port history, judge link
//                     health and turn transitions into events; folds the sweep into the
//                     link-load model (link_load_fold.h); reads the forwarding tables
//                     (routing_state.h); runs counter clears and OpenSM-triggered port probes
//                     (the sweep thread owns the MAD engine).
// Before either starts (options.waitForSubnet, the daemon's default), the sweep thread opens its
// counter source and reads the local port's PortInfo every `subnetPoll` until it is Active with
// a LID and an SM LID (state.subnet says why it waits). Every crawl is checked against the last
// believed one (crawl_check.h): an implausible one is retried at once, then published as suspect
// with the believed model kept. A counter source that fails is re-created after `retryBase`,
// doubling up to `sourceRestartCap` (one source, i.e. one MAD proxy child, at a time).
// Failures (a crawl that throws, a CounterSource that cannot be created or cannot sweep, a sweep
// in which no port answered) are logged, counted in the state and retried with exponential
// backoff (`retryBase` doubling up to the activity's interval); the last good data keeps being
// served, with its age visible through the state's timestamps.
//
// Active/standby (api/service/role_election.h, fabric_service_role.cpp): with `haMode` other than
// always, the service starts standby and setRole() (the daemon's HaMonitor) moves it. A standby
// sends no counter sweeps, no probes and no forwarding-table reads: its sweep thread only re-reads
// the local port every `standbyPoll` (the SM LID: follow_sm sees the SM fail over), and it crawls
// every `standbyCrawlInterval` to keep a warm snapshot. Becoming active crawls and sweeps at once.
//
// Thread-safety: every public method may be called from any thread. state() never blocks on a
// crawl or a sweep (the publish step is a pointer swap under a short lock).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "api/osm/osm_status.h"
#include "api/service/counter_source.h"
#include "api/service/crawl_check.h"
#include "api/service/role_election.h"
#include "api/service/service_state.h"
#include "discovery/crawler.h"
#include "discovery/fabric_memory.h"
#include "telemetry/counter_history.h"
#include "telemetry/event_log.h"
#include "telemetry/link_health_eval.h"
#include "telemetry/port_rates.h"
#include "telemetry/sweep_analysis.h"

namespace ibfabric::api {

struct FabricServiceOptions {
  std::chrono::milliseconds crawlInterval{60'000};
  std::chrono::milliseconds sweepInterval{10'000};
  /// First retry delay after a failure; doubles per consecutive failure, capped at the interval.
  std::chrono::milliseconds retryBase{1'000};
  std::size_t historyDepth = 64;
  std::size_t eventCapacity = 10000;
  telemetry::HealthThresholds thresholds = telemetry::HealthThresholds::defaults();
  telemetry::RateOptions rates;
  /// After this many consecutive failed sweeps the counter source is dropped and re-created
  /// (umad port reopened: e.g. after the simulator or the HCA driver restarted).
  std::uint64_t recreateSourceAfter = 3;
  /// Compared with every crawl (node_missing / node_returned events); null: none.
  ExpectedTopologyPtr expected;
  /// Before anything is crawled or swept, wait until the local port is Active with a LID and
  /// an SM LID (CounterSource::localPortInfo(), read every `subnetPoll`). Sources that cannot
  /// tell are not waited on.
  bool waitForSubnet = false;
  std::chrono::milliseconds subnetPoll{500};
  /// A counter source (in the daemon: a MAD proxy child) that failed is re-created after
  /// `retryBase`, doubling per consecutive failure up to this cap.
  std::chrono::milliseconds sourceRestartCap{30'000};
  /// Crawls are checked against the last believed one (api/service/crawl_check.h).
  CrawlCheckOptions crawlCheck;
  /// After each sweep, the switches it points at (a port gone silent, LinkDowned up, a missing
  /// cable's switch end: api/service/sweep_suspects.h) have their PortInfo re-read at once, so
  /// link changes show within a sweep or two without the OpenSM plugin.
  bool sweepProbes = true;
  /// Hardware seen before and not by a crawl stays in the model as missing
  /// (discovery/fabric_memory.h); this says when it is forgotten on its own.
  RememberOptions remember;
  /// Active/standby (role_election.h): not `always`: standby until the first setRole().
  HaMode haMode = HaMode::kAlways;
  /// A standby crawls this often (a warm snapshot) and re-reads the local port every
  /// `standbyPoll`.
  std::chrono::milliseconds standbyCrawlInterval{300'000};
  std::chrono::milliseconds standbyPoll{1'000};
  /// The operator's name of this subnet (`subnet_name`), in the state's subnet identity.
  std::string subnetName;
};

class FabricService {
 public:
  FabricService(TopologySourcePtr topologySource, CounterSourceFactory counterSources,
                FabricServiceOptions options = {});
  /// Stops the threads (see stop()).
  ~FabricService();
  FabricService(const FabricService&) = delete;
  FabricService& operator=(const FabricService&) = delete;

  /// Starts both threads; the first crawl begins at once.
  void start();
  /// Asks both threads to finish and joins them. A running crawl is cancelled when its source
  /// supports it (cancelCrawl below); a running sweep is bounded by the MAD engine's timeouts.
  void stop();
  bool stopping() const { return stopping_; }

  ServiceStatePtr state() const;
  /// Crawl as soon as possible; returns at once. Events and state follow when it completes.
  void requestCrawl();
  /// New intervals (e.g. after SIGHUP); take effect at the next wait.
  void setIntervals(std::chrono::milliseconds crawl, std::chrono::milliseconds sweep);
  /// Clears one port's counters (PortCounters, and PortCountersExtended when supported) through
  /// the sweep thread's counter source: the request is queued to the sweep thread (which owns
  /// the umad port) and answered between sweeps; waits at most `timeout` (kTimeout after it).
  /// On success a counters_cleared event is appended and the port's next rates re-baseline
  /// (no reset event, no negative spike).
  ClearCountersResult clearCounters(telemetry::PortKey key, std::chrono::milliseconds timeout);
  /// Called by stop() before joining: e.g. cancels a crawl child.
  void setCancelCrawl(std::function<void()> cancel) { cancelCrawl_ = std::move(cancel); }

  telemetry::EventLog& events() { return events_; }
  const telemetry::EventLog& events() const { return events_; }
  const telemetry::CounterHistory& history() const { return history_; }

  // OpenSM events (api/osm/osm_events.h, docs/opensm-plugin.md); fabric_service_osm.cpp.
  /// Re-reads the PortInfo of every port of the switch with this LID on the sweep thread (it
  /// owns the MAD engine) and publishes the edited topology with its link_down / link_up events
  /// at once. Unknown switches or cables fall back to requestCrawl(). Returns at once.
  /// `fromSweep`: asked by a sweep (api/service/sweep_suspects.h), not by a trap: what such a
  /// probe cannot place is left to the next crawl instead of asking for one now (at 10,240 HCAs
  /// a crawl while the SM reroutes loads the management plane the sweeps share).
  void requestPortProbe(Lid switchLid, bool fromSweep = false);
  /// Re-probes switches whose ports came up but were not Active yet (call after an SM sweep).
  void requestPendingProbes();
  /// The subnet manager changed forwarding tables: counted in the state, and the sweep thread
  /// sweeps at once and reads every switch's table in full (not only the stale ones).
  void requestRouteRefresh(const std::string& reason);
  /// Publishes the plugin link's status in the state.
  void setOsmLink(const OsmLinkStatus& link);
  /// Publishes how storms of trap-driven requests were coalesced (api/osm/request_coalescer.h).
  void setEventCoalescing(const CoalescingCounts& counts);
  /// The SM trap subscription's status (api/daemon/trap_wiring.h), for /health and /metrics.
  void setTrapSubscription(const mad::TrapSubscriptionStatus& status);
  /// Publishes the state store's status (event_journal.h).
  void setStoreStatus(const StoreStatus& store);

  // Active/standby (role_election.h); fabric_service_role.cpp.
  /// The role decided for this daemon, with the peers as last polled. Becoming active wakes the
  /// sweep thread and crawls at once; becoming standby stops the sweeps after the running one.
  void setRole(const RoleDecision& decision, std::vector<PeerView> peers = {});
  bool standby() const { return standby_; }

  // The remembered fabric (discovery/fabric_memory.h); fabric_service_memory.cpp.
  /// Before start(): the model an earlier run kept (restored from the state store), as of
  /// `seenAt`. The first crawl keeps what it lacks of it as missing, and its link events are
  /// computed against it (a cable pulled while the daemon was down is a link_down).
  void setRemembered(TopologyPtr remembered, std::chrono::system_clock::time_point seenAt);
  /// Forgets missing hardware removed on purpose: the node (with its cables), or with `port` the
  /// cable at that port; publishes the model without it and appends a hardware_forgotten event.
  /// Throws std::invalid_argument (unknown, or present: never forgotten) and std::logic_error
  /// before the first crawl.
  TopologyPtr forget(Guid node, std::optional<PortNum> port);

 private:
  struct ProbeMemory;
  /// publish() for code in other files (the template lives in fabric_service.cpp).
  void publishChange(const std::function<void(ServiceState&)>& change);
  void probeSwitches(const std::set<Lid>& lids, CounterSource* source);
  /// The probes asked for (and, every 200 ms, those of ports still coming up), on the sweep
  /// thread: after a sweep, between sweeps, and between the slices of a sweep or a table read
  /// (CounterSource::setBetweenSlices).
  void runAskedProbes(CounterSource* source);
  void probeSwitch(Lid lid, CounterSource& source);
  template <typename Fn>
  void publish(Fn&& change);
  void discoveryLoop();
  void sweepLoop();
  bool crawlOnce();
  /// crawlOnce()'s topology source call; throws what the source throws.
  TopologyPtr discoverTimed(std::chrono::steady_clock::duration& took);
  /// The crawl check (crawl_check.h): a crawl that is implausible against `before` is retried
  /// once; returns the topology to publish and says whether it is a suspect crawl's kept model.
  TopologyPtr checkCrawl(const TopologyPtr& before, TopologyPtr crawled, bool& suspect,
                         std::string& reason, std::size_t& removed);
  /// `crawled` with what the model before it (`before`, else the restored one) had and it
  /// lacks kept as missing; node_missing / node_returned events for nodes that turned missing or
  /// came back (unless an expected topology reports presence). Holds topologyEditMu_.
  TopologyPtr remember(const TopologyPtr& before, TopologyPtr crawled,
                       std::chrono::system_clock::time_point now);
  /// Publishes a topology that is not a crawl (a probe's edit, a forget) and wakes the sweeps.
  void publishEditedTopology(TopologyPtr next);
  /// Sweep thread: polls the local port until the subnet is usable (options_.waitForSubnet).
  void waitForSubnet(CounterSourcePtr& source);
  /// One read of the local port; "" when the subnet is usable, else why not.
  std::string subnetBlocker(CounterSourcePtr& source, bool& cannotTell);
  /// Creates the counter source unless a failed one was replaced too recently (backoff).
  bool createSource(CounterSourcePtr& source, std::string& error);
  /// Drops a failed source (its MAD proxy child is reaped) and pushes the next creation back.
  void dropSource(CounterSourcePtr& source);
  /// Re-reads the local port (LID, SM LID, GID prefix) and publishes it with what the topology
  /// says of both LIDs (our port GUID, the SM's): one SMP; no-op for sources that cannot tell.
  void refreshLocalPort(CounterSourcePtr& source);
  /// Sweep thread, while standby: re-reads the local port every standbyPoll and refuses counter
  /// clears, until the role changes or the service stops. Called and returns with `lock` held.
  void standbyWait(CounterSourcePtr& source, std::unique_lock<std::mutex>& lock);
  bool sweepOnce(TopologyPtr& sweptTopology, CounterSourcePtr& source,
                 telemetry::SweepAnalyzer& analyzer);
  struct ClearJob;
  void runClear(ClearJob& job, CounterSource* source, const TopologyPtr& swept);
  /// Answers every queued clear with kNotReady and `why`; holds mu_.
  void refuseClearJobs(const std::string& why);
  std::chrono::milliseconds backoff(std::uint64_t failures,
                                    std::chrono::milliseconds interval) const;

  TopologySourcePtr topologySource_;
  CounterSourceFactory counterSources_;
  FabricServiceOptions options_;
  std::function<void()> cancelCrawl_;

  telemetry::EventLog events_;
  telemetry::CounterHistory history_;

  mutable std::mutex stateMu_;  // guards state_ (pointer swap only)
  ServiceStatePtr state_;
  std::mutex publishMu_;             // serializes copy-change-swap between the two threads
  std::uint64_t eventsCounted_ = 0;  // guarded by publishMu_

  std::mutex mu_;  // guards the flags below
  std::condition_variable cv_;
  bool crawlRequested_ = false;
  /// Bumped by a crawl's topology only: it is swept at once (its ports are news). A probe's or a
  /// forget's edit (a cable down or back, hardware forgotten) waits for the next interval: a
  /// sweep of the whole fabric per changed cable would multiply the MAD load in a fault storm.
  std::uint64_t crawlGeneration_ = 0;
  TopologyPtr latestTopology_;  // the model the next sweep polls
  std::atomic<bool> stopping_{false};
  std::atomic<bool> standby_{false};
  std::deque<std::shared_ptr<ClearJob>> clearJobs_;  // guarded by mu_; run by the sweep thread
  std::set<telemetry::PortKey> rebaseline_;          // sweep thread only: cleared since last sweep
  std::set<Lid> probeRequests_;                      // guarded by mu_
  std::set<Lid> sweepProbes_;  // guarded by mu_: requested by sweeps only (requestPortProbe)
  /// The SM rerouted: the next sweep reads the forwarding tables in full (and comes at once).
  std::atomic<bool> routeRefreshRequested_{false};
  std::set<Lid> pendingUp_;                                   // guarded by mu_
  std::chrono::steady_clock::time_point nextPendingProbe_{};  // guarded by mu_
  /// Switches pending a re-probe (silent, or a cable not Active yet) wait at least this long.
  static constexpr std::chrono::milliseconds kPendingProbeEvery{200};
  // guarded by mu_; ProbeMemory::watchEvery
  std::chrono::milliseconds pendingEvery_{kPendingProbeEvery};
  std::mutex topologyEditMu_;  // a crawl and a probe publish topologies one at a time
  std::shared_ptr<ProbeMemory> probeMemory_;  // sweep thread only
  bool subnetReady_ = false;                  // guarded by mu_; the discovery thread waits on it
  // Sweep thread only: counter source re-creation backoff.
  std::uint64_t sourceFailures_ = 0;
  std::chrono::steady_clock::time_point nextSourceAt_{};
  CrawlChecker crawlChecker_;  // discovery thread only
  // Guarded by topologyEditMu_: the model restored at start (until the first crawl) and when the
  // published model was last confirmed by a crawl or a probe.
  TopologyPtr remembered_;
  std::chrono::system_clock::time_point modelSeenAt_{};

  std::thread discovery_;
  std::thread sweeper_;
};

}  // namespace ibfabric::api
