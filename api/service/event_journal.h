// EventJournal: makes the service's event log durable in the state store (state_store.h).
//
// At start-up, before the service runs, restore() gives the event log the newest events of the
// earlier runs and their last id, so ids continue and `/events?since=` spans restarts. Then one
// thread writes what the log appended since the last write, once a second (one transaction per
// batch, retention applied in it): a kill -9 loses at most the last second of events. stop()
// writes what is left. A failing write (disk full, I/O error) is retried the next second from
// the same id, so nothing the log still holds is skipped; its status says so.
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
#include <thread>

#include "api/service/service_state.h"
#include "api/service/state_store.h"
#include "telemetry/event_log.h"

namespace ibfabric::api {

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
  void start();
  /// Writes what is left, then joins the thread.
  void stop();
  /// Writes what the log holds beyond the last write, now (the thread's step; tests call it).
  void flush();
  StoreStatus status() const;

 private:
  void run();
  void report();

  StateStore& store_;
  telemetry::EventLog& log_;
  EventJournalOptions options_;
  StatusSink onStatus_;

  mutable std::mutex mu_;  // guards status_ and the thread's wake-up
  std::condition_variable cv_;
  bool stopping_ = false;
  StoreStatus status_;
  std::uint64_t written_ = 0;  // the newest event id in the store; the journal thread's
  std::thread thread_;
};

}  // namespace ibfabric::api
