// The durable state store and the event journal: schema and version marks, events round-tripped
// across a reopen with their ids, retention by count and age, a damaged, torn, foreign or newer
// file moved aside (never trusted, never a crash), a second opener refused; the journal restores
// the log so ids continue, writes what was appended and retries a failed write.
#include "api/service/state_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "api/service/event_journal.h"
#include "api/service/sqlite_db.h"
#include "discovery/fabric_memory.h"
#include "discovery/topology_edit.h"
#include "tests/support/fabrics.h"

namespace ibfabric::api {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using telemetry::Event;
using telemetry::EventEnd;
using telemetry::EventLog;
using telemetry::EventType;

fs::path freshDir(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("ibfabric-store-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

Event event(std::uint64_t id, EventType type, std::chrono::system_clock::time_point at,
            bool withRemote = true) {
  Event e;
  e.id = id;
  e.type = type;
  e.time = at;
  e.end = EventEnd{Guid(0x200000 + id), "leaf" + std::to_string(id), PortNum(3)};
  if (withRemote) e.remote = EventEnd{Guid(0x100000), "dgx0001 mlx5_0", PortNum(1)};
  e.message = "cable " + std::to_string(id);
  return e;
}

std::vector<fs::path> movedAsideFiles(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& f : fs::directory_iterator(dir))
    if (f.path().filename().string().rfind("ibfabric.db.", 0) == 0) out.push_back(f.path());
  return out;
}

TEST(StateStore, ANewStoreIsMarkedOursWithItsSchemaVersionInWalMode) {
  const fs::path dir = freshDir("new");
  {
    StateStore store(dir);
    EXPECT_EQ(store.opened().path, dir / "ibfabric.db");
    EXPECT_TRUE(store.opened().movedAside.empty());
    EXPECT_EQ(store.lastEventId(), 0u);
    EXPECT_TRUE(store.recentEvents(10).empty());
  }
  Database db(dir / "ibfabric.db");
  EXPECT_EQ(db.queryInt("PRAGMA application_id"), StateStore::kApplicationId);
  EXPECT_EQ(db.queryInt("PRAGMA user_version"), StateStore::kSchemaVersion);
  EXPECT_EQ(db.queryText("PRAGMA journal_mode"), "wal");
}

TEST(StateStore, EventsSurviveAReopenWithTheirIdsAndFields) {
  const fs::path dir = freshDir("roundtrip");
  const auto t0 =
      std::chrono::system_clock::time_point(std::chrono::milliseconds(1'764'000'000'123));
  {
    StateStore store(dir);
    store.appendEvents({event(1, EventType::kLinkDown, t0), event(2, EventType::kLinkUp, t0 + 1s),
                        event(3, EventType::kNodeMissing, t0 + 2s, false)},
                       StoreRetention{0s, 0}, t0 + 3s);
  }
  StateStore store(dir);
  const auto events = store.recentEvents(10);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].id, 1u);
  EXPECT_EQ(events[0].type, EventType::kLinkDown);
  EXPECT_EQ(events[0].time, t0);
  EXPECT_EQ(events[0].end, (EventEnd{Guid(0x200001), "leaf1", PortNum(3)}));
  ASSERT_TRUE(events[0].remote.has_value());
  EXPECT_EQ(events[0].remote->description, "dgx0001 mlx5_0");
  EXPECT_EQ(events[0].message, "cable 1");
  EXPECT_EQ(events[2].type, EventType::kNodeMissing);
  EXPECT_FALSE(events[2].remote.has_value());
  EXPECT_EQ(store.lastEventId(), 3u);
  // The newest two, oldest first.
  const auto newest = store.recentEvents(2);
  ASSERT_EQ(newest.size(), 2u);
  EXPECT_EQ(newest[0].id, 2u);
  EXPECT_EQ(newest[1].id, 3u);
}

TEST(StateStore, RetentionByCountAndAgeNeverReusesIds) {
  const fs::path dir = freshDir("retention");
  const auto now = std::chrono::system_clock::now();
  StateStore store(dir);
  std::vector<Event> batch;
  for (std::uint64_t id = 1; id <= 10; ++id)
    batch.push_back(event(id, EventType::kLinkDown, now - std::chrono::hours(100 - id)));
  EXPECT_EQ(store.appendEvents(batch, StoreRetention{0s, 6}, now), 4u);
  EXPECT_EQ(store.eventCount(), 6u);
  EXPECT_EQ(store.recentEvents(100).front().id, 5u);
  // Events older than 93 h: ids 5 and 6 (95 h, 94 h old).
  EXPECT_EQ(store.appendEvents({event(11, EventType::kLinkUp, now)},
                               StoreRetention{std::chrono::hours(93), 0}, now),
            2u);
  EXPECT_EQ(store.recentEvents(100).front().id, 7u);
  // Everything pruned: the next id still follows the highest ever given.
  store.appendEvents({}, StoreRetention{1s, 0}, now + std::chrono::hours(1));
  EXPECT_EQ(store.eventCount(), 0u);
  EXPECT_EQ(store.lastEventId(), 11u);
}

TEST(StateStore, AFileThatIsNotADatabaseIsMovedAsideNotTrusted) {
  const fs::path dir = freshDir("garbage");
  {
    std::ofstream out(dir / "ibfabric.db");
    out << std::string(8192, 'x');
  }
  StateStore store(dir);
  EXPECT_EQ(store.opened().movedAsideReason.rfind("corrupt", 0), 0u)
      << store.opened().movedAsideReason;
  ASSERT_FALSE(store.opened().movedAside.empty());
  EXPECT_TRUE(fs::exists(store.opened().movedAside));
  EXPECT_EQ(fs::file_size(store.opened().movedAside), 8192u);  // kept as it was
  EXPECT_NE(store.opened().movedAside.filename().string().find("ibfabric.db.corrupt-"),
            std::string::npos);
  store.appendEvents({event(1, EventType::kLinkDown, std::chrono::system_clock::now())},
                     StoreRetention{}, std::chrono::system_clock::now());
  EXPECT_EQ(store.eventCount(), 1u);
}

TEST(StateStore, ATornStoreIsMovedAsideWithItsEventsKeptForInspection) {
  const fs::path dir = freshDir("torn");
  const auto now = std::chrono::system_clock::now();
  {
    StateStore store(dir);
    std::vector<Event> batch;
    for (std::uint64_t id = 1; id <= 2000; ++id)
      batch.push_back(event(id, EventType::kLinkDown, now));
    store.appendEvents(batch, StoreRetention{}, now);
  }
  const fs::path file = dir / "ibfabric.db";
  const auto size = fs::file_size(file);
  ASSERT_GT(size, 16384u);
  {
    // Overwrite the middle of the file (B-tree pages of the events table).
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    const std::string junk(4096, '\xa5');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  StateStore store(dir);
  EXPECT_EQ(store.opened().movedAsideReason.rfind("corrupt", 0), 0u)
      << store.opened().movedAsideReason;
  EXPECT_EQ(fs::file_size(store.opened().movedAside), size);
  EXPECT_EQ(store.eventCount(), 0u);
}

TEST(StateStore, AForeignDatabaseOrANewerSchemaIsMovedAside) {
  const fs::path foreign = freshDir("foreign");
  {
    Database db(foreign / "ibfabric.db");
    db.exec("CREATE TABLE accounts(id INTEGER)");
  }
  {
    StateStore store(foreign);
    EXPECT_EQ(store.opened().movedAsideReason.rfind("foreign", 0), 0u)
        << store.opened().movedAsideReason;
    EXPECT_EQ(movedAsideFiles(foreign).size(), 1u);
  }
  const fs::path newer = freshDir("newer");
  {
    Database db(newer / "ibfabric.db");
    db.exec("PRAGMA application_id=" + std::to_string(StateStore::kApplicationId));
    db.exec("PRAGMA user_version=" + std::to_string(StateStore::kSchemaVersion + 1));
    db.exec("CREATE TABLE events(id INTEGER PRIMARY KEY)");
  }
  StateStore store(newer);
  EXPECT_EQ(store.opened().movedAsideReason.rfind("newer", 0), 0u)
      << store.opened().movedAsideReason;
  EXPECT_NE(store.opened().movedAsideReason.find("schema version " +
                                                 std::to_string(StateStore::kSchemaVersion + 1)),
            std::string::npos)
      << store.opened().movedAsideReason;
}

// (A second daemon process on the directory: tests/integration/durable_events_test.cpp.)
TEST(StateStore, ASecondOpenerOfTheDirectoryIsRefusedAndMovesNothing) {
  const fs::path dir = freshDir("locked");
  StateStore store(dir);
  store.appendEvents({event(1, EventType::kLinkDown, std::chrono::system_clock::now())},
                     StoreRetention{}, std::chrono::system_clock::now());
  try {
    StateStore second(dir);
    FAIL() << "a second store opened the same file";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(movedAsideFiles(dir).empty());
  EXPECT_EQ(store.eventCount(), 1u);  // the first still works
  store.appendEvents({event(2, EventType::kLinkUp, std::chrono::system_clock::now())},
                     StoreRetention{}, std::chrono::system_clock::now());
  EXPECT_EQ(store.eventCount(), 2u);
}

TEST(EventJournal, RestoresTheLogSoIdsContinueAndWritesWhatIsAppended) {
  const fs::path dir = freshDir("journal");
  StoreStatus last;
  {
    StateStore store(dir);
    EventLog log(100);
    EventJournal journal(store, log, {}, [&](const StoreStatus& s) { last = s; });
    journal.restore();
    EXPECT_EQ(last.restoredEvents, 0u);
    log.append(EventType::kLinkDown, EventEnd{Guid(1), "leaf1", PortNum(1)}, std::nullopt, "a");
    log.append(EventType::kLinkUp, EventEnd{Guid(1), "leaf1", PortNum(1)}, std::nullopt, "b");
    journal.flush();
    EXPECT_EQ(last.eventsWritten, 2u);
    EXPECT_EQ(store.lastEventId(), 2u);
    journal.start();
    log.append(EventType::kLinkDown, EventEnd{Guid(2), "leaf2", PortNum(4)}, std::nullopt, "c");
    journal.stop();  // writes the last one
    EXPECT_EQ(store.eventCount(), 3u);
  }
  StateStore store(dir);
  EventLog log(2);  // a smaller log than the store: the newest two are loaded
  EventJournal journal(store, log, {}, [&](const StoreStatus& s) { last = s; });
  journal.restore();
  EXPECT_EQ(last.restoredEvents, 2u);
  auto events = log.query();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].id, 2u);
  EXPECT_EQ(events[1].message, "c");
  telemetry::EventQuery after2;
  after2.sinceId = 2;
  EXPECT_EQ(log.query(after2).size(), 1u);
  EXPECT_EQ(
      log.append(EventType::kLinkUp, EventEnd{Guid(2), "leaf2", PortNum(4)}, std::nullopt, "d"),
      4u);
  journal.flush();
  EXPECT_EQ(store.lastEventId(), 4u);
}

TEST(EventJournal, AFailedWriteIsRetriedFromTheSameEvent) {
  const fs::path dir = freshDir("retry");
  StateStore store(dir);
  EventLog log(100);
  StoreStatus last;
  EventJournal journal(store, log, {}, [&](const StoreStatus& s) { last = s; });
  journal.restore();
  // The store is full (its size bound is reached): the write fails and keeps nothing.
  store.setMaxBytes(1);  // never below the current size: no page can be added
  const std::string big(64 * 1024, 'm');
  log.append(EventType::kLinkDown, EventEnd{Guid(1), "leaf1", PortNum(1)}, std::nullopt, big);
  log.append(EventType::kLinkUp, EventEnd{Guid(1), "leaf1", PortNum(1)}, std::nullopt, "b");
  journal.flush();
  EXPECT_EQ(last.writeFailures, 1u);
  EXPECT_EQ(last.consecutiveFailures, 1u);
  EXPECT_NE(last.lastError.find("full"), std::string::npos) << last.lastError;
  EXPECT_EQ(store.eventCount(), 0u);
  journal.flush();
  EXPECT_EQ(last.consecutiveFailures, 2u);
  // Room again: both events are written, from the first one that failed.
  store.setMaxBytes(0);
  journal.flush();
  EXPECT_EQ(last.consecutiveFailures, 0u);
  EXPECT_EQ(last.eventsWritten, 2u);
  EXPECT_EQ(last.eventsMissed, 0u);
  ASSERT_EQ(store.eventCount(), 2u);
  EXPECT_EQ(store.recentEvents(1)[0].message, "b");
}

// --- The remembered fabric ------------------------------------------------------------------

const auto kSeen =
    std::chrono::system_clock::time_point(std::chrono::milliseconds(1'764'000'000'000));

/// hostLeafSpine with the host's HCA missing (since kSeen + 60 s, last seen kSeen).
TopologyPtr withMissingHost() {
  const TopologyPtr full = testing::hostLeafSpine();
  TopologyBuilder b;
  for (const Node& n : full->nodes()) {
    if (n.guid == testing::kHlsCa) continue;
    b.addNode(nodeInfoOf(n));
    for (const auto& p : n.ports) {
      if (!p) continue;
      Port q = *p;
      if (n.guid == testing::kHlsLeaf && q.num == PortNum{1}) q.state = PortState::kDown;
      b.addPort(n.guid, q);
    }
  }
  b.connect(testing::kHlsLeaf, PortNum{2}, testing::kHlsSpine, PortNum{1});
  return rememberMissing(*full, kSeen, b.build(), kSeen + 60s);
}

TEST(StateStoreFabric, TheRememberedFabricSurvivesAReopenWithWhatIsMissing) {
  const fs::path dir = freshDir("fabric");
  const TopologyPtr model = withMissingHost();
  ASSERT_EQ(countMissing(*model).links, 1u);
  {
    StateStore store(dir);
    EXPECT_FALSE(store.loadFabric());
    EXPECT_GT(store.writeFabric(nullptr, *model, kSeen + 60s), 0u);
    // The same model again: nothing but the time it was seen.
    EXPECT_EQ(store.writeFabric(model.get(), *model, kSeen + 120s), 0u);
  }
  StateStore store(dir);
  const auto stored = store.loadFabric();
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->seenAt, kSeen + 120s);
  const Topology& t = *stored->topology;
  EXPECT_EQ(t.nodes().size(), 3u);
  EXPECT_EQ(t.links().size(), 2u);
  const Node* host = t.findNode(testing::kHlsCa);
  ASSERT_TRUE(host);
  ASSERT_TRUE(host->missing);
  EXPECT_EQ(host->missing->since, kSeen + 60s);
  EXPECT_EQ(host->missing->lastSeen, kSeen);
  EXPECT_EQ(host->description, "host1 mlx5_0");
  EXPECT_EQ(countMissing(t).links, 1u);
  // Present cables come back Active, the missing one Down: the next crawl's events are true.
  const Node* leaf = t.findNode(testing::kHlsLeaf);
  EXPECT_EQ(leaf->port(PortNum{2})->state, PortState::kActive);
  EXPECT_EQ(leaf->port(PortNum{1})->state, PortState::kDown);
  EXPECT_EQ(leaf->port(PortNum{1})->guid,
            model->findNode(testing::kHlsLeaf)->port(PortNum{1})->guid);
}

TEST(StateStoreFabric, WritesAreDiffsAndForgottenHardwareLeavesTheStore) {
  const fs::path dir = freshDir("fabric-diff");
  const TopologyPtr full = testing::hostLeafSpine();
  const TopologyPtr model = withMissingHost();
  StateStore store(dir);
  store.writeFabric(nullptr, *full, kSeen);
  // One node and one cable turned missing: two rows.
  EXPECT_EQ(store.writeFabric(full.get(), *model, kSeen + 60s), 2u);
  const TopologyPtr forgotten = forgetMissing(*model, testing::kHlsCa);
  EXPECT_EQ(store.writeFabric(model.get(), *forgotten, kSeen + 60s), 2u);
  const auto stored = store.loadFabric();
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->topology->findNode(testing::kHlsCa), nullptr);
  EXPECT_EQ(stored->topology->links().size(), 1u);
}

TEST(StateStoreFabric, ForgottenNodesLeaveNoPortRows) {
  const fs::path dir = freshDir("fabric-ports");
  const TopologyPtr model = withMissingHost();
  {
    StateStore store(dir);
    store.writeFabric(nullptr, *model, kSeen);
    store.writeFabric(model.get(), *forgetMissing(*model, testing::kHlsCa), kSeen);
  }
  Database db(dir / "ibfabric.db");
  EXPECT_EQ(db.queryInt("SELECT count(*) FROM fabric_ports WHERE node_guid = " +
                        std::to_string(testing::kHlsCa.value())),
            0);
  EXPECT_GT(db.queryInt("SELECT count(*) FROM fabric_ports"), 0);
}

TEST(StateStoreFabric, AVersionOneStoreIsUpgradedKeepingItsEvents) {
  const fs::path dir = freshDir("upgrade");
  {
    Database db(dir / "ibfabric.db");
    db.exec(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
        "CREATE TABLE events(id INTEGER PRIMARY KEY, type TEXT NOT NULL, time_ms INTEGER NOT "
        "NULL, guid INTEGER NOT NULL, node TEXT NOT NULL, port INTEGER NOT NULL, remote_guid "
        "INTEGER, remote_node TEXT, remote_port INTEGER, message TEXT NOT NULL);"
        "INSERT INTO meta VALUES ('last_event_id', 7);"
        "INSERT INTO events VALUES (7, 'link_down', 1764000000000, 1, 'leaf', 3, NULL, NULL, "
        "NULL, 'old');");
    db.exec("PRAGMA application_id=" + std::to_string(StateStore::kApplicationId));
    db.exec("PRAGMA user_version=1");
  }
  StateStore store(dir);
  EXPECT_TRUE(store.opened().movedAside.empty());
  EXPECT_EQ(store.lastEventId(), 7u);
  EXPECT_EQ(store.recentEvents(10).at(0).message, "old");
  EXPECT_FALSE(store.loadFabric());
  store.writeFabric(nullptr, *testing::hostLeafSpine(), kSeen);
  EXPECT_TRUE(store.loadFabric());
}

TEST(EventJournal, WritesTheFabricSourcesModelOnlyWhenItIsANewOne) {
  const fs::path dir = freshDir("journal-fabric");
  StoreStatus last;
  StateStore store(dir);
  EventLog log(100);
  EventJournal journal(store, log, {}, [&](const StoreStatus& s) { last = s; });
  journal.restore();
  EXPECT_FALSE(journal.restoreFabric());
  FabricModel model{testing::hostLeafSpine(), kSeen};
  journal.setFabricSource([&] { return model; });
  journal.flush();  // events only
  EXPECT_EQ(last.fabricWrites, 0u);
  journal.start();
  journal.stop();
  EXPECT_EQ(last.fabricWrites, 1u);
  const auto rows = last.fabricRowsWritten;
  EXPECT_GE(rows, 5u);  // 3 nodes, 2 cables
  journal.start();
  journal.stop();
  EXPECT_EQ(last.fabricWrites, 1u);  // the same snapshot: not written again
  model = FabricModel{withMissingHost(), kSeen + 60s};
  journal.start();
  journal.stop();
  EXPECT_EQ(last.fabricWrites, 2u);
  EXPECT_EQ(last.fabricRowsWritten, rows + 2);
}

TEST(EventLogRestore, OnlyBeforeTheFirstAppend) {
  EventLog log(10);
  log.append(EventType::kLinkDown, EventEnd{Guid(1), "x", PortNum(1)}, std::nullopt, "a");
  EXPECT_THROW(log.restore({}, 5), std::logic_error);
}

}  // namespace
}  // namespace ibfabric::api
