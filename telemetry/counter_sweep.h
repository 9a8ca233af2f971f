// CounterSweeper: reads the port counters of every linked port of a Topology snapshot through
// the MadEngine and publishes each sweep as an immutable CounterSnapshot.
//
// Per topology snapshot, the sweeper asks each node once for its PerfMgt ClassPortInfo; the
// capability masks decide what a sweep reads per port:
//   - PortCountersExtended (64-bit data and packet counters) when the node has extended
//     counters, else the 32-bit data counters of PortCounters;
//   - the 64-bit error counters and XmitWait of PortCountersExtended when CapabilityMask2 says
//     "additional extended counters", else PortCounters' narrow error counters and (when
//     CapabilityMask has PortXmitWait) its 32-bit XmitWait.
// A CA port is queried at its own LID with PortSelect = its port number; a switch port at the
// switch's LID with PortSelect = the port. AllPortSelect is recorded but not used: a sweep wants
// per-port values, never sums.
//
// Ports that have a link are polled. When setTopology() gives a snapshot in which a port polled
// before no longer has a link (or its node is gone), the next CounterSnapshot lists that port
// once with status kGone, and it is polled no more.
//
// sweep() sends the counter queries of a sweep in slices of a few engine windows, ports
// interleaved across their LIDs so that every slice keeps the window full, two slices in flight,
// and returns when all are answered (the daemon's sweep thread): the engine holds a slice's
// requests and results at a time, not the sweep's. The slices share one deadline, the engine's
// batchWatchdog from the sweep's first send, as one batch would. sweep(sink) is the same sweep
// for callers that print as they go (the one-shot CLI): it also hands each port's sample to the
// sink as soon as its slice is done, and returns the same snapshot.
//
// Thread-safety: a CounterSweeper is used from one thread at a time (setTopology and sweep must
// not race). The snapshots it returns are immutable and thread-safe to read from anywhere.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "discovery/topology.h"
#include "telemetry/clock.h"
#include "telemetry/mad_engine.h"
#include "telemetry/pma_attributes.h"

namespace ibfabric::telemetry {

/// Every counter a sweep reads, data counters first.
enum class Counter : std::uint8_t {
  kXmitData,  ///< 4-octet units.
  kRcvData,   ///< 4-octet units.
  kXmitPkts,
  kRcvPkts,
  kSymbolErrors,
  kLinkErrorRecovery,
  kLinkDowned,
  kRcvErrors,
  kRcvRemotePhysicalErrors,
  kRcvSwitchRelayErrors,
  kXmitDiscards,
  kXmitConstraintErrors,
  kRcvConstraintErrors,
  kLocalLinkIntegrityErrors,
  kExcessiveBufferOverrunErrors,
  kVl15Dropped,
  kXmitWait,
};
inline constexpr std::size_t kCounterCount = 17;
inline constexpr std::array<Counter, kCounterCount> kAllCounters = {
    Counter::kXmitData,
    Counter::kRcvData,
    Counter::kXmitPkts,
    Counter::kRcvPkts,
    Counter::kSymbolErrors,
    Counter::kLinkErrorRecovery,
    Counter::kLinkDowned,
    Counter::kRcvErrors,
    Counter::kRcvRemotePhysicalErrors,
    Counter::kRcvSwitchRelayErrors,
    Counter::kXmitDiscards,
    Counter::kXmitConstraintErrors,
    Counter::kRcvConstraintErrors,
    Counter::kLocalLinkIntegrityErrors,
    Counter::kExcessiveBufferOverrunErrors,
    Counter::kVl15Dropped,
    Counter::kXmitWait,
};
/// snake_case names ("xmit_data", "symbol_errors", ...), used in JSON and tables.
std::string_view toString(Counter c);
/// The perfquery spelling ("PortXmitData", "SymbolErrorCounter", ...).
std::string_view ibName(Counter c);
/// True for the error counters (not data, packets or XmitWait).
bool isErrorCounter(Counter c);
/// Width of the counter in PortCounters (IBA 16.1.3.5): 32, 16, 8 or 4 bits.
int narrowWidth(Counter c);
inline std::size_t index(Counter c) { return static_cast<std::size_t>(c); }

/// Raw counter values of one port, each with the width it was read at (0 = not read).
struct CounterValues {
  std::array<std::uint64_t, kCounterCount> value{};
  std::array<std::uint8_t, kCounterCount> bits{};

  bool has(Counter c) const { return bits[index(c)] != 0; }
  std::uint64_t get(Counter c) const { return value[index(c)]; }
  void set(Counter c, std::uint64_t v, int width) {
    value[index(c)] = v;
    bits[index(c)] = static_cast<std::uint8_t>(width);
  }
  /// Read, narrower than 64 bits and stuck at its maximum: the true count is unknown.
  bool saturated(Counter c) const;
  friend bool operator==(const CounterValues&, const CounterValues&) = default;
};

/// What the node's ClassPortInfo says a sweep can read.
struct PmaCapabilities {
  mad::ClassPortInfo classPortInfo;
  /// PortSamplesControl.Tick of the node's device model (type, vendor, device, revision: the field
  /// is read-only hardware data), asked of one node per model; nullopt when that node refused or
  /// did not answer (ibsim does not implement the attribute): the configured default applies.
  std::optional<std::uint8_t> sampleTick;
  /// The device counts PortXmitWait in bytes of the whole port rather than per lane (NVIDIA
  /// Quantum switches: vendor 0x02c9, device 0xd2f0/0xd2f2/0xd2f4), from its NodeInfo.
  bool xmitWaitPerPortBytes = false;
  bool extendedCounters() const { return classPortInfo.extendedCounters(); }
  bool extendedErrorCounters() const { return classPortInfo.extendedErrorCounters(); }
  bool allPortSelect() const { return classPortInfo.allPortSelect(); }
  bool xmitWait() const { return classPortInfo.portXmitWait(); }
};

enum class PortStatus : std::uint8_t {
  kOk,           ///< Every query of the port answered.
  kTimeout,      ///< A query went unanswered after all retries (or its target was skipped).
  kUnsupported,  ///< The PMA answered with an error status (attribute or port unsupported).
  kUnreachable,  ///< The node's ClassPortInfo could not be read: nothing was asked.
  kGone,         ///< Polled before, no longer linked in the topology: not polled any more.
};
std::string_view toString(PortStatus s);  // "ok", "timeout", "unsupported", "unreachable", "gone"

/// A port's identity as a sweep keeps it (independent of NodeIndex).
struct PortKey {
  Guid node;
  PortNum port;
  friend auto operator<=>(const PortKey&, const PortKey&) = default;
};

struct PortSample {
  PortKey key;
  NodeType nodeType = NodeType::kCa;
  std::string nodeDescription;   ///< Node::description.
  Lid lid;                       ///< Where the PMA queries went.
  std::optional<LinkRate> rate;  ///< Active rate from the topology.
  /// The other end of the cable.
  std::optional<PortKey> remote;
  std::string remoteDescription;

  PortStatus status = PortStatus::kOk;
  std::string detail;  ///< Why, when status is not kOk ("PortCounters: timeout after 4 sends").
  /// When the last reply for this port arrived (engine clock); the sweep start if none did.
  mad::Clock::time_point at{};
  /// When the port's newest kOk reading was taken (engine clock): `at` for a kOk sample; for a
  /// port that failed this sweep, the last sweep that read it — how stale what is shown of it
  /// is. The epoch ({}) when no sweep of this sweeper (or the one it continues) read it.
  mad::Clock::time_point lastOk{};
  bool stale() const { return status != PortStatus::kOk && lastOk != mad::Clock::time_point{}; }
  CounterValues counters;
  /// Counters this sweep cleared (PortCounters SET) after reading them: the next sample of
  /// these counts from 0.
  std::vector<Counter> clearedAfterRead;
  /// Length of one PortXmitWait tick of this port in seconds, from the node's
  /// PortSamplesControl.Tick and the port's active rate (see xmitWaitTickSeconds); 0 when the
  /// device did not say, in which case the configured default tick applies.
  double xmitWaitTickSeconds = 0.0;
};

/// The time one PortXmitWait increment stands for, per the IBA: (Tick + 1) symbol times, a
/// symbol time being the time one byte takes on one lane at the active speed (4 ns at SDR,
/// 0.16 ns at HDR). `perPortBytes`: the device counts (Tick + 1) bytes of the whole port
/// instead (NVIDIA Quantum), i.e. the lane time divided by the width. 0 without a usable rate.
double xmitWaitTickSeconds(std::uint8_t tick, const std::optional<LinkRate>& rate,
                           bool perPortBytes);
/// True for the devices known to count PortXmitWait per port bytes (see PmaCapabilities).
bool countsXmitWaitPerPortBytes(std::uint32_t vendorId, std::uint32_t deviceId);

/// A target (LID) that did not answer every query of a sweep.
struct TargetFailure {
  Lid lid;
  Guid node;
  std::string nodeDescription;
  int failedRequests = 0;
  int requests = 0;
  int attempts = 0;  ///< Sends for all its requests (retries included).
  std::string reason;
};

struct SweepStats {
  std::size_t ports = 0;  ///< Ports polled (excluding kGone entries).
  std::size_t portsOk = 0;
  /// Polled ports not read this sweep that an earlier sweep read (PortSample::stale()): what is
  /// shown of them is their last good reading.
  std::size_t portsStale = 0;
  std::size_t requests = 0;  ///< MAD requests of this sweep (ClassPortInfo included).
  std::size_t attempts = 0;  ///< Sends (requests + retries).
  std::size_t retries = 0;
  std::size_t failedRequests = 0;
  std::size_t classPortInfoQueries = 0;
  std::size_t samplesControlQueries = 0;  ///< PortSamplesControl GETs (once per node, as CPI).
  std::size_t clearRequests = 0;          ///< PortCounters SETs sent by the clear-saturated policy.
  std::chrono::nanoseconds duration{0};
  /// Of `duration`, the time spent waiting for the counter MADs (engine.run of the
  /// PortCounters/PortCountersExtended batch); the rest is building requests and decoding.
  std::chrono::nanoseconds madDuration{0};
};

/// The result of one sweep. Immutable once published.
struct CounterSnapshot {
  std::uint64_t sequence = 0;  ///< 1, 2, ... per sweeper.
  mad::Clock::time_point started{};
  mad::Clock::time_point finished{};
  std::chrono::system_clock::time_point wallTime{};  ///< When the sweep finished.
  TopologyPtr topology;
  /// Sorted by key; includes kGone entries for ports that just disappeared.
  std::vector<PortSample> ports;
  std::vector<TargetFailure> failures;
  SweepStats stats;

  const PortSample* find(PortKey key) const;
};
using CounterSnapshotPtr = std::shared_ptr<const CounterSnapshot>;

struct SweepOptions {
  /// Which linked ports to poll; empty = all.
  std::function<bool(const Node&, const Port&)> portFilter;
  /// Off by default: after reading, clear (PortCounters SET with CounterSelect) the narrow
  /// counters that are saturated, so they count again. Needs write access to the PMA.
  bool clearSaturated = false;
  /// LIDs never asked PortSamplesControl: ports whose PMA may be a user-space agent rather than
  /// the device (under ibsim a GET to the node of a simulator client, e.g. OpenSM, is handed to
  /// that client, and OpenSM 3.3.23 crashes on it). The umad source puts the SM's and its own
  /// LID here; another node of the same model answers for them.
  std::set<Lid> samplesControlAvoid;
};

class CounterSweeper {
 public:
  CounterSweeper(mad::MadEngine& engine, const mad::Clock& clock, SweepOptions options = {});

  /// Takes a new topology snapshot: capabilities are read again, ports that lost their link are
  /// reported once as kGone by the next sweep.
  void setTopology(TopologyPtr topology);
  const TopologyPtr& topology() const { return topology_; }

  /// Sweeps every target port; never throws on fabric errors (they are per-port statuses).
  CounterSnapshotPtr sweep();
  /// Receives one port's finished sample, on the thread that called sweep(sink).
  using SampleSink = std::function<void(const PortSample&)>;
  /// The same sweep, streamed: `sink` sees every port's sample once, as soon as the slice that
  /// read it has completed (the clear-saturated policy, when on, has run for it), in the order
  /// the slices were sent, not sorted; ports reported gone come last. Returns the same snapshot
  /// as sweep() (sorted by key, same statuses, stats and failures). The engine's failFastAfter
  /// applies per slice; its batchWatchdog to the whole sweep.
  CounterSnapshotPtr sweep(const SampleSink& sink);
  /// A sweeper that replaces another continues its last snapshot: the next sweep is numbered
  /// at least previous.sequence + 1, and its ports keep their last good readings' times
  /// (PortSample::lastOk).
  void continueAfter(const CounterSnapshot& previous);

  /// Run on the sweeping thread between two slices of a sweep, while the next slice is in the
  /// engine: the caller's own MADs on the same engine (the daemon's probes) need not wait for
  /// the whole sweep. Empty: nothing.
  void setBetweenSlices(std::function<void()> hook) { betweenSlices_ = std::move(hook); }

  /// Capabilities read for the current topology, by node GUID (absent: not read or no answer).
  const std::map<Guid, PmaCapabilities>& capabilities() const { return capabilities_; }

 private:
  struct Target {
    PortKey key;
    NodeIndex node = kNoNode;
    Lid lid;
    mad::Clock::time_point lastOk{};  ///< PortSample::lastOk of its newest sample.
  };
  /// Gives `next` (sorted) the lastOk of the same ports in `from` (sorted by key).
  template <typename From, typename KeyOf, typename LastOkOf>
  static void carryLastOk(std::vector<Target>& next, const From& from, KeyOf keyOf,
                          LastOkOf lastOkOf);
  /// One counter query of a sweep: which target (index into targets_), which attribute.
  enum class QueryKind : std::uint8_t { kExtended, kNarrow };
  struct Query {
    std::size_t port;
    QueryKind kind;
  };
  /// sweep() and sweep(sink): `sink` may be null.
  CounterSnapshotPtr sweepInSlices(const SampleSink* sink);
  /// Numbered snapshot with the capabilities read (their failures into `failures`).
  std::shared_ptr<CounterSnapshot> beginSweep(std::vector<TargetFailure>& failures);
  /// Fills the identity of target `i` into `s` and appends its counter queries; a port that
  /// cannot be asked gets its kUnreachable status instead.
  void prepareSample(std::size_t i, mad::Clock::time_point started, PortSample& s,
                     std::vector<mad::MadRequest>& requests, std::vector<Query>& queries) const;
  /// Decodes one answer into the port's sample; a failed query also goes to `tf`, the
  /// accounting of its target (never null for a failed query).
  void applyReply(const Query& q, const mad::MadResult& r, PortSample& s, TargetFailure* tf) const;
  /// The clear-saturated policy for samples[i], i in `which`.
  void clearSaturated(std::vector<PortSample>& samples, const std::vector<std::size_t>& which,
                      SweepStats& stats);
  /// Targets with failed queries into `failures` (by LID).
  void collectFailures(std::map<Lid, TargetFailure>& byLid,
                       std::vector<TargetFailure>& failures) const;
  /// Stats, the gone ports (each also to `sink` when given), the sort; publishes `snap`.
  CounterSnapshotPtr finishSweep(std::shared_ptr<CounterSnapshot> snap,
                                 std::vector<PortSample> samples,
                                 std::vector<TargetFailure> failures, const SampleSink* sink);
  /// Target indices, round-robin over their LIDs (a switch's ports spread across the sweep).
  std::vector<std::size_t> interleavedByLid() const;
  void readCapabilities(SweepStats& stats, std::vector<TargetFailure>& failures);
  void readSampleTicks(SweepStats& stats);
  /// A device model: node type, vendor, device and revision from NodeInfo.
  using Model = std::tuple<NodeType, std::uint32_t, std::uint32_t, std::uint32_t>;
  Model modelOf(const Node& node) const {
    return {node.type, node.vendorId, node.deviceId, node.revision};
  }

  mad::MadEngine& engine_;
  const mad::Clock& clock_;
  SweepOptions options_;
  std::function<void()> betweenSlices_;
  TopologyPtr topology_;
  std::vector<Target> targets_;
  std::vector<PortSample> gone_;  ///< Reported by the next sweep.
  /// The last good readings of the snapshot continued (continueAfter), by key, for the ports
  /// of the next topology; cleared once given.
  std::vector<std::pair<PortKey, mad::Clock::time_point>> continued_;
  std::map<Guid, PmaCapabilities> capabilities_;
  std::map<Guid, std::string> capabilityFailures_;  ///< Nodes whose ClassPortInfo failed.
  /// PortSamplesControl answers per model, kept across topologies: a tick, or nullopt when the
  /// device refused (MAD status). Models asked for the current topology (an unanswered query is
  /// asked again only with the next topology).
  std::map<Model, std::optional<std::uint8_t>> modelTicks_;
  std::set<Model> modelsAsked_;
  std::uint64_t sequence_ = 0;
};

/// CounterSelect bit (PortCounters) of a counter; nullopt for XmitWait (CounterSelect2).
std::optional<int> counterSelectBit(Counter c);
/// A PortCounters SET that clears `counters` on `portSelect`, built with libibmad's fields.
mad::MadBuffer buildPortCountersClear(std::uint8_t portSelect,
                                      const std::vector<Counter>& counters);

}  // namespace ibfabric::telemetry
