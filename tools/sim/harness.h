// The simulated-fabric harness: starts an ibsim simulator and an OpenSM on a fabric file, runs
// programs attached to it, talks to ibsim's console and tears everything down again.
//
// Each fabric has a name and a state directory `simRoot()/<name>/` holding a copy of the fabric,
// state.json (pids, sizes, hosts), the console FIFO, the logs of ibsim and OpenSM, OpenSM's
// config/dump/cache directories and the working directories where umad2sim writes its
// `sys-<pid>` trees. Several fabrics run side by side: each has its own IBSIM_SOCKNAME.
//
// Everything a fabric starts carries IBSIM_SOCKNAME=<its socket name> in its environment, so
// `down()` finds and stops every process of a fabric, including clients started by hand.
//
// Errors are SimError with a one-line message. The functions are safe to call concurrently from
// different processes (they coordinate through the state directory); within one process they
// are not thread-safe (up() and run() fork).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/sim/process.h"

namespace ibfabric::sim {

class SimError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Where the state directories live: $IBFABRIC_SIM_DIR, else /tmp/ibfabric-sim.
std::filesystem::path simRoot();
/// Throws SimError unless `name` is 1-40 characters of [A-Za-z0-9._-] not starting with '.'.
void validateName(const std::string& name);
/// IBSIM_SOCKNAME of fabric `name` under the current simRoot() (unique per root and name).
std::string socketNameFor(const std::string& name);

/// What state.json records about a fabric.
struct FabricState {
  std::string name;
  std::filesystem::path dir;
  std::filesystem::path sourceFile;  // the file given to `up` (absolute)
  std::string sockName;
  std::size_t nodes = 0, switches = 0, cas = 0, links = 0;
  bool withSm = true;
  std::string routing;
  std::string smHost;      // HCA id OpenSM runs on ("" without SM)
  std::string clientHost;  // default SIM_HOST for run()
  ProcRef ibsim;
  ProcRef opensm;
  std::int64_t startedAt = 0;  // unix seconds
  std::string status;          // "starting" | "up"

  /// OpenSM event plugin: the library (lib<name>.so) and its event_plugin_options; "" = none.
  std::string osmPlugin;
  std::string osmPluginOptions;
  /// OpenSM sweep_interval in seconds; 0 = OpenSM's default.
  int smSweepInterval = 0;

  std::filesystem::path fabricCopy() const { return dir / "fabric.net"; }
  std::filesystem::path ibsimLog() const { return dir / "ibsim.log"; }
  std::filesystem::path opensmLog() const { return dir / "opensm.log"; }
  std::filesystem::path consoleFifo() const { return dir / "console.fifo"; }
  std::filesystem::path workDir() const { return dir / "work"; }
};

enum class Health { kUp, kStarting, kStale };
const char* toString(Health h);

struct FabricListing {
  FabricState state;
  Health health = Health::kStale;
  bool stateReadable = true;  // false when state.json is missing or corrupt
};

struct UpOptions {
  std::filesystem::path fabricFile;
  std::string name;
  std::chrono::seconds timeout{180};
  bool withSm = true;
  std::string routing = "ftree";
  /// Extra OpenSM config lines "key value", appended to opensm.conf (e.g. "sweep_on_trap FALSE",
  /// "sweep_interval 0": an SM that does not reroute after Unlink). Checked by up().
  std::vector<std::string> smOptions;
  /// Loads this OpenSM event plugin (a lib<name>.so; its directory goes on OpenSM's
  /// LD_LIBRARY_PATH) with `osmPluginOptions` as event_plugin_options.
  std::filesystem::path osmPlugin;
  std::string osmPluginOptions;
  /// OpenSM's sweep_interval in seconds; 0 keeps OpenSM's default (10 s).
  int smSweepInterval = 0;
};

/// Starts ibsim (and OpenSM unless !withSm) and returns once every connected HCA port is Active
/// with a LID (or, without SM, once ibsim's console answers). On any failure everything started
/// is stopped, the state directory removed, and SimError thrown.
FabricState up(const UpOptions& options);

/// Restarts the simulator of a fabric that was up (also one whose ibsim died): stops OpenSM,
/// then ibsim, starts ibsim again on the same fabric copy and IBSIM_SOCKNAME, then OpenSM (same
/// opensm.conf and cache, so LIDs are assigned again), and waits as up() does. The fabric's
/// other clients are left running. Returns the new state; throws SimError (the fabric is then
/// stale: `down` cleans it up).
FabricState restart(const std::string& name, std::chrono::seconds timeout);

struct DownReport {
  bool wasStale = false;
  std::size_t processesStopped = 0;
  bool allGone = true;
};
/// Stops OpenSM, then every other client of the fabric, then ibsim (SIGTERM, then SIGKILL), and
/// removes the state directory. Throws SimError when there is no such fabric.
DownReport down(const std::string& name);

/// Every state directory under simRoot(), sorted by name.
std::vector<FabricListing> list();

/// Loads a fabric's state; throws SimError if it does not exist. Does not check health.
FabricState load(const std::string& name);
/// Loads a fabric that must be up: throws SimError("fabric N is not up ...") otherwise.
FabricState loadUp(const std::string& name);
Health healthOf(const FabricState& state);

/// The environment a client of `state` needs (LD_PRELOAD, SIM_HOST, IBSIM_SOCKNAME, ...).
std::map<std::string, std::string> clientEnv(const FabricState& state, const std::string& host);

struct RunOptions {
  std::string name;
  std::string host;  // "" = the fabric's clientHost
  std::vector<std::string> argv;
  std::chrono::seconds timeout{0};  // 0 = none; on timeout the program is killed, result 124
  /// Default: the current directory when writable, else a fresh one in the state directory.
  /// Either way the sys-<pid> tree umad2sim writes there is removed afterwards.
  std::optional<std::filesystem::path> cwd;
  std::chrono::seconds slotWait{120};  // how long to wait for a free client slot
};
/// Runs a program attached to the fabric, with stdin/stdout/stderr inherited; returns its exit
/// status (128+signal when killed, 124 on timeout). At most 10 clients can attach to one ibsim:
/// run() holds one of the fabric's client slots while the program runs and waits for a free one.
int run(const RunOptions& options);

/// Writes `command` (one or more lines) to ibsim's console and returns its answer (prompts
/// removed). Throws SimError when the fabric is not up or no answer comes within `timeout`.
std::string consoleCommand(const std::string& name, const std::string& command,
                           std::chrono::milliseconds timeout = std::chrono::seconds(30));

/// Same, on an already loaded state.
std::string consoleCommand(const FabricState& state, const std::string& command,
                           std::chrono::milliseconds timeout);

/// Port state lines that are not Active with a LID, for every connected HCA port, parsed from
/// ibsim's `Dump` answer. Empty means the subnet is up from the hosts' point of view.
std::vector<std::string> inactiveCaPorts(const std::string& dumpAnswer, std::size_t* caPorts);

/// Path of umad2sim: $IBFABRIC_UMAD2SIM or the Debian location.
std::string umad2simPath();

}  // namespace ibfabric::sim
