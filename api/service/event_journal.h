// EventJournal: makes the service's event log and its remembered fabric (discovery/
// fabric_memory.h) durable in the state store (state_store.h).
//
// At start-up, before the service runs, restore() gives the event log the newest events of the
// earlier runs and their last id, so ids continue and `/events?since=` spans restarts. Then one
// thread writes what the log appended since the last write, once a second (one transaction per
// batch, retention applied in it): a kill -9 loses at most the last second of events. stop()
// writes what is left. A failing write (disk full, I/O error) is retried the next second from
// the same id, so nothing the log still holds is skipped; its status says so.
//
// The fabric: restoreFabric() loads the model an earlier run kept (for
// FabricService::setRemembered); each step then writes what changed in the model the fabric
// source gives (the service's published topology) since the last write — nothing when it is the
// same snapshot, a diff when a crawl, a probe or a forget published a new one.
//
// Status goes to `onStatus` after every write attempt that changed it (the daemon publishes it
// in the service state: /api/v1/health "store", ibfabric_store_* metrics).
//
// Thread-safety: start()/stop() from one thread; the store is used by the journal's thread only
// once start() ran.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "api/service/service_state.h"
#include "api/service/state_store.h"
#include "telemetry/event_log.h"

namespace ibfabric::api {

/// The model to keep and when the crawl it reflects was taken.
struct FabricModel {
  TopologyPtr topology;
  std::chrono::system_clock::time_point seenAt{};
};

struct EventJournalOptions {
  StoreRetention retention;
  std::chrono::milliseconds flushInterval{1000};
};

class EventJournal {
 public:
  using StatusSink = std::function<void(const StoreStatus&)>;
  EventJournal(StateStore& store, telemetry::EventLog& log, EventJournalOptions options,
               StatusSink onStatus);
  ~EventJournal();
  EventJournal(const EventJournal&) = delete;
  EventJournal& operator=(const EventJournal&) = delete;

  /// Loads the stored events into the (still empty) log. Throws StoreError.
  void restore();
  /// Loads the stored fabric; nullopt when none was stored. Throws StoreError.
  std::optional<StoredFabric> restoreFabric();
  /// Where the thread reads the model to keep; set before start().
  void setFabricSource(std::function<FabricModel()> source) { fabricSource_ = std::move(source); }
  void start();
  /// Writes what is left, then joins the thread.
  void stop();
  /// Writes what the log holds beyond the last write, now (the thread's step; tests call it).
  void flush();
  StoreStatus status() const;

 private:
  void run();
  void report();
  /// Writes the fabric source's model when it is a new one (the thread's step).
  void flushFabric();
  /// A write that began at `started` succeeded / failed with `error` (mu_ held).
  void wroteLocked(std::chrono::steady_clock::time_point started);
  void failedLocked(const std::string& error);

  StateStore& store_;
  telemetry::EventLog& log_;
  EventJournalOptions options_;
  StatusSink onStatus_;

  mutable std::mutex mu_;  // guards status_ and the thread's wake-up
  std::condition_variable cv_;
  bool stopping_ = false;
  StoreStatus status_;
  std::uint64_t written_ = 0;  // the newest event id in the store; the journal thread's
  std::function<FabricModel()> fabricSource_;
  TopologyPtr fabricWritten_;  // the model last written (journal thread)
  std::thread thread_;
};

}  // namespace ibfabric::api
