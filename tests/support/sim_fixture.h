// Test fixtures for simulated fabrics: a SimFabric runs the real `ibfabric sim up` on a fabric
// file under a unique name and takes it down again in its destructor, also when the test fails.
//
//   ibfabric::testing::SimFabric fabric(path, "unlink");
//   auto r = fabric.run({"ibnetdiscover", "-p"});   // through `ibfabric sim run`
//   fabric.cmd(R"(Unlink "leaf-01"[1])");           // through `ibfabric sim cmd`
//
// For a fabric shared by the tests of a suite, hold a std::unique_ptr<SimFabric> set in
// SetUpTestSuite() and reset in TearDownTestSuite(). (ctest runs each test in its own process,
// so the sharing pays off when the binary is run directly.)
//
// Fabrics live under $IBFABRIC_SIM_DIR like any other. Names are "t<pid>-<n>-<tag>", so a later
// test process can recognise and take down fabrics whose test process was killed.
// Not thread-safe: use one SimFabric from one thread at a time (run() may be called from
// another thread while the owning thread only waits).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/subprocess.h"

namespace ibfabric::testing {

/// A fresh fabric name for this test process: "t<pid>-<n>-<tag>" (tag shortened to fit).
std::string uniqueFabricName(std::string_view tag);

/// Processes (ibsim, OpenSM, clients) attached to fabric `name`, found by their
/// IBSIM_SOCKNAME environment entry in /proc.
std::vector<pid_t> fabricProcesses(const std::string& name);

/// The state directory of fabric `name`.
std::filesystem::path fabricStateDir(const std::string& name);

/// A hand-written two-level fat tree in ibsim's native format: switches "<p>leaf<i>" and
/// "<p>spine<j>", HCAs "<p>host<i>-<k>" (1 port). Leaf ports 1..hostsPerLeaf go to hosts, the next
/// `spines` ports up; spine port i goes to leaf i. Links = leaves * (hostsPerLeaf + spines).
std::string fatTreeText(std::string_view prefix, int spines, int leaves, int hostsPerLeaf);

/// Takes down fabrics left by test processes that no longer exist. Runs once per process
/// (SimFabric's constructor calls it).
void reapAbandonedFabrics();

class SimFabric {
 public:
  struct Options {
    std::vector<std::string> upArgs;  // extra `sim up` arguments, e.g. {"--no-sm"}
    std::chrono::seconds upTimeout{300};
  };

  /// Runs `ibfabric sim up netFile --name <unique>`; throws std::runtime_error (with the
  /// command's output) when it fails.
  SimFabric(std::filesystem::path netFile, std::string_view tag);
  SimFabric(std::filesystem::path netFile, std::string_view tag, Options options);
  ~SimFabric();
  SimFabric(const SimFabric&) = delete;
  SimFabric& operator=(const SimFabric&) = delete;

  const std::string& name() const { return name_; }
  const std::filesystem::path& netFile() const { return netFile_; }
  const ProcessResult& upResult() const { return up_; }
  std::filesystem::path stateDir() const { return fabricStateDir(name_); }

  /// `ibfabric sim run --name N [--host H] -- argv...`
  ProcessResult run(const std::vector<std::string>& argv,
                    std::chrono::milliseconds timeout = std::chrono::seconds(120),
                    const std::string& host = "") const;
  /// `ibfabric sim cmd --name N command`
  ProcessResult cmd(const std::string& command,
                    std::chrono::milliseconds timeout = std::chrono::seconds(60)) const;
  /// `ibfabric sim restart --name N`: ibsim and OpenSM again on the same socket name (e.g.
  /// after the test killed ibsim); the fabric's clients keep running.
  ProcessResult restart(std::chrono::milliseconds timeout = std::chrono::seconds(180)) const;
  /// `ibfabric sim down --name N`; later calls (and the destructor) do nothing.
  ProcessResult down();

 private:
  std::filesystem::path netFile_;
  std::string name_;
  ProcessResult up_;
  bool down_ = false;
};

/// The pid of the fabric's process with this /proc comm ("ibsim", "opensm"), or -1.
pid_t processNamed(const SimFabric& fabric, const std::string& comm);

}  // namespace ibfabric::testing
