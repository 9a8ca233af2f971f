// EventLog: one ordered, bounded log of fabric events with monotonic ids and timestamps.
//
// Ids start at 1 (or after the last id of an earlier run, restore()) and never repeat; when the log
// is full the oldest events are dropped (and counted). Readers query "since id" (exclusive) with
// optional type filter and limit, or block in waitForNewer() until an event newer than an id
// arrives (for a long-poll endpoint).
//
// Event sources:
//   - appendTopologyEvents(): link down / link up from a TopologyDelta;
//   - HealthEventTracker: transitions seen over time — degraded, flapping, error threshold
//     crossed, congestion high / cleared, counter reset seen, port unreachable, port gone.
//
// Thread-safety: EventLog is thread-safe. HealthEventTracker is not (one sweep loop owns it).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "discovery/topology_delta.h"
#include "telemetry/counter_sweep.h"
#include "telemetry/link_health_eval.h"
#include "telemetry/port_rates.h"
#include "telemetry/rates_table.h"

namespace ibfabric::telemetry {

enum class EventType : std::uint8_t {
  kLinkDown,
  kLinkUp,
  kLinkDegraded,
  kLinkRecovered,
  kFlapping,
  kErrorThreshold,
  kCongestionHigh,
  kCongestionCleared,
  kCounterReset,
  kPortUnreachable,
  kPortGone,
  kCountersCleared,         ///< A client cleared a port's counters (POST .../clear-counters).
  kNodeMissing,             ///< A node of the expected topology is absent from the crawl.
  kNodeReturned,            ///< A missing expected node is back.
  kPoolAllocationDegraded,  ///< a GPU pool allocation's host failed (scheduler_hooks/pool.h)
  /// Traffic to an unreachable destination was dropped at a port (PortRcvSwitchRelayErrors,
  /// discards at a port whose link is down): a routing symptom, not a fault of that cable.
  kUnreachableTraffic,
  /// An operator forgot missing hardware (removed on purpose): it leaves the model.
  kHardwareForgotten,
  /// A cable physically linked but not Active (link_up while the subnet manager had not yet
  /// activated it, or Active ports taken back to Init) is Active: it carries traffic again.
  kLinkActive,
  /// A job's hottest link passed the congestion threshold (api/service/job_service.h); names
  /// the other jobs on that link. Once per episode.
  kJobCongested,
  kCount,  ///< Not a type: the number of types. New types go above it.
};
inline constexpr std::size_t kEventTypeCount = static_cast<std::size_t>(EventType::kCount);
/// "link_down", "link_up", "link_degraded", "link_recovered", "flapping", "error_threshold",
/// "congestion_high", "congestion_cleared", "counter_reset", "port_unreachable", "port_gone",
/// "counters_cleared", "node_missing", "node_returned", "pool_allocation_degraded",
/// "unreachable_traffic", "hardware_forgotten", "link_active", "job_congested".
std::string_view toString(EventType t);
std::optional<EventType> parseEventType(std::string_view text);

struct EventEnd {
  Guid node;
  std::string description;
  PortNum port;
  friend bool operator==(const EventEnd&, const EventEnd&) = default;
};

struct Event {
  std::uint64_t id = 0;
  EventType type = EventType::kLinkDown;
  std::chrono::system_clock::time_point time{};
  std::chrono::steady_clock::time_point steadyTime{};
  EventEnd end;
  std::optional<EventEnd> remote;
  std::string message;
};

struct EventQuery {
  std::uint64_t sinceId = 0;  ///< Events with id > sinceId.
  std::set<EventType> types;  ///< Empty: all.
  std::size_t limit = 1000;
};

class EventLog {
 public:
  explicit EventLog(std::size_t capacity = 10000);

  /// Stamps id and times; returns the id.
  std::uint64_t append(EventType type, EventEnd end, std::optional<EventEnd> remote,
                       std::string message);
  /// Before the first append: takes the events of an earlier run (oldest first, ids
  /// increasing, the newest `capacity` kept); the next id is lastId + 1 (lastId: the highest id
  /// ever given, which may be above the newest event kept). Throws std::logic_error after an
  /// append.
  void restore(std::vector<Event> events, std::uint64_t lastId);
  /// Oldest first.
  std::vector<Event> query(const EventQuery& q = {}) const;
  /// Waits until an event with id > afterId exists or `timeout` passes; true if one does.
  bool waitForNewer(std::uint64_t afterId, std::chrono::milliseconds timeout) const;
  std::uint64_t lastId() const;
  std::uint64_t dropped() const;
  std::size_t size() const;
  std::size_t capacity() const { return capacity_; }

 private:
  const std::size_t capacity_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::deque<Event> events_;
  std::uint64_t nextId_ = 1;
  std::uint64_t dropped_ = 0;
};

/// Link down (removed, or a state change away from Active) and link up (added, or back to
/// Active) events from a delta.
void appendTopologyEvents(EventLog& log, const TopologyDelta& delta);

/// Moves a sweeper to a newer topology snapshot (a re-crawl): appends the link down / link up
/// events of TopologyDelta(sweeper.topology(), next) to `log`, then hands `next` to the sweeper,
/// so its next sweep lists each port that lost its link once as gone and polls it no more. A
/// sweeper without a topology just takes `next` (no events). Returns the delta.
TopologyDelta followTopology(CounterSweeper& sweeper, EventLog& log, TopologyPtr next);

/// Turns per-sweep observations into events on transitions only (a congested port yields one
/// congestion_high, then one congestion_cleared when it drops below the clear threshold).
class HealthEventTracker {
 public:
  explicit HealthEventTracker(double congestionClear = 0.05) : congestionClear_(congestionClear) {}

  /// Per sweep: counter resets (from the rates against the previous sweep), ports that became
  /// unreachable (timeout / unreachable / unsupported), ports gone.
  void observeSweep(const CounterSnapshot& snapshot, const RatesTable& rates, EventLog& log);
  /// Per health evaluation: degraded / recovered, flapping, error threshold, congestion.
  void observeHealth(const std::vector<LinkHealthReport>& reports, EventLog& log);

 private:
  double congestionClear_;
  std::set<PortKey> unreachable_;
  std::map<std::pair<PortKey, PortKey>, LinkState> linkState_;
  std::set<std::pair<PortKey, std::string>> active_;  // (port, reason code + counter) raised
  std::set<std::pair<PortKey, PortKey>> congested_;
};

}  // namespace ibfabric::telemetry
