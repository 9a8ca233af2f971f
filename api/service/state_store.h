// StateStore: the daemon's durable state — one SQLite file (WAL mode) under the state directory
// (`state.dir`, docs/daemon.md "State directory"). No server to run; `sqlite3 ibfabric.db` reads
// it while the daemon runs.
//
// Schema version 1 (PRAGMA user_version), marked as ours by PRAGMA application_id:
//   meta(key, value)   last_event_id: ids are never reused, even after retention pruned them
//   events(id, type, time_ms, guid, node, port, remote_guid, remote_node, remote_port, message)
//
// Opening checks the file before trusting it. A file that is damaged (SQLITE_CORRUPT/NOTADB or
// a failed quick_check), not ours (another application_id, or tables without ours) or of a newer
// schema is moved aside with its -wal/-shm files to `ibfabric.db.<reason>-<UTC time>` and a new
// store is created; opened().movedAside says so (logged, and in /api/v1/health "store"). The
// file is held with an exclusive lock: a second daemon on the same directory fails at start
// (StoreError) instead of writing beside the first.
//
// Writes are transactions with synchronous=NORMAL: a crash of the process (kill -9) loses
// nothing committed; a power loss may lose the last transactions, never the file.
//
// Thread-safety: none; the event journal's thread owns it after start-up (event_journal.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "telemetry/event_log.h"

namespace ibfabric::api {

class Database;

/// The store cannot be used (directory not writable, file locked by another process...).
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct StoreRetention {
  /// Events older than this are deleted (0: no age limit).
  std::chrono::seconds eventMaxAge{std::chrono::hours(24 * 30)};
  /// At most this many events are kept, the newest (0: no count limit).
  std::size_t eventMaxCount = 100000;
};

/// What opening found.
struct StoreOpened {
  std::filesystem::path path;
  /// Where an unusable earlier file was moved, and why; empty when none was.
  std::filesystem::path movedAside;
  std::string movedAsideReason;
};

class StateStore {
 public:
  static constexpr std::int64_t kApplicationId = 0x49424642;  // "IBFB"
  static constexpr std::int64_t kSchemaVersion = 1;
  static constexpr const char* kFileName = "ibfabric.db";

  /// Opens (creating) `dir`/ibfabric.db as described above; `maxBytes` bounds the file (0: no
  /// bound), see setMaxBytes(). Throws StoreError.
  explicit StateStore(const std::filesystem::path& dir, std::uint64_t maxBytes = 0);
  ~StateStore();
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  const StoreOpened& opened() const { return opened_; }

  /// The newest `max` events, oldest first. Rows this version cannot read (an unknown type) are
  /// skipped and counted in `skipped`.
  std::vector<telemetry::Event> recentEvents(std::size_t max, std::size_t* skipped = nullptr);
  /// The highest event id ever stored (0: none).
  std::uint64_t lastEventId();
  /// Appends `events` (ids increasing, above lastEventId()) in one transaction, then applies
  /// `retention`. Returns how many old events retention deleted. Throws StoreError.
  std::size_t appendEvents(const std::vector<telemetry::Event>& events,
                           const StoreRetention& retention,
                           std::chrono::system_clock::time_point now);
  std::size_t eventCount();
  /// The file never grows past `maxBytes` (never below its current size; 0: no bound): a write
  /// that would is refused (StoreError, "database or disk is full") and nothing of it is kept,
  /// instead of the store filling the disk it shares with the system.
  void setMaxBytes(std::uint64_t maxBytes);

 private:
  void openChecked();
  void createSchema();
  std::unique_ptr<Database> db_;
  StoreOpened opened_;
};

}  // namespace ibfabric::api
