// Integration tests of `ibfabric sim`: real ibsim + OpenSM fabrics started through the CLI.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "discovery/netfile.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"
#include "tools/sim/harness.h"

namespace ibfabric::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// Topology the fabric shows to a client: `ibnetdiscover` through `sim run`, parsed.
NetFabric discovered(const SimFabric& fabric, const std::string& host = "") {
  const auto r = fabric.run({"ibnetdiscover"}, 120s, host);
  EXPECT_EQ(r.exitCode, 0) << r.describe();
  return parseNetText(r.out, "ibnetdiscover");
}

std::set<std::string> descriptions(const NetFabric& fabric) {
  std::set<std::string> out;
  for (const auto& n : fabric.nodes) out.insert(n.name());
  return out;
}

/// The CLI failed the way every bad input must: non-zero exit, one "ibfabric: error:" line.
void expectOneLineError(const ProcessResult& r, const std::string& needle) {
  EXPECT_NE(r.exitCode, 0) << r.describe();
  EXPECT_FALSE(r.timedOut) << r.describe();
  const auto lines = r.errLines();
  ASSERT_EQ(lines.size(), 1u) << r.describe();
  EXPECT_EQ(lines[0].rfind("ibfabric: error: ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(needle), std::string::npos) << lines[0];
}

/// Nothing of fabric `name` is left: no process, no state directory.
void expectNothingLeft(const std::string& name) {
  EXPECT_TRUE(waitFor([&] { return fabricProcesses(name).empty(); }, 10s))
      << fabricProcesses(name).size() << " processes of " << name << " are still running";
  EXPECT_FALSE(fs::exists(fabricStateDir(name))) << fabricStateDir(name);
}

fs::path smallFabricFile(const std::string& prefix) {
  return writeScratchFile(prefix + "fabric.net", fatTreeText(prefix, 2, 3, 2));
}

// ---------------------------------------------------------------------------------------------
// One fabric shared by the read-only tests.

class SimHarnessShared : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    try {
      fabric_ = std::make_unique<SimFabric>(smallFabricFile("sh-"), "shared");
    } catch (const std::exception& e) {
      upError_ = e.what();
    }
  }
  static void TearDownTestSuite() { fabric_.reset(); }
  void SetUp() override { ASSERT_NE(fabric_, nullptr) << upError_; }

  static std::unique_ptr<SimFabric> fabric_;
  static std::string upError_;
};
std::unique_ptr<SimFabric> SimHarnessShared::fabric_;
std::string SimHarnessShared::upError_;

TEST_F(SimHarnessShared, UpPrintsHowToRunPrograms) {
  const auto& out = fabric_->upResult().out;
  EXPECT_NE(out.find("is up"), std::string::npos) << out;
  EXPECT_NE(out.find("ibfabric sim run --name " + fabric_->name()), std::string::npos) << out;
  EXPECT_NE(out.find("IBSIM_SOCKNAME=" + sim::socketNameFor(fabric_->name())), std::string::npos)
      << out;
  EXPECT_NE(out.find("LD_PRELOAD="), std::string::npos) << out;
  EXPECT_NE(out.find("SIM_HOST="), std::string::npos) << out;
}

TEST_F(SimHarnessShared, EveryHcaIsActiveWithALid) {
  const auto r = fabric_->run({"ibnetdiscover", "-p"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  // "CA  <lid> <port> <guid> 4x SDR - SW ..." for every cabled HCA port.
  std::istringstream lines(r.out);
  std::string line;
  int cas = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("CA", 0) != 0) continue;
    std::istringstream fields(line.substr(2));
    int lid = 0;
    fields >> lid;
    EXPECT_GT(lid, 0) << line;
    ++cas;
  }
  EXPECT_EQ(cas, 6);
}

TEST_F(SimHarnessShared, RunSeesTheWholeFabric) {
  const auto seen = discovered(*fabric_);
  const auto expected = parseNetFile(fabric_->netFile());
  EXPECT_EQ(descriptions(seen), descriptions(expected));
  EXPECT_EQ(seen.linkCount(), expected.linkCount());
}

TEST_F(SimHarnessShared, RunPassesTheExitStatusThrough) {
  EXPECT_EQ(fabric_->run({"true"}).exitCode, 0);
  EXPECT_EQ(fabric_->run({"sh", "-c", "exit 7"}).exitCode, 7);
  const auto r = fabric_->run({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST_F(SimHarnessShared, RunSetsTheClientEnvironment) {
  const auto r =
      fabric_->run({"sh", "-c", "echo $IBSIM_SOCKNAME $SIM_HOST; pwd"}, 30s, "sh-host2-1");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), sim::socketNameFor(fabric_->name()) + " sh-host2-1");
  // The default working directory is the caller's, so relative paths keep their meaning, and
  // umad2sim's sys-<pid> tree does not stay behind there.
  const fs::path cwd = r.out.substr(r.out.find('\n') + 1, r.out.size() - r.out.find('\n') - 2);
  EXPECT_EQ(fs::weakly_canonical(cwd), fs::weakly_canonical(fs::current_path()));
  const auto d = fabric_->run({"ibnetdiscover", "-p"});
  ASSERT_EQ(d.exitCode, 0) << d.describe();
  for (const auto& e : fs::directory_iterator(fs::current_path())) {
    const std::string n = e.path().filename().string();
    if (n.rfind("sys-", 0) != 0) continue;
    // Only trees of processes still alive (other tests running beside this one) may remain.
    EXPECT_TRUE(fs::exists("/proc/" + n.substr(4))) << "left behind: " << e.path();
  }
}

TEST_F(SimHarnessShared, RelativeProgramAndArgumentPathsResolveFromTheCaller) {
  const fs::path dir = scratchDir() / "relative";
  fs::create_directories(dir / "bin");
  const fs::path script = dir / "bin" / "write-here";
  {
    std::ofstream out(script);
    out << "#!/bin/sh\necho \"$SIM_HOST\" > \"$1\"\n";
  }
  fs::permissions(script, fs::perms::owner_all);
  const auto r = runProcess({cliPath().string(), "sim", "run", "--name", fabric_->name(), "--",
                             "bin/write-here", "out.txt"},
                            30s, {}, dir);
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  std::ifstream in(dir / "out.txt");
  std::string host;
  std::getline(in, host);
  EXPECT_FALSE(host.empty());
}

TEST_F(SimHarnessShared, RunRemovesUmadSysTreesFromAGivenCwd) {
  const fs::path dir = scratchDir() / "cwd";
  fs::create_directories(dir);
  const auto r = runCli({"sim", "run", "--name", fabric_->name(), "--cwd", dir.string(), "--",
                         "ibnetdiscover", "-p"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST_F(SimHarnessShared, ClientsCanShareAnHcaWithOpenSMAndEachOther) {
  const auto state = sim::load(fabric_->name());
  EXPECT_EQ(state.smHost, "sh-host1-1");
  EXPECT_EQ(state.clientHost, "sh-host3-2");
  std::vector<std::thread> threads;
  std::vector<NetFabric> seen(3);
  const std::vector<std::string> hosts{"sh-host1-1", "sh-host3-2", "sh-host3-2"};
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] { seen[i] = discovered(*fabric_, hosts[i]); });
  }
  for (auto& t : threads) t.join();
  for (const auto& f : seen) EXPECT_EQ(f.nodes.size(), 11u);
  // OpenSM is still the master and the subnet still up.
  const auto r = fabric_->run({"sminfo"}, 30s, "sh-host2-1");
  EXPECT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_NE(r.out.find("SMINFO_MASTER"), std::string::npos) << r.out;
}

TEST_F(SimHarnessShared, RunOnAnUnknownHostFails) {
  expectOneLineError(fabric_->run({"true"}, 30s, "no-such-host"), "no node \"no-such-host\"");
}

TEST_F(SimHarnessShared, RunTimeoutKillsTheProgram) {
  const auto r =
      runCli({"sim", "run", "--name", fabric_->name(), "--timeout", "1", "--", "sleep", "60"}, 30s);
  EXPECT_EQ(r.exitCode, 1) << r.describe();
  EXPECT_NE(r.err.find("timed out"), std::string::npos) << r.describe();
}

TEST_F(SimHarnessShared, CmdShowsIbsimsAnswer) {
  const auto r = fabric_->cmd("Dump \"sh-leaf1\"");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_NE(r.out.find("Switch 4 \"sh-leaf1\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"sh-host1-1\"[1]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("sim>"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ibfabric-end"), std::string::npos) << r.out;
}

TEST_F(SimHarnessShared, CmdReportsIbsimsComplaints) {
  expectOneLineError(fabric_->cmd("Frobnicate"), "unknown");
  expectOneLineError(fabric_->cmd("Unlink \"no-such-node\"[1]"), "not found");
}

TEST_F(SimHarnessShared, ConcurrentCmdsGetTheirOwnAnswers) {
  std::vector<std::thread> threads;
  std::vector<ProcessResult> results(4);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      results[i] = fabric_->cmd("Dump \"sh-host" + std::to_string(i % 3 + 1) + "-1\"");
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(results[i].exitCode, 0) << results[i].describe();
    EXPECT_NE(results[i].out.find("\"sh-host" + std::to_string(i % 3 + 1) + "-1\""),
              std::string::npos)
        << results[i].out;
    EXPECT_EQ(results[i].out.find("Switch"), std::string::npos) << results[i].out;
  }
}

TEST_F(SimHarnessShared, ListShowsTheFabricUp) {
  const auto r = runCli({"sim", "list"});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  bool found = false;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(fabric_->name() + " ", 0) != 0) continue;
    found = true;
    EXPECT_NE(line.find(" up "), std::string::npos) << line;
    EXPECT_NE(line.find(fabric_->netFile().string()), std::string::npos) << line;
    EXPECT_NE(line.find(" 11 "), std::string::npos) << line;  // 5 switches + 6 HCAs
  }
  EXPECT_TRUE(found) << r.out;
}

TEST_F(SimHarnessShared, EnvPrintsExportLines) {
  const auto r = runCli({"sim", "env", "--name", fabric_->name()});
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_NE(r.out.find("export IBSIM_SOCKNAME=" + sim::socketNameFor(fabric_->name())),
            std::string::npos)
      << r.out;
}

// ---------------------------------------------------------------------------------------------
// Tests that change or stop their fabric get their own.

TEST(SimHarness, DownLeavesNoProcessBehind) {
  SimFabric fabric(smallFabricFile("dn-"), "down");
  const auto state = sim::load(fabric.name());
  ASSERT_TRUE(processRunning(state.ibsim.pid));
  ASSERT_TRUE(processRunning(state.opensm.pid));
  EXPECT_EQ(fabricProcesses(fabric.name()).size(), 2u);

  // A client still attached when the fabric goes down is stopped too.
  ProcessResult client;
  std::jthread t([&] { client = fabric.run({"sleep", "300"}, 120s); });
  EXPECT_TRUE(waitFor([&] { return fabricProcesses(fabric.name()).size() == 3; }, 30s));

  const auto down = fabric.down();
  t.join();
  EXPECT_EQ(down.exitCode, 0) << down.describe();
  EXPECT_NE(down.out.find("is down"), std::string::npos) << down.out;
  EXPECT_EQ(client.exitCode, 128 + SIGTERM) << client.describe();
  EXPECT_FALSE(processRunning(state.ibsim.pid));
  EXPECT_FALSE(processRunning(state.opensm.pid));
  expectNothingLeft(fabric.name());
  expectOneLineError(runCli({"sim", "down", "--name", fabric.name()}), "no fabric named");
}

TEST(SimHarness, TwoFabricsDoNotSeeEachOther) {
  SimFabric a(writeScratchFile("a.net", fatTreeText("a-", 1, 2, 2)), "iso-a");
  SimFabric b(writeScratchFile("b.net", fatTreeText("b-", 2, 3, 3)), "iso-b");
  const auto seenA = discovered(a);
  const auto seenB = discovered(b);
  EXPECT_EQ(descriptions(seenA), descriptions(parseNetFile(a.netFile())));
  EXPECT_EQ(descriptions(seenB), descriptions(parseNetFile(b.netFile())));
  EXPECT_EQ(seenA.nodes.size(), 1u + 2u + 4u);
  EXPECT_EQ(seenB.nodes.size(), 2u + 3u + 9u);
  // A console command on one does not reach the other.
  ASSERT_EQ(a.cmd("Unlink \"a-leaf1\"").exitCode, 0);
  EXPECT_EQ(discovered(b).linkCount(), parseNetFile(b.netFile()).linkCount());
}

TEST(SimHarness, UnlinkAndReLinkTakeEffect) {
  SimFabric fabric(smallFabricFile("ul-"), "unlink");
  const auto links = parseNetFile(fabric.netFile()).linkCount();
  ASSERT_EQ(discovered(fabric).linkCount(), links);

  const auto r = fabric.cmd("Unlink \"ul-leaf1\"[3]");  // leaf1 - spine1
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_TRUE(waitFor([&] { return discovered(fabric).linkCount() == links - 1; }, 30s, 200ms));

  ASSERT_EQ(fabric.cmd("ReLink \"ul-leaf1\"[3]").exitCode, 0);
  EXPECT_TRUE(waitFor([&] { return discovered(fabric).linkCount() == links; }, 30s, 200ms));
}

TEST(SimHarness, NoSmFabricLoadsWithoutOpenSM) {
  SimFabric fabric(smallFabricFile("ns-"), "nosm", {.upArgs = {"--no-sm"}});
  const auto state = sim::load(fabric.name());
  EXPECT_FALSE(state.withSm);
  EXPECT_EQ(fabricProcesses(fabric.name()).size(), 1u);
  // Directed-route discovery works without an SM.
  EXPECT_EQ(discovered(fabric).nodes.size(), 11u);
}

TEST(SimHarness, StaleFabricIsShownAndCleanedByDown) {
  SimFabric fabric(smallFabricFile("st-"), "stale");
  const auto state = sim::load(fabric.name());
  ::kill(state.opensm.pid, SIGKILL);
  ::kill(state.ibsim.pid, SIGKILL);
  ASSERT_TRUE(waitFor([&] { return fabricProcesses(fabric.name()).empty(); }, 10s));

  const auto list = runCli({"sim", "list"});
  EXPECT_NE(list.out.find(fabric.name() + " "), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("stale"), std::string::npos) << list.out;
  expectOneLineError(fabric.run({"true"}), "is not up");
  expectOneLineError(fabric.cmd("Dump"), "is not up");

  const auto down = fabric.down();
  EXPECT_EQ(down.exitCode, 0) << down.describe();
  EXPECT_NE(down.out.find("stale"), std::string::npos) << down.out;
  expectNothingLeft(fabric.name());
}

// ---------------------------------------------------------------------------------------------
// Bad input: one-line error, non-zero exit, nothing left behind.

TEST(SimHarnessBadInput, MissingFile) {
  const auto name = uniqueFabricName("missing");
  expectOneLineError(runCli({"sim", "up", "/nonexistent/fabric.net", "--name", name}),
                     "no such file");
  expectNothingLeft(name);
}

TEST(SimHarnessBadInput, MalformedFile) {
  const auto path = writeScratchFile("malformed.net", "Switch 4 \"sw1\"\n[1] \"nobody\"[1]\n");
  const auto name = uniqueFabricName("malformed");
  expectOneLineError(runCli({"sim", "up", path.string(), "--name", name}), "malformed.net:2");
  expectNothingLeft(name);
}

TEST(SimHarnessBadInput, InvalidName) {
  expectOneLineError(runCli({"sim", "up", smallFabricFile("in-").string(), "--name", "../x"}),
                     "invalid fabric name");
}

TEST(SimHarnessBadInput, NameAlreadyInUse) {
  SimFabric fabric(smallFabricFile("iu-"), "inuse");
  expectOneLineError(runCli({"sim", "up", fabric.netFile().string(), "--name", fabric.name()}),
                     "already in use");
  // The fabric that owns the name is untouched.
  EXPECT_EQ(fabricProcesses(fabric.name()).size(), 2u);
  EXPECT_EQ(fabric.run({"true"}).exitCode, 0);
}

TEST(SimHarnessBadInput, RunCmdEnvOnAFabricThatIsNotUp) {
  const auto name = uniqueFabricName("absent");
  expectOneLineError(runCli({"sim", "run", "--name", name, "--", "true"}), "no fabric named");
  expectOneLineError(runCli({"sim", "cmd", "--name", name, "Dump"}), "no fabric named");
  expectOneLineError(runCli({"sim", "env", "--name", name}), "no fabric named");
  expectOneLineError(runCli({"sim", "down", "--name", name}), "no fabric named");
}

TEST(SimHarnessBadInput, IbsimDyingDuringBringUp) {
  // A stand-in for ibsim that fails the way ibsim does on a fabric it cannot load.
  const auto fake =
      writeScratchFile("fake-ibsim.sh",
                       "#!/bin/sh\necho 'ibpanic: [1] main: sim_init failed, status -2' >&2\n"
                       "sleep 0.3\nexit 255\n");
  fs::permissions(fake, fs::perms::owner_all);
  const auto name = uniqueFabricName("ibsimdies");
  const auto r = runCli({"sim", "up", smallFabricFile("id-").string(), "--name", name}, 60s,
                        {{"IBFABRIC_SIM_IBSIM", fake.string()}});
  expectOneLineError(r, "ibsim exited during bring-up");
  EXPECT_NE(r.err.find("sim_init failed"), std::string::npos) << r.err;
  expectNothingLeft(name);
}

TEST(SimHarnessBadInput, OpensmDyingDuringBringUp) {
  const auto name = uniqueFabricName("smdies");
  const auto r = runCli({"sim", "up", smallFabricFile("od-").string(), "--name", name}, 60s,
                        {{"IBFABRIC_SIM_OPENSM", "false"}});
  expectOneLineError(r, "opensm exited during bring-up");
  expectNothingLeft(name);
}

TEST(SimHarnessBadInput, InterruptedUpCleansUp) {
  const auto path = writeScratchFile(
      "island2.net", fatTreeText("main-", 1, 2, 2) + fatTreeText("island-", 1, 1, 2));
  const auto name = uniqueFabricName("interrupted");
  // runCli's timeout sends SIGTERM while `sim up` waits for ports that never come up.
  const auto r = runCli({"sim", "up", path.string(), "--name", name, "--timeout", "60"}, 2s);
  EXPECT_TRUE(r.timedOut);
  EXPECT_NE(r.err.find("interrupted by signal 15"), std::string::npos) << r.describe();
  expectNothingLeft(name);
}

TEST(SimHarnessBadInput, TimeoutWhenHcasCannotComeUp) {
  // An island the SM cannot reach: its HCA ports never become Active.
  const auto path = writeScratchFile(
      "island.net", fatTreeText("main-", 1, 2, 2) + fatTreeText("island-", 1, 1, 2));
  const auto name = uniqueFabricName("island");
  const auto r = runCli({"sim", "up", path.string(), "--name", name, "--timeout", "3"}, 60s);
  expectOneLineError(r, "not up within 3 s");
  // The island's 2 HCA ports never come up; on a loaded machine some of the main part's may
  // not have come up within the 3 s either.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(([0-9]) of 6 HCA ports are not Active)")))
      << r.err;
  EXPECT_GE(std::stoi(m[1].str()), 2) << r.err;
  expectNothingLeft(name);
}

}  // namespace
}  // namespace ibfabric::testing
