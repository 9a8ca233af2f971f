// RequestCoalescer: turns a storm of events asking for the same work — a switch's re-probe, a
// crawl, a forwarding-table refresh, each a key — into a bounded number of runs of that work.
//
//   first event for a quiet key   runs at once (a real change is acted on without delay)
//   more events within `quiet`    coalesced: remembered (the latest one's work), not run
//   `quiet` without an event      the burst ends: its work runs once more if anything was
//                                 coalesced (the trailing run: what the storm hid is seen)
//   a burst longer than `maxWait` the coalesced work runs every `maxWait` while it lasts
//
// So a burst of N events for one key over T seconds runs at most 2 + T / maxWait times. A burst
// is a key's run of events with gaps under `quiet` that coalesced at least one; it is counted,
// and its end logged in one line (the events themselves are not logged one by one).
//
// The work runs outside the coalescer's lock, on the caller's thread (the first run) or on the
// coalescer's timer thread (start()), or in tick() when tests drive it with a fake clock.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "api/osm/osm_status.h"

namespace ibfabric::api {

class RequestCoalescer {
 public:
  using Clock = std::chrono::steady_clock;
  using Work = std::function<void()>;
  struct Options {
    Clock::duration quiet = std::chrono::seconds(1);
    Clock::duration maxWait = std::chrono::seconds(5);
    std::function<Clock::time_point()> now = [] { return Clock::now(); };
    /// Called (from the timer thread) when the counts changed since the last call.
    std::function<void(const CoalescingCounts&)> onCounts;
  };

  explicit RequestCoalescer(Options options);
  ~RequestCoalescer();
  RequestCoalescer(const RequestCoalescer&) = delete;
  RequestCoalescer& operator=(const RequestCoalescer&) = delete;

  /// An event asking for `key`'s work.
  void offer(const std::string& key, Work work);
  /// Runs what is due (trailing runs, ends of bursts); returns when the next is due.
  std::optional<Clock::time_point> tick();
  CoalescingCounts counts() const;

  /// The timer thread that calls tick() when something is due; stop() joins it.
  void start();
  void stop();

 private:
  struct Burst {
    Clock::time_point start, lastEvent, lastRun;
    std::uint64_t events = 0, runs = 0;
    Work pending;  ///< the latest coalesced event's work; empty when none waits
  };
  void loop();

  Options options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Burst> active_;
  CoalescingCounts counts_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ibfabric::api
