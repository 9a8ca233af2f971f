// The pool journal under crashes and misuse, with ibfabricd on an ibsim + OpenSM fabric (4 hosts
// of 8 GPUs): kill -9 at random points of a stream of allocations and frees (REST, with the
// token), restarted each time — every write answered 2xx is there after the restart and no
// acknowledged free comes back; a second daemon on the same journal directory refuses to start
// naming the first one's pid; a journal corrupt in the middle stops the start with the file
// untouched, `ibfabric pool journal verify` says where, and `repair` gets the daemon going.
// Every wait is bounded.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "discovery/netfile.h"
#include "scheduler_hooks/pool/journal_check.h"
#include "tests/support/daemon_process.h"
#include "tests/support/fabrics.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const httplib::Headers kAuth{{"Authorization", "Bearer cr4sh"}};

struct PoolFabric {
  std::filesystem::path net, config, journal;
};

PoolFabric writePoolFiles(const std::string& tag) {
  const auto gen = generate(twoLevel(2, 2, 2));  // dgx0001..dgx0004, one HCA each
  PoolFabric f;
  f.net = writeScratchFile(tag + ".net", gen.headerComment() + formatNetFile(gen.fabric));
  const auto inventory = writeScratchFile(
      tag + "-inventory.json", R"({"hosts": [{"name": "dgx[0001-0004]", "gpu_count": 8}]})");
  f.journal = scratchDir() / (tag + "-journal");
  std::filesystem::remove_all(f.journal);
  f.config = writeScratchFile(tag + ".yaml",
                              "sweep_interval: 0.5\ncrawl_interval: 0.5\n"
                              "api_token: cr4sh\npool:\n  inventory: " +
                                  inventory.string() + "\n  journal: " + f.journal.string() + "\n");
  return f;
}

std::vector<std::string> daemonArgs(const PoolFabric& f) {
  return {"--config", f.config.string(), "--listen", "127.0.0.1:0"};
}

/// Starts the daemon and waits (bounded) until the pool has joined the fabric.
std::unique_ptr<DaemonProcess> startPoolDaemon(const SimFabric& fabric, const PoolFabric& f,
                                               int& port) {
  auto d = std::make_unique<DaemonProcess>(fabric, daemonArgs(f), "pool-crash");
  port = d->waitForPort(60s);
  if (port <= 0) return d;
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);
  const bool joined = waitFor(
      [&] {
        auto res = c.Get("/api/v1/pool");
        return res && res->status == 200 && json::parse(res->body)["total_gpus"] == 32;
      },
      60s, 100ms);
  if (!joined) port = -1;
  return d;
}

std::set<std::string> listedJobs(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(10, 0);
  auto res = c.Get("/api/v1/pool/allocations");
  std::set<std::string> out;
  if (!res || res->status != 200) {
    ADD_FAILURE() << "GET /api/v1/pool/allocations: " << (res ? res->body : "no answer");
    return out;
  }
  const json body = json::parse(res->body);
  for (const auto& a : body["allocations"]) out.insert(a["job_id"].get<std::string>());
  return out;
}

/// What the writer knows: acknowledged (2xx) allocations still held and acknowledged frees,
/// and the writes whose answer never came (either outcome is right for those).
struct Ledger {
  std::mutex mu;
  std::set<std::string> held, freed, unsureAlloc, unsureFree;
  std::atomic<int> acked{0};
};

/// Allocations (1 GPU each) and frees through REST until the daemon stops answering.
void writeUntilDead(int port, Ledger& ledger, int& next, std::mt19937& rng) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(10, 0);
  c.set_connection_timeout(2, 0);
  for (;;) {
    std::string victim;
    {
      std::lock_guard lock(ledger.mu);
      if (ledger.held.size() >= 24 || (ledger.held.size() > 4 && rng() % 3 == 0))
        victim = *std::next(ledger.held.begin(), rng() % ledger.held.size());
    }
    if (!victim.empty()) {
      auto res = c.Delete("/api/v1/pool/allocations/" + victim, kAuth);
      std::lock_guard lock(ledger.mu);
      if (!res) {
        ledger.held.erase(victim);
        ledger.unsureFree.insert(victim);
        return;
      }
      EXPECT_EQ(res->status, 200) << victim << ": " << res->body;
      ledger.held.erase(victim);
      ledger.freed.insert(victim);
      ++ledger.acked;
      continue;
    }
    const std::string job = "crash-" + std::to_string(next++);
    const json body = {{"job_id", job}, {"gpus", 1}, {"class", "inference"}};
    auto res = c.Post("/api/v1/pool/allocations", kAuth, body.dump(), "application/json");
    std::lock_guard lock(ledger.mu);
    if (!res) {
      ledger.unsureAlloc.insert(job);
      return;
    }
    EXPECT_EQ(res->status, 201) << job << ": " << res->body;
    if (res->status / 100 == 2) ledger.held.insert(job);
    ++ledger.acked;
  }
}

/// After a restart: every acknowledged allocation is listed, no acknowledged free is; the
/// unsure writes are settled by what the daemon says.
void checkAndSettle(const std::set<std::string>& listed, Ledger& ledger, int round) {
  for (const auto& job : ledger.held)
    EXPECT_TRUE(listed.count(job)) << "round " << round << ": acknowledged " << job << " lost";
  for (const auto& job : ledger.freed)
    EXPECT_FALSE(listed.count(job)) << "round " << round << ": freed " << job << " came back";
  for (const auto& job : ledger.unsureAlloc)
    if (listed.count(job)) ledger.held.insert(job);
  for (const auto& job : ledger.unsureFree)
    if (listed.count(job))
      ledger.held.insert(job);
    else
      ledger.freed.insert(job);
  ledger.unsureAlloc.clear();
  ledger.unsureFree.clear();
  for (const auto& job : listed)
    EXPECT_TRUE(ledger.held.count(job)) << "round " << round << ": " << job << " never written";
}

TEST(PoolCrashSim, KillNineDuringPoolWritesLosesNothingAcknowledged) {
  const PoolFabric f = writePoolFiles("pool-crash");
  SimFabric fabric(f.net, "poolcrash");
  Ledger ledger;
  std::mt19937 rng(std::random_device{}());
  int next = 1;
  int killedMidWrite = 0;
  constexpr int kRounds = 6;
  for (int round = 1; round <= kRounds; ++round) {
    int port = 0;
    auto daemon = startPoolDaemon(fabric, f, port);
    ASSERT_GT(port, 0) << daemon->log();
    checkAndSettle(listedJobs(port), ledger, round);
    // Kill after a random number (5..60) of acknowledged writes, while the writer is mid-request.
    const int target = ledger.acked + 5 + static_cast<int>(rng() % 56);
    std::thread writer([&] { writeUntilDead(port, ledger, next, rng); });
    const bool reached = waitFor([&] { return ledger.acked >= target; }, 60s, 1ms);
    const pid_t pid = daemon->daemonPid();
    ASSERT_GT(pid, 0);
    ::kill(pid, SIGKILL);
    writer.join();
    ASSERT_TRUE(reached) << "round " << round << ": " << ledger.acked << " of " << target
                         << " writes\n"
                         << daemon->log();
    {
      std::lock_guard lock(ledger.mu);
      killedMidWrite += static_cast<int>(ledger.unsureAlloc.size() + ledger.unsureFree.size());
    }
    daemon.reset();
  }
  int port = 0;
  auto daemon = startPoolDaemon(fabric, f, port);
  ASSERT_GT(port, 0) << daemon->log();
  checkAndSettle(listedJobs(port), ledger, kRounds + 1);
  std::printf("[ pool-crash ] %d rounds, %d acknowledged writes, %d cut mid-request, %zu held\n",
              kRounds, ledger.acked.load(), killedMidWrite, ledger.held.size());
  EXPECT_NE(daemon->log().find("pool: replayed"), std::string::npos);
  EXPECT_EQ(daemon->log().find("corrupt"), std::string::npos) << daemon->log();
  const int st = daemon->signalAndWait(SIGTERM, 10s);
  EXPECT_TRUE(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0) << st << daemon->log();
}

std::string fileBytes(const std::filesystem::path& p) { return scheduler_hooks::readFileBytes(p); }

TEST(PoolCrashSim, ASecondDaemonAndACorruptJournalAreRefusedAtStart) {
  const PoolFabric f = writePoolFiles("pool-lock");
  SimFabric fabric(f.net, "poollock");
  int port = 0;
  auto first = startPoolDaemon(fabric, f, port);
  ASSERT_GT(port, 0) << first->log();
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(10, 0);
  for (int i = 1; i <= 8; ++i) {
    const json body = {
        {"job_id", "lock-" + std::to_string(i)}, {"gpus", 2}, {"class", "inference"}};
    auto res = c.Post("/api/v1/pool/allocations", kAuth, body.dump(), "application/json");
    ASSERT_TRUE(res && res->status == 201) << (res ? res->body : "no answer");
  }

  // Same journal directory: refused, naming the holder.
  DaemonProcess second(fabric, daemonArgs(f), "pool-lock-2");
  EXPECT_EQ(second.waitForPort(60s), -1) << second.log();
  const int st2 = second.signalAndWait(SIGTERM, 10s);
  EXPECT_TRUE(st2 != -1 && WIFEXITED(st2) && WEXITSTATUS(st2) != 0) << st2;
  EXPECT_NE(second.log().find(f.journal.string() + " is in use by another process (pid " +
                              std::to_string(first->daemonPid())),
            std::string::npos)
      << second.log();
  EXPECT_EQ(listedJobs(port).size(), 8u) << "the first daemon is undisturbed";
  ASSERT_EQ(first->signalAndWait(SIGTERM, 10s), 0) << first->log();

  // 4 bytes flipped in the middle of the journal: no start, the file kept byte for byte.
  const auto log = f.journal / "journal.log";
  std::string bytes = fileBytes(log);
  ASSERT_GT(bytes.size(), 100u);
  for (std::size_t i = 0; i < 4; ++i) bytes[bytes.size() / 2 + i] ^= 0x5a;
  std::ofstream(log, std::ios::binary | std::ios::trunc) << bytes;
  auto check = runProcess({daemonPath().string(), "--config", f.config.string(), "--check-config"});
  EXPECT_EQ(check.exitCode, 1) << check.describe();
  EXPECT_NE(check.err.find("is corrupt at offset"), std::string::npos) << check.describe();
  {
    DaemonProcess refused(fabric, daemonArgs(f), "pool-corrupt");
    EXPECT_EQ(refused.waitForPort(60s), -1) << refused.log();
    refused.signalAndWait(SIGTERM, 10s);
    EXPECT_NE(refused.log().find(log.string() + " is corrupt at offset"), std::string::npos)
        << refused.log();
  }
  EXPECT_EQ(fileBytes(log), bytes);
  auto verify = runCli({"pool", "journal", "verify", f.journal.string()});
  EXPECT_EQ(verify.exitCode, 1) << verify.describe();
  EXPECT_NE(verify.err.find("(record "), std::string::npos) << verify.describe();
  auto repair = runCli({"pool", "journal", "repair", f.journal.string()});
  ASSERT_EQ(repair.exitCode, 0) << repair.describe();
  EXPECT_NE(repair.out.find("original kept as"), std::string::npos) << repair.describe();
  EXPECT_EQ(runCli({"pool", "journal", "verify", f.journal.string()}).exitCode, 0);
  auto again = startPoolDaemon(fabric, f, port);
  ASSERT_GT(port, 0) << again->log();
  const auto kept = listedJobs(port);
  EXPECT_LT(kept.size(), 8u);  // the repair gave up the records from the bad one on
  EXPECT_EQ(again->signalAndWait(SIGTERM, 10s), 0) << again->log();
}

}  // namespace
}  // namespace ibfabric::testing
