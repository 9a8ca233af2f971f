#include "api/service/state_store.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>
#include <system_error>

#include "api/service/sqlite_db.h"

namespace ibfabric::api {
namespace {

namespace fs = std::filesystem;
using telemetry::Event;
using telemetry::EventEnd;

constexpr const char* kSchema = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE events(
  id INTEGER PRIMARY KEY,
  type TEXT NOT NULL,
  time_ms INTEGER NOT NULL,
  guid INTEGER NOT NULL,
  node TEXT NOT NULL,
  port INTEGER NOT NULL,
  remote_guid INTEGER,
  remote_node TEXT,
  remote_port INTEGER,
  message TEXT NOT NULL);
CREATE INDEX events_time ON events(time_ms);
INSERT INTO meta(key, value) VALUES ('last_event_id', 0);
)sql";

// Schema version 2: the remembered fabric (state_store_fabric.cpp).
constexpr const char* kFabricSchema = R"sql(
CREATE TABLE fabric_nodes(
  guid INTEGER PRIMARY KEY,
  type INTEGER NOT NULL,
  description TEXT NOT NULL,
  node_description TEXT NOT NULL,
  sys_image_guid INTEGER NOT NULL,
  vendor_id INTEGER NOT NULL,
  device_id INTEGER NOT NULL,
  revision INTEGER NOT NULL,
  num_ports INTEGER NOT NULL,
  missing_since_ms INTEGER,
  last_seen_ms INTEGER);
CREATE TABLE fabric_ports(
  node_guid INTEGER NOT NULL,
  port INTEGER NOT NULL,
  port_guid INTEGER NOT NULL,
  width_supported INTEGER NOT NULL,
  width_enabled INTEGER NOT NULL,
  speed_supported INTEGER NOT NULL,
  speed_enabled INTEGER NOT NULL,
  PRIMARY KEY(node_guid, port)) WITHOUT ROWID;
CREATE TABLE fabric_cables(
  a_guid INTEGER NOT NULL,
  a_port INTEGER NOT NULL,
  b_guid INTEGER NOT NULL,
  b_port INTEGER NOT NULL,
  missing_since_ms INTEGER,
  last_seen_ms INTEGER,
  PRIMARY KEY(a_guid, a_port)) WITHOUT ROWID;
)sql";

std::string utcStamp(std::chrono::system_clock::time_point t) {
  const std::time_t s = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

/// Why an existing file cannot be used as our store; "" when it can.
std::string unusableReason(Database& db) {
  const std::int64_t app = db.queryInt("PRAGMA application_id");
  const std::int64_t version = db.queryInt("PRAGMA user_version");
  const std::int64_t tables = db.queryInt("SELECT count(*) FROM sqlite_master");
  if (app == 0 && version == 0 && tables == 0) return "";  // new, empty file
  if (app != StateStore::kApplicationId)
    return "foreign: not an ibfabric store (application_id " + std::to_string(app) + ")";
  if (version > StateStore::kSchemaVersion)
    return "newer: schema version " + std::to_string(version) + ", this ibfabricd reads " +
           std::to_string(StateStore::kSchemaVersion);
  if (version < 1) return "foreign: an ibfabric application id without a schema";
  std::string check = db.queryText("PRAGMA quick_check");
  if (check == "ok") return "";
  std::replace(check.begin(), check.end(), '\n', ' ');  // one line for the log and /health
  if (check.size() > 200) check = check.substr(0, 200) + "...";
  return "corrupt: quick_check says " + check;
}

/// Moves `path` and its -wal/-shm files to `path`.<tag>-<time>; returns the new main file name.
fs::path moveAside(const fs::path& path, const std::string& tag) {
  const fs::path target =
      path.string() + "." + tag + "-" + utcStamp(std::chrono::system_clock::now());
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const fs::path from = path.string() + suffix;
    std::error_code ec;
    if (!fs::exists(from, ec)) continue;
    fs::rename(from, target.string() + suffix, ec);
    if (ec) throw StoreError("state: cannot move " + from.string() + " aside: " + ec.message());
  }
  return target;
}

}  // namespace

std::int64_t storeMillis(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::chrono::system_clock::time_point fromStoreMillis(std::int64_t ms) {
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms));
}

StateStore::StateStore(const fs::path& dir, std::uint64_t maxBytes) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw StoreError("state: cannot create " + dir.string() + ": " + ec.message());
  opened_.path = dir / kFileName;
  openChecked();
  setMaxBytes(maxBytes);
}

void StateStore::setMaxBytes(std::uint64_t maxBytes) {
  try {
    const std::int64_t page = db_->queryInt("PRAGMA page_size");
    const std::int64_t pages =
        maxBytes == 0 ? 0xfffffffe
                      : std::max<std::int64_t>(1, static_cast<std::int64_t>(maxBytes) / page);
    db_->queryInt("PRAGMA max_page_count=" + std::to_string(pages));
  } catch (const SqliteError& e) {
    throw StoreError("state: " + std::string(e.what()));
  }
}

StateStore::~StateStore() = default;

void StateStore::openChecked() {
  std::string reason;
  try {
    db_ = std::make_unique<Database>(opened_.path);
    db_->exec("PRAGMA busy_timeout=1000");
    // Exclusive: the lock is taken by the first read and held; WAL then keeps its index in
    // memory (no -shm file) and a second process cannot open the store behind our back.
    db_->exec("PRAGMA locking_mode=EXCLUSIVE");
    reason = unusableReason(*db_);
  } catch (const SqliteError& e) {
    if (e.busy())
      throw StoreError("state: " + opened_.path.string() +
                       " is in use by another process (another ibfabricd on this directory?)");
    if (!e.corrupt()) throw StoreError("state: " + std::string(e.what()));
    reason = std::string("corrupt: ") + e.what();
  }
  if (!reason.empty()) {
    db_.reset();
    const std::string tag = reason.substr(0, reason.find(':'));
    opened_.movedAside = moveAside(opened_.path, tag);
    opened_.movedAsideReason = reason;
    spdlog::error("state: {} is unusable ({}); moved aside to {}, starting a new store",
                  opened_.path.string(), reason, opened_.movedAside.string());
    try {
      db_ = std::make_unique<Database>(opened_.path);
      db_->exec("PRAGMA locking_mode=EXCLUSIVE");
    } catch (const SqliteError& e) {
      throw StoreError("state: " + std::string(e.what()));
    }
  }
  try {
    if (db_->queryText("PRAGMA journal_mode=WAL") != "wal")
      throw StoreError("state: " + opened_.path.string() + " cannot use WAL mode");
    db_->exec("PRAGMA synchronous=NORMAL");
    const std::int64_t version = db_->queryInt("PRAGMA user_version");
    if (version == 0)
      createSchema();
    else if (version < kSchemaVersion)
      upgradeSchema(version);
    // The first write takes the exclusive lock, held until close: a second daemon on this
    // directory stops here (SQLITE_BUSY after the busy timeout).
    Statement opened =
        db_->prepare("INSERT OR REPLACE INTO meta(key, value) VALUES ('opened_at_ms', ?1)");
    opened.bind(1, storeMillis(std::chrono::system_clock::now())).run();
  } catch (const SqliteError& e) {
    if (e.busy())
      throw StoreError("state: " + opened_.path.string() +
                       " is in use by another process (another ibfabricd on this directory?)");
    throw StoreError("state: " + std::string(e.what()));
  }
}

void StateStore::createSchema() {
  Transaction tx(*db_);
  db_->exec(kSchema);
  db_->exec(kFabricSchema);
  db_->exec("PRAGMA application_id=" + std::to_string(kApplicationId));
  db_->exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
  tx.commit();
}

void StateStore::upgradeSchema(std::int64_t from) {
  Transaction tx(*db_);
  if (from < 2) db_->exec(kFabricSchema);
  db_->exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
  tx.commit();
  spdlog::info("state: {} upgraded from schema version {} to {}", opened_.path.string(), from,
               kSchemaVersion);
}

std::vector<Event> StateStore::recentEvents(std::size_t max, std::size_t* skipped) {
  std::vector<Event> out;
  std::size_t bad = 0;
  Statement q = db_->prepare(
      "SELECT id, type, time_ms, guid, node, port, remote_guid, remote_node, remote_port, message "
      "FROM (SELECT * FROM events ORDER BY id DESC LIMIT ?1) ORDER BY id");
  q.bind(1, static_cast<std::int64_t>(max));
  while (q.step()) {
    const auto type = telemetry::parseEventType(q.textAt(1));
    if (!type) {
      ++bad;
      continue;
    }
    Event e;
    e.id = static_cast<std::uint64_t>(q.intAt(0));
    e.type = *type;
    e.time = fromStoreMillis(q.intAt(2));
    e.end = EventEnd{Guid(static_cast<std::uint64_t>(q.intAt(3))), q.textAt(4),
                     PortNum(static_cast<std::uint8_t>(q.intAt(5)))};
    if (!q.nullAt(6))
      e.remote = EventEnd{Guid(static_cast<std::uint64_t>(q.intAt(6))), q.textAt(7),
                          PortNum(static_cast<std::uint8_t>(q.intAt(8)))};
    e.message = q.textAt(9);
    out.push_back(std::move(e));
  }
  if (skipped) *skipped = bad;
  return out;
}

std::uint64_t StateStore::lastEventId() {
  return static_cast<std::uint64_t>(
      db_->queryInt("SELECT max((SELECT value FROM meta WHERE key = 'last_event_id'), "
                    "(SELECT coalesce(max(id), 0) FROM events))"));
}

std::size_t StateStore::eventCount() {
  return static_cast<std::size_t>(db_->queryInt("SELECT count(*) FROM events"));
}

std::size_t StateStore::appendEvents(const std::vector<Event>& events,
                                     const StoreRetention& retention,
                                     std::chrono::system_clock::time_point now) {
  try {
    Transaction tx(*db_);
    Statement ins = db_->prepare(
        "INSERT OR IGNORE INTO events(id, type, time_ms, guid, node, port, remote_guid, "
        "remote_node, "
        "remote_port, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    std::uint64_t last = 0;
    for (const Event& e : events) {
      ins.bind(1, static_cast<std::int64_t>(e.id))
          .bind(2, telemetry::toString(e.type))
          .bind(3, storeMillis(e.time))
          .bind(4, static_cast<std::int64_t>(e.end.node.value()))
          .bind(5, e.end.description)
          .bind(6, static_cast<std::int64_t>(e.end.port.value()));
      if (e.remote) {
        ins.bind(7, static_cast<std::int64_t>(e.remote->node.value()))
            .bind(8, e.remote->description)
            .bind(9, static_cast<std::int64_t>(e.remote->port.value()));
      } else {
        ins.bindNull(7).bindNull(8).bindNull(9);
      }
      ins.bind(10, e.message);
      ins.run();
      last = std::max(last, e.id);
    }
    Statement meta =
        db_->prepare("UPDATE meta SET value = max(value, ?1) WHERE key = 'last_event_id'");
    meta.bind(1, static_cast<std::int64_t>(last)).run();
    std::size_t pruned = 0;
    if (retention.eventMaxAge.count() > 0) {
      Statement old = db_->prepare("DELETE FROM events WHERE time_ms < ?1");
      old.bind(1, storeMillis(now - retention.eventMaxAge)).run();
      pruned += static_cast<std::size_t>(db_->queryInt("SELECT changes()"));
    }
    if (retention.eventMaxCount > 0) {
      Statement over = db_->prepare(
          "DELETE FROM events WHERE id <= (SELECT id FROM events ORDER BY id DESC LIMIT 1 "
          "OFFSET ?1)");
      over.bind(1, static_cast<std::int64_t>(retention.eventMaxCount)).run();
      pruned += static_cast<std::size_t>(db_->queryInt("SELECT changes()"));
    }
    tx.commit();
    return pruned;
  } catch (const SqliteError& e) {
    throw StoreError("state: writing events failed: " + std::string(e.what()));
  }
}

}  // namespace ibfabric::api
