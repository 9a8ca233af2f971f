// The RAII wrapper over sqlite3: statements, transactions (commit, rollback on scope exit),
// and a file that is not a database reported as corrupt.
#include "api/service/sqlite_db.h"

#include <gtest/gtest.h>

#include <fstream>

namespace ibfabric::api {
namespace {

namespace fs = std::filesystem;

fs::path tempDb(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("ibfabric-sqlite-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path p = dir / name;
  fs::remove(p);
  return p;
}

TEST(SqliteDb, StatementsBindAndReadRows) {
  Database db(tempDb("rows.db"));
  db.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)");
  Statement ins = db.prepare("INSERT INTO t(id, name) VALUES (?1, ?2)");
  ins.bind(1, std::int64_t{7}).bind(2, "leaf-01").run();
  ins.bind(1, std::int64_t{8}).bindNull(2).run();
  Statement sel = db.prepare("SELECT id, name FROM t ORDER BY id");
  ASSERT_TRUE(sel.step());
  EXPECT_EQ(sel.intAt(0), 7);
  EXPECT_EQ(sel.textAt(1), "leaf-01");
  ASSERT_TRUE(sel.step());
  EXPECT_TRUE(sel.nullAt(1));
  EXPECT_FALSE(sel.step());
  EXPECT_EQ(db.queryInt("SELECT count(*) FROM t"), 2);
}

TEST(SqliteDb, TransactionRollsBackUnlessCommitted) {
  Database db(tempDb("tx.db"));
  db.exec("CREATE TABLE t(x INTEGER)");
  {
    Transaction tx(db);
    db.exec("INSERT INTO t VALUES (1)");
  }
  EXPECT_EQ(db.queryInt("SELECT count(*) FROM t"), 0);
  {
    Transaction tx(db);
    db.exec("INSERT INTO t VALUES (1)");
    tx.commit();
  }
  EXPECT_EQ(db.queryInt("SELECT count(*) FROM t"), 1);
}

TEST(SqliteDb, BadSqlThrowsWithTheStatement) {
  Database db(tempDb("bad.db"));
  try {
    db.exec("SELEKT 1");
    FAIL() << "no error";
  } catch (const SqliteError& e) {
    EXPECT_NE(std::string(e.what()).find("SELEKT"), std::string::npos);
    EXPECT_FALSE(e.corrupt());
  }
}

TEST(SqliteDb, ForeignFileIsReportedAsCorrupt) {
  const fs::path p = tempDb("foreign.db");
  std::ofstream(p) << std::string(8192, 'x');
  try {
    Database db(p);
    db.queryInt("PRAGMA user_version");
    FAIL() << "no error";
  } catch (const SqliteError& e) {
    EXPECT_TRUE(e.corrupt()) << e.what();
  }
}

}  // namespace
}  // namespace ibfabric::api
