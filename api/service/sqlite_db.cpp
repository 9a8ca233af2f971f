#include "api/service/sqlite_db.h"

#include <sqlite3.h>

namespace ibfabric::api {
namespace {

[[noreturn]] void fail(sqlite3* db, int rc, std::string_view what) {
  const char* msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  throw SqliteError(rc & 0xff, "sqlite: " + std::string(msg) + " (" + std::string(what) + ")");
}

}  // namespace

bool SqliteError::corrupt() const { return code_ == SQLITE_CORRUPT || code_ == SQLITE_NOTADB; }
bool SqliteError::busy() const { return code_ == SQLITE_BUSY || code_ == SQLITE_LOCKED; }

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
  if (rc != SQLITE_OK) fail(db_, rc, sql);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::check(int rc) const {
  if (rc != SQLITE_OK) fail(db_, rc, sqlite3_sql(stmt_));
}

Statement& Statement::bind(int index, std::int64_t value) {
  check(sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  check(sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()),
                          SQLITE_TRANSIENT));
  return *this;
}

Statement& Statement::bindNull(int index) {
  check(sqlite3_bind_null(stmt_, index));
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, rc, sqlite3_sql(stmt_));
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::int64_t Statement::intAt(int column) const { return sqlite3_column_int64(stmt_, column); }

std::string Statement::textAt(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

bool Statement::nullAt(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

Database::Database(const std::filesystem::path& path) : path_(path) {
  const int rc =
      sqlite3_open_v2(path.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(rc & 0xff, "sqlite: cannot open " + path.string() + ": " + msg);
  }
  sqlite3_busy_timeout(db_, 5000);
}

Database::~Database() { sqlite3_close(db_); }

void Database::exec(std::string_view sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw SqliteError(rc & 0xff, "sqlite: " + msg + " (" + std::string(sql) + ")");
  }
}

std::int64_t Database::queryInt(std::string_view sql) {
  Statement s = prepare(sql);
  if (!s.step()) throw SqliteError(SQLITE_ERROR, "sqlite: no row (" + std::string(sql) + ")");
  return s.intAt(0);
}

std::string Database::queryText(std::string_view sql) {
  Statement s = prepare(sql);
  if (!s.step()) throw SqliteError(SQLITE_ERROR, "sqlite: no row (" + std::string(sql) + ")");
  return s.textAt(0);
}

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (done_) return;
  try {
    db_.exec("ROLLBACK");
  } catch (const SqliteError&) {
    // Nothing to roll back (the failure that brought us here ended the transaction).
  }
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace ibfabric::api
