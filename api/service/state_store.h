// StateStore: the daemon's durable state — one SQLite file (WAL mode) under the state directory
// (`state.dir`, docs/daemon.md "State directory"). No server to run; `sqlite3 ibfabric.db` reads
// it while the daemon runs.
//
// Schema version 2 (PRAGMA user_version), marked as ours by PRAGMA application_id:
//   meta(key, value)   last_event_id: ids are never reused, even after retention pruned them;
//                      fabric_seen_at_ms: when the crawl the stored fabric reflects was taken
//   events(id, type, time_ms, guid, node, port, remote_guid, remote_node, remote_port, message)
//   fabric_nodes(guid, type, description, node_description, sys_image_guid, vendor_id,
//                device_id, revision, num_ports, missing_since_ms, last_seen_ms)
//   fabric_ports(node_guid, port, port_guid, width_supported, width_enabled, speed_supported,
//                speed_enabled)
//   fabric_cables(a_guid, a_port, b_guid, b_port, missing_since_ms, last_seen_ms)
// The fabric tables are the remembered fabric (discovery/fabric_memory.h): every node, port and
// cable the daemon has seen, missing ones with since-when (missing_since_ms NULL: present at
// fabric_seen_at_ms). A version 1 store (events only) is upgraded in place.
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
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "discovery/topology.h"
#include "telemetry/event_log.h"

namespace ibfabric::api {

class Database;

/// Times are stored as milliseconds since the Unix epoch.
std::int64_t storeMillis(std::chrono::system_clock::time_point t);
std::chrono::system_clock::time_point fromStoreMillis(std::int64_t ms);

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

/// The remembered fabric as stored.
struct StoredFabric {
  /// Present hardware as last seen (cabled ports Active, no LIDs), missing hardware as missing.
  TopologyPtr topology;
  /// When the crawl it reflects was taken.
  std::chrono::system_clock::time_point seenAt{};
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
  static constexpr std::int64_t kSchemaVersion = 2;
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

  // The remembered fabric (state_store_fabric.cpp).
  /// The stored fabric; nullopt when none was written. Throws StoreError (rows it cannot read).
  std::optional<StoredFabric> loadFabric();
  /// Writes, in one transaction, what differs between `before` (the model last written; null:
  /// none) and `now`, the model as of `seenAt`. Returns the rows written or deleted. Throws
  /// StoreError.
  std::size_t writeFabric(const Topology* before, const Topology& now,
                          std::chrono::system_clock::time_point seenAt);

 private:
  void openChecked();
  void createSchema();
  /// Version 1 → 2: adds the fabric tables.
  void upgradeSchema(std::int64_t from);
  std::unique_ptr<Database> db_;
  StoreOpened opened_;
};

}  // namespace ibfabric::api
