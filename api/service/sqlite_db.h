// SqliteDb: a small RAII wrapper over sqlite3 — the only file that calls the sqlite3 C API.
//
// Database owns one connection (closed in the destructor); Statement owns one prepared
// statement (finalized in the destructor); Transaction is BEGIN IMMEDIATE ... COMMIT, rolled
// back by its destructor unless commit() ran. Every failure throws SqliteError with sqlite's
// message and the statement that failed.
//
// Thread-safety: none. One Database and its statements belong to one thread at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace ibfabric::api {

class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  /// sqlite's primary result code (SQLITE_CORRUPT, SQLITE_NOTADB, ...).
  int code() const { return code_; }
  /// The file is damaged or is not a database (SQLITE_CORRUPT / SQLITE_NOTADB).
  bool corrupt() const;
  /// Another connection holds the lock (SQLITE_BUSY / SQLITE_LOCKED).
  bool busy() const;

 private:
  int code_;
};

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  /// Parameters are 1-based, as in SQL's "?1".
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, std::string_view text);
  Statement& bindNull(int index);
  /// True while a row is available; false when done.
  bool step();
  /// Steps to the end (for statements without rows); then resets for reuse.
  void run();
  void reset();

  std::int64_t intAt(int column) const;
  std::string textAt(int column) const;
  bool nullAt(int column) const;

 private:
  void check(int rc) const;
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

class Database {
 public:
  /// Opens (creating) the file read-write. Throws SqliteError.
  explicit Database(const std::filesystem::path& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// Runs one or more statements without results.
  void exec(std::string_view sql);
  Statement prepare(std::string_view sql) { return Statement(db_, sql); }
  /// The first column of the first row of a query (a PRAGMA); throws when there is no row.
  std::int64_t queryInt(std::string_view sql);
  std::string queryText(std::string_view sql);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
};

class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace ibfabric::api
