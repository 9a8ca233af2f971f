#include "api/service/event_journal.h"

#include <spdlog/spdlog.h>

#include "discovery/fabric_memory.h"

namespace ibfabric::api {

EventJournal::EventJournal(StateStore& store, telemetry::EventLog& log, EventJournalOptions options,
                           StatusSink onStatus)
    : store_(store), log_(log), options_(options), onStatus_(std::move(onStatus)) {
  status_.enabled = true;
  status_.path = store.opened().path.string();
  status_.movedAside = store.opened().movedAside.string();
  status_.movedAsideReason = store.opened().movedAsideReason;
}

EventJournal::~EventJournal() { stop(); }

void EventJournal::restore() {
  std::size_t skipped = 0;
  std::vector<telemetry::Event> events;
  std::uint64_t lastId = 0;
  try {
    events = store_.recentEvents(log_.capacity(), &skipped);
    lastId = store_.lastEventId();
  } catch (const std::exception& e) {
    throw StoreError("state: reading the stored events failed: " + std::string(e.what()));
  }
  const std::size_t restored = events.size();
  log_.restore(std::move(events), lastId);
  written_ = lastId;
  {
    std::lock_guard lock(mu_);
    status_.lastWrittenId = lastId;
    status_.restoredEvents = restored;
    status_.skippedEvents = skipped;
  }
  if (skipped > 0)
    spdlog::warn("state: {} stored events of an unknown type were not loaded", skipped);
  spdlog::info("state: {} ({} events restored, ids continue after {})", status_.path, restored,
               lastId);
  report();
}

std::optional<StoredFabric> EventJournal::restoreFabric() {
  auto stored = store_.loadFabric();
  if (!stored) return std::nullopt;
  fabricWritten_ = stored->topology;
  const MissingCounts missing = countMissing(*stored->topology);
  {
    std::lock_guard lock(mu_);
    status_.restoredNodes = stored->topology->nodes().size();
    status_.restoredCables = stored->topology->links().size();
  }
  spdlog::info(
      "state: remembered fabric restored: {} nodes, {} cables ({} nodes and {} cables "
      "missing when last written)",
      stored->topology->nodes().size(), stored->topology->links().size(), missing.nodes(),
      missing.links);
  report();
  return stored;
}

void EventJournal::flushFabric() {
  if (!fabricSource_) return;
  const FabricModel model = fabricSource_();
  if (!model.topology || model.topology == fabricWritten_) return;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const std::size_t rows =
        store_.writeFabric(fabricWritten_.get(), *model.topology, model.seenAt);
    fabricWritten_ = model.topology;
    std::lock_guard lock(mu_);
    ++status_.fabricWrites;
    status_.fabricRowsWritten += rows;
    ++status_.writes;
    wroteLocked(t0);
  } catch (const std::exception& e) {
    std::lock_guard lock(mu_);
    failedLocked(e.what());
  }
  report();
}

void EventJournal::wroteLocked(std::chrono::steady_clock::time_point started) {
  status_.consecutiveFailures = 0;
  status_.lastError.clear();
  status_.lastWrite = std::chrono::system_clock::now();
  status_.lastWriteSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

void EventJournal::failedLocked(const std::string& error) {
  ++status_.writeFailures;
  if (status_.consecutiveFailures++ == 0)
    spdlog::error("{} (retried every {} ms)", error, options_.flushInterval.count());
  status_.lastError = error;
}

void EventJournal::start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { run(); });
}

void EventJournal::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
  flush();  // what arrived while the thread was finishing
  flushFabric();
}

void EventJournal::run() {
  for (;;) {
    flush();
    flushFabric();
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, options_.flushInterval, [this] { return stopping_; })) return;
  }
}

void EventJournal::flush() {
  if (log_.lastId() <= written_) return;
  telemetry::EventQuery q;
  q.sinceId = written_;
  q.limit = 10000;
  std::vector<telemetry::Event> batch = log_.query(q);
  if (batch.empty()) return;
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t missed = batch.front().id > written_ + 1 ? batch.front().id - written_ - 1 : 0;
  try {
    std::size_t pruned = 0;
    for (;;) {  // batches of 10,000 until the log's end
      pruned += store_.appendEvents(batch, options_.retention, std::chrono::system_clock::now());
      written_ = batch.back().id;
      {
        std::lock_guard lock(mu_);
        status_.eventsWritten += batch.size();
        status_.lastWrittenId = written_;
        status_.eventsMissed += missed;  // the gap is passed once its first batch is written
        ++status_.writes;
      }
      if (missed > 0)
        spdlog::warn("state: {} events were dropped by the full event log before they were written",
                     missed);
      missed = 0;
      q.sinceId = written_;
      batch = log_.query(q);
      if (batch.empty()) break;
    }
    std::lock_guard lock(mu_);
    status_.eventsPruned += pruned;
    wroteLocked(t0);
  } catch (const std::exception& e) {
    std::lock_guard lock(mu_);
    failedLocked(e.what());
  }
  report();
}

StoreStatus EventJournal::status() const {
  std::lock_guard lock(mu_);
  return status_;
}

void EventJournal::report() {
  if (onStatus_) onStatus_(status());
}

}  // namespace ibfabric::api
