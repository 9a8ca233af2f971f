#include "tools/sim/harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "discovery/netfile.h"

extern char** environ;

namespace ibfabric::sim {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

constexpr int kMaxClientsPerSimulator = 10;

/// Set by SIGINT/SIGTERM/SIGHUP while up() runs, so that it stops what it started.
volatile sig_atomic_t gInterrupted = 0;

void onInterrupt(int sig) { gInterrupted = sig; }

void throwIfInterrupted() {
  if (gInterrupted != 0) {
    throw SimError("interrupted by signal " + std::to_string(gInterrupted) + "; cleaned up");
  }
}

/// Installs onInterrupt() for the lifetime of the object.
class InterruptGuard {
 public:
  InterruptGuard() {
    gInterrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = onInterrupt;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~InterruptGuard() {
    for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old_[3];
};  // ibsim's limit on attached umad clients
constexpr const char* kStateFile = "state.json";

std::string envOr(const char* key, const std::string& fallback) {
  const char* v = std::getenv(key);
  return (v != nullptr && *v != '\0') ? std::string(v) : fallback;
}

std::string ibsimProgram() { return envOr("IBFABRIC_SIM_IBSIM", "ibsim"); }
std::string opensmProgram() { return envOr("IBFABRIC_SIM_OPENSM", "opensm"); }

std::string errnoText() { return std::strerror(errno); }

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::string readFile(const fs::path& path, std::uintmax_t from = 0) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(static_cast<std::streamoff>(from));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::uintmax_t fileSize(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

/// The last non-empty line of a log (without prompts), for error messages.
std::string lastLogLine(const fs::path& path) {
  const auto size = fileSize(path);
  std::string tail = readFile(path, size > 8192 ? size - 8192 : 0);
  std::string last;
  std::string firstProblem;  // ibsim's warnings/panics say more than its last line
  std::istringstream lines(tail);
  std::string line;
  while (std::getline(lines, line)) {
    if (firstProblem.empty() &&
        (line.find("ibwarn") != std::string::npos || line.find("ibpanic") != std::string::npos) &&
        line.find("cannot parse remote lid") == std::string::npos) {
      const auto colon = line.find("] ");
      firstProblem = trim(colon == std::string::npos ? line : line.substr(colon + 2));
    }
    std::string cleaned;
    for (std::string_view rest = line;;) {  // drop "sim> " prompts
      const auto p = rest.find("sim> ");
      cleaned += rest.substr(0, p);
      if (p == std::string_view::npos) break;
      rest.remove_prefix(p + 5);
    }
    cleaned = trim(cleaned);
    if (!cleaned.empty()) last = cleaned;
  }
  if (!firstProblem.empty()) last = firstProblem;
  if (last.size() > 200) last = last.substr(0, 200) + "...";
  return last.empty() ? "(log empty)" : last;
}

std::uint32_t fnv1a(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

nlohmann::json procToJson(const ProcRef& p) { return {{"pid", p.pid}, {"start", p.startTime}}; }
ProcRef procFromJson(const nlohmann::json& j) {
  ProcRef p;
  if (j.is_object()) {
    p.pid = j.value("pid", 0);
    p.startTime = j.value("start", std::uint64_t{0});
  }
  return p;
}

struct StateExtras {
  ProcRef upProcess;  // the `sim up` that is still bringing the fabric up
};

void saveState(const FabricState& s, const StateExtras& extras = {}) {
  nlohmann::json j = {
      {"name", s.name},
      {"source", s.sourceFile.string()},
      {"sockname", s.sockName},
      {"nodes", s.nodes},
      {"switches", s.switches},
      {"cas", s.cas},
      {"links", s.links},
      {"sm", s.withSm},
      {"routing", s.routing},
      {"osmPlugin", s.osmPlugin},
      {"osmPluginOptions", s.osmPluginOptions},
      {"smSweepInterval", s.smSweepInterval},
      {"smHost", s.smHost},
      {"clientHost", s.clientHost},
      {"ibsim", procToJson(s.ibsim)},
      {"opensm", procToJson(s.opensm)},
      {"upProcess", procToJson(extras.upProcess)},
      {"startedAt", s.startedAt},
      {"status", s.status},
  };
  const fs::path tmp = s.dir / (std::string(kStateFile) + ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(2) << "\n";
    if (!out) throw SimError("cannot write " + tmp.string());
  }
  fs::rename(tmp, s.dir / kStateFile);
}

std::optional<std::pair<FabricState, StateExtras>> readState(const fs::path& dir) {
  std::ifstream in(dir / kStateFile);
  if (!in) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(in);
    FabricState s;
    StateExtras x;
    s.dir = dir;
    s.name = j.value("name", dir.filename().string());
    s.sourceFile = j.value("source", "");
    s.sockName = j.value("sockname", "");
    s.nodes = j.value("nodes", std::size_t{0});
    s.switches = j.value("switches", std::size_t{0});
    s.cas = j.value("cas", std::size_t{0});
    s.links = j.value("links", std::size_t{0});
    s.withSm = j.value("sm", true);
    s.routing = j.value("routing", "");
    s.osmPlugin = j.value("osmPlugin", "");
    s.osmPluginOptions = j.value("osmPluginOptions", "");
    s.smSweepInterval = j.value("smSweepInterval", 0);
    s.smHost = j.value("smHost", "");
    s.clientHost = j.value("clientHost", "");
    s.ibsim = procFromJson(j.value("ibsim", nlohmann::json{}));
    s.opensm = procFromJson(j.value("opensm", nlohmann::json{}));
    x.upProcess = procFromJson(j.value("upProcess", nlohmann::json{}));
    s.startedAt = j.value("startedAt", std::int64_t{0});
    s.status = j.value("status", "");
    return std::make_pair(std::move(s), x);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Health healthOf(const FabricState& s, const StateExtras& x) {
  const bool ibsimUp = isAlive(s.ibsim) && s.ibsim.pid != 0;
  const bool smUp = !s.withSm || (s.opensm.pid != 0 && isAlive(s.opensm));
  if (s.status == "up" && ibsimUp && smUp) return Health::kUp;
  if (s.status == "starting" && x.upProcess.pid != 0 && isAlive(x.upProcess)) {
    return Health::kStarting;
  }
  return Health::kStale;
}

/// SIGTERM to all, bounded wait, SIGKILL to the rest. Returns how many are still alive.
std::size_t terminateAll(const std::vector<ProcRef>& procs, std::chrono::milliseconds termWait,
                         std::chrono::milliseconds killWait) {
  std::vector<ProcRef> live;
  for (const auto& p : procs) {
    if (p.pid > 0 && isAlive(p)) live.push_back(p);
  }
  for (const auto& p : live) ::kill(p.pid, SIGTERM);
  for (int round = 0; round < 2 && !live.empty(); ++round) {
    const auto deadline = Clock::now() + (round == 0 ? termWait : killWait);
    while (!live.empty() && Clock::now() < deadline) {
      std::erase_if(live, [](const ProcRef& p) {
        ::waitpid(p.pid, nullptr, WNOHANG);
        return !isAlive(p);
      });
      if (!live.empty()) std::this_thread::sleep_for(20ms);
    }
    if (round == 0) {
      for (const auto& p : live) {
        spdlog::warn("pid {} ignored SIGTERM, sending SIGKILL", p.pid);
        ::kill(p.pid, SIGKILL);
      }
    }
  }
  return live.size();
}

std::vector<ProcRef> fabricClients(const std::string& sockName, pid_t except) {
  std::vector<ProcRef> out;
  for (pid_t pid : processesWithEnv("IBSIM_SOCKNAME", sockName)) {
    if (pid == except) continue;
    if (auto start = processStartTime(pid)) out.push_back({pid, *start});
  }
  return out;
}

/// Stops everything of a fabric in the safe order. Returns {stopped, allGone}.
std::pair<std::size_t, bool> stopAll(const FabricState& s) {
  std::size_t stopped = 0;
  bool allGone = true;
  if (s.opensm.pid != 0 && isAlive(s.opensm)) {
    ++stopped;
    allGone &= terminateAll({s.opensm}, 5s, 3s) == 0;
  }
  // Clients blocked in a receive would wait forever once ibsim is gone: stop them first.
  auto clients = fabricClients(s.sockName, s.ibsim.pid);
  stopped += clients.size();
  allGone &= terminateAll(clients, 3s, 2s) == 0;
  if (s.ibsim.pid != 0 && isAlive(s.ibsim)) {
    ++stopped;
    allGone &= terminateAll({s.ibsim}, 3s, 2s) == 0;
  }
  // Anything that attached meanwhile (or an ibsim whose state was never recorded).
  auto rest = fabricClients(s.sockName, 0);
  stopped += rest.size();
  allGone &= terminateAll(rest, 1s, 2s) == 0;
  return {stopped, allGone};
}

/// Holds an flock on a file for the lifetime of the object.
class FileLock {
 public:
  FileLock() = default;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  /// Tries once; true when the lock is held.
  bool tryLock(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      return false;
    }
    fd_ = fd;
    return true;
  }
  bool lockWithin(const fs::path& path, std::chrono::milliseconds wait) {
    const auto deadline = Clock::now() + wait;
    while (!tryLock(path)) {
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(20ms);
    }
    return true;
  }

 private:
  int fd_ = -1;
};

std::string uniqueToken() {
  static std::atomic<unsigned> counter{0};
  return std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
         std::to_string(Clock::now().time_since_epoch().count() % 1000000007);
}

std::string secondsText(std::chrono::milliseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

bool logContains(const fs::path& path, std::uintmax_t& offset, std::string& carry,
                 std::string_view needle) {
  const auto size = fileSize(path);
  if (size < offset) {  // the file was truncated (a restarted program that does not append)
    offset = 0;
    carry.clear();
  }
  if (size <= offset) return false;
  std::string chunk = carry + readFile(path, offset);
  offset += chunk.size() - carry.size();
  if (chunk.find(needle) != std::string::npos) return true;
  carry = chunk.size() > needle.size() ? chunk.substr(chunk.size() - needle.size()) : chunk;
  return false;
}

std::string opensmConfig(const FabricState& s) {
  std::ostringstream c;
  c << "# Written by ibfabric sim up for fabric " << s.name << "\n"
    << "routing_engine " << s.routing << "\n"
    << "force_log_flush TRUE\n"
    << "log_flags 0x43\n"
    << "log_file " << s.opensmLog().string() << "\n"
    << "dump_files_dir " << (s.dir / "dump").string() << "\n";
  if (s.smSweepInterval > 0) c << "sweep_interval " << s.smSweepInterval << "\n";
  if (!s.osmPlugin.empty()) {
    // OpenSM dlopen()s "lib<event_plugin_name>.so" from the library path.
    const std::string file = fs::path(s.osmPlugin).filename().string();
    c << "event_plugin_name " << file.substr(3, file.size() - 6) << "\n";
    if (!s.osmPluginOptions.empty()) c << "event_plugin_options " << s.osmPluginOptions << "\n";
  }
  return c.str();
}

}  // namespace

const char* toString(Health h) {
  switch (h) {
    case Health::kUp:
      return "up";
    case Health::kStarting:
      return "starting";
    case Health::kStale:
      return "stale";
  }
  return "?";
}

fs::path simRoot() { return fs::path(envOr("IBFABRIC_SIM_DIR", "/tmp/ibfabric-sim")); }

void validateName(const std::string& name) {
  const bool ok =
      !name.empty() && name.size() <= 40 && name[0] != '.' &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
      });
  if (!ok) {
    throw SimError("invalid fabric name \"" + name +
                   "\": use 1-40 characters of A-Z a-z 0-9 . _ - (not starting with '.')");
  }
}

std::string socketNameFor(const std::string& name) {
  std::error_code ec;
  fs::path root = fs::weakly_canonical(fs::absolute(simRoot()), ec);
  if (ec) root = simRoot();
  char hash[16];
  std::snprintf(hash, sizeof hash, "%08x", fnv1a(root.string()));
  return "ibf-" + name + "-" + hash;
}

std::string umad2simPath() {
  return envOr("IBFABRIC_UMAD2SIM", "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so");
}

Health healthOf(const FabricState& state) {
  const auto full = readState(state.dir);
  return healthOf(state, full ? full->second : StateExtras{});
}

FabricState load(const std::string& name) {
  validateName(name);
  const fs::path dir = simRoot() / name;
  if (!fs::is_directory(dir)) throw SimError("no fabric named \"" + name + "\" is up");
  auto st = readState(dir);
  if (!st) {
    throw SimError("fabric \"" + name + "\" has no readable state (" + (dir / kStateFile).string() +
                   "); run `ibfabric sim down --name " + name + "`");
  }
  return st->first;
}

FabricState loadUp(const std::string& name) {
  FabricState s = load(name);
  const Health h = healthOf(s);
  if (h == Health::kStarting) throw SimError("fabric \"" + name + "\" is still starting");
  if (h != Health::kUp) {
    throw SimError("fabric \"" + name + "\" is not up (its processes died); run `ibfabric sim " +
                   "down --name " + name + "` to clean it up");
  }
  return s;
}

std::map<std::string, std::string> clientEnv(const FabricState& state, const std::string& host) {
  std::map<std::string, std::string> env;
  const std::string umad = umad2simPath();
  const std::string existing = envOr("LD_PRELOAD", "");
  env["LD_PRELOAD"] = existing.find(umad) != std::string::npos ? existing
                      : existing.empty()                       ? umad
                                                               : umad + ":" + existing;
  env["SIM_HOST"] = host;
  env["IBSIM_SOCKNAME"] = state.sockName;
  // A sanitized program cannot have ASan first in the preload list when umad2sim is there.
  std::string asan = envOr("ASAN_OPTIONS", "");
  if (asan.find("verify_asan_link_order") == std::string::npos) {
    asan = asan.empty() ? "verify_asan_link_order=0" : asan + ":verify_asan_link_order=0";
  }
  env["ASAN_OPTIONS"] = asan;
  return env;
}

std::vector<std::string> inactiveCaPorts(const std::string& dump, std::size_t* caPorts) {
  std::vector<std::string> bad;
  std::size_t count = 0;
  bool inCa = false;
  std::string node;
  std::istringstream lines(dump);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("Ca ", 0) == 0 || line.rfind("Hca ", 0) == 0 || line.rfind("Switch ", 0) == 0 ||
        line.rfind("Router ", 0) == 0) {
      inCa = line[0] != 'S' && line[0] != 'R';
      const auto q1 = line.find('"');
      const auto q2 = q1 == std::string::npos ? q1 : line.find('"', q1 + 1);
      node = q2 == std::string::npos ? line : line.substr(q1, q2 - q1 + 1);
      continue;
    }
    if (!inCa) continue;
    // Port line: <guid>\t[<port>]\t"<remote>"[<rport>]\t lid <n> ... <State>/<Phys>
    const auto close = line.find("]\t");
    if (close == std::string::npos || line.find('[') == std::string::npos) continue;
    if (close + 2 >= line.size() || line[close + 2] != '"') continue;  // not connected
    ++count;
    const auto open = line.find('[');
    const std::string port = line.substr(open, close - open + 1);
    int lid = 0;
    const auto lidPos = line.find(" lid ");
    if (lidPos != std::string::npos) lid = std::atoi(line.c_str() + lidPos + 5);
    const bool active = line.find("Active/") != std::string::npos;
    if (!active || lid == 0) {
      std::string stateText = trim(line.substr(line.find_last_of(" \t") + 1));
      bad.push_back(node + port + " " + stateText + " lid " + std::to_string(lid));
    }
  }
  if (caPorts != nullptr) *caPorts = count;
  return bad;
}

std::string consoleCommand(const FabricState& s, const std::string& command,
                           std::chrono::milliseconds timeout) {
  if (s.ibsim.pid == 0 || !isAlive(s.ibsim)) {
    throw SimError("fabric \"" + s.name + "\" is not up (ibsim is not running)");
  }
  const auto deadline = Clock::now() + timeout;
  FileLock lock;
  if (!lock.lockWithin(s.dir / "console.lock", timeout)) {
    throw SimError("ibsim console of \"" + s.name + "\" is busy (another command is running)");
  }
  const std::string sentinel = "# ibfabric-end-" + uniqueToken();
  std::string payload;
  std::istringstream lines(command);
  std::string line;
  while (std::getline(lines, line)) {
    line = trim(line);
    if (!line.empty()) payload += line + "\n";
  }
  payload += sentinel + "\n";

  std::uintmax_t offset = fileSize(s.ibsimLog());
  const std::uintmax_t answerStart = offset;
  const int fd = ::open(s.consoleFifo().c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    throw SimError("cannot open the console of \"" + s.name + "\": " + errnoText() +
                   (errno == ENXIO ? " (ibsim is not reading it)" : ""));
  }
  std::size_t written = 0;
  while (written < payload.size()) {
    const ssize_t n = ::write(fd, payload.data() + written, payload.size() - written);
    if (n > 0) {
      written += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR) && Clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    } else {
      const std::string why = n < 0 ? errnoText() : "timeout";
      ::close(fd);
      throw SimError("cannot write to the console of \"" + s.name + "\": " + why);
    }
  }
  ::close(fd);

  std::string carry;
  auto pause = 5ms;
  while (!logContains(s.ibsimLog(), offset, carry, sentinel)) {
    if (!isAlive(s.ibsim)) {
      throw SimError("ibsim of \"" + s.name + "\" exited: " + lastLogLine(s.ibsimLog()));
    }
    if (Clock::now() >= deadline) {
      throw SimError("no answer from the ibsim console of \"" + s.name + "\" within " +
                     secondsText(std::chrono::duration_cast<std::chrono::milliseconds>(timeout)) +
                     " s");
    }
    throwIfInterrupted();
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::milliseconds>(pause * 2, 100ms);
  }
  std::string text = readFile(s.ibsimLog(), answerStart);
  text = text.substr(0, text.find(sentinel));
  std::string answer;
  for (std::string_view rest = text;;) {
    const auto p = rest.find("sim> ");
    answer += rest.substr(0, p);
    if (p == std::string_view::npos) break;
    rest.remove_prefix(p + 5);
  }
  return trim(answer);
}

std::string consoleCommand(const std::string& name, const std::string& command,
                           std::chrono::milliseconds timeout) {
  return consoleCommand(loadUp(name), command, timeout);
}

/// Starts ibsim (and OpenSM when s.withSm) for a prepared state directory and waits until every
/// cabled HCA port is Active with a LID. `smOptions` null: keep the existing opensm.conf.
void startProcesses(FabricState& s, const StateExtras& extras, std::size_t ports,
                    const std::vector<std::string>* smOptions, Clock::time_point start,
                    Clock::time_point deadline, std::chrono::seconds timeout) {
  // ibsim's tables are fixed-size: raise them above the file's counts (defaults otherwise).
  const auto grow = [](std::size_t n, std::size_t floor) {
    return std::to_string(std::max(floor, n + n / 8 + 16));
  };
  DaemonSpec ibsim;
  ibsim.argv = {ibsimProgram(),
                "-s",
                "-N",
                grow(s.nodes, 2048),
                "-S",
                grow(s.switches, 256),
                "-P",
                grow(ports, 13312),
                s.fabricCopy().string()};
  ibsim.env = {{"IBSIM_SOCKNAME", s.sockName}};
  ibsim.cwd = s.dir;
  ibsim.stdinPath = s.consoleFifo();  // read-write: ibsim holds a writer itself, never EOF
  ibsim.logPath = s.ibsimLog();
  s.ibsim = spawnDetached(ibsim);
  saveState(s, extras);
  spdlog::info("sim {}: ibsim pid {} on {} nodes", s.name, s.ibsim.pid, s.nodes);

  // The console answers once the fabric is loaded and the simulator runs.
  const auto left = [&] {
    return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()),
                    1ms);
  };
  try {
    consoleCommand(s, "", left());
  } catch (const SimError& e) {
    if (gInterrupted != 0) throw;
    if (!isAlive(s.ibsim)) {
      throw SimError("ibsim exited during bring-up of \"" + s.name +
                     "\": " + lastLogLine(s.ibsimLog()));
    }
    throw SimError("ibsim of \"" + s.name + "\" not ready within " +
                   std::to_string(timeout.count()) + " s (" + e.what() + ")");
  }

  if (s.withSm) {
    if (smOptions != nullptr) {  // else (a restart) the fabric's opensm.conf is kept
      std::ofstream conf(s.dir / "opensm.conf");
      conf << opensmConfig(s);
      for (const auto& line : *smOptions) conf << line << "\n";
    }
    DaemonSpec sm;
    sm.argv = {opensmProgram(), "-F", (s.dir / "opensm.conf").string()};
    sm.env = clientEnv(s, s.smHost);
    sm.env["OSM_TMP_DIR"] = (s.dir / "osm-tmp").string();
    sm.env["OSM_CACHE_DIR"] = (s.dir / "osm-cache").string();
    if (!s.osmPlugin.empty()) {
      std::string path = fs::path(s.osmPlugin).parent_path().string();
      if (auto it = sm.env.find("LD_LIBRARY_PATH"); it != sm.env.end() && !it->second.empty())
        path += ":" + it->second;
      sm.env["LD_LIBRARY_PATH"] = path;
    }
    sm.cwd = s.workDir();
    sm.logPath = s.dir / "opensm.out";
    s.opensm = spawnDetached(sm);
    saveState(s, extras);
    spdlog::info("sim {}: opensm pid {} on {}", s.name, s.opensm.pid, s.smHost);

    std::uintmax_t offset = fileSize(s.opensmLog());  // a restarted OpenSM appends
    std::string carry;
    while (!logContains(s.opensmLog(), offset, carry, "SUBNET UP")) {
      if (!isAlive(s.ibsim)) {
        throw SimError("ibsim exited during bring-up of \"" + s.name +
                       "\": " + lastLogLine(s.ibsimLog()));
      }
      if (!isAlive(s.opensm)) {
        const fs::path log = fileSize(s.opensmLog()) > 0 ? s.opensmLog() : s.dir / "opensm.out";
        throw SimError("opensm exited during bring-up of \"" + s.name + "\": " + lastLogLine(log));
      }
      if (Clock::now() >= deadline) {
        throw SimError(
            "fabric \"" + s.name + "\" not up within " + std::to_string(timeout.count()) +
            " s: OpenSM never reported SUBNET UP (last log line: " + lastLogLine(s.opensmLog()) +
            ")");
      }
      throwIfInterrupted();
      std::this_thread::sleep_for(50ms);
    }
    spdlog::info(
        "sim {}: SUBNET UP after {} s", s.name,
        secondsText(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start)));

    // Verify from the simulator itself that every cabled HCA port is Active with a LID.
    while (true) {
      std::size_t caPorts = 0;
      const auto bad = inactiveCaPorts(consoleCommand(s, "Dump", left()), &caPorts);
      if (bad.empty()) break;
      if (!isAlive(s.opensm)) {
        throw SimError("opensm exited during bring-up of \"" + s.name +
                       "\": " + lastLogLine(s.opensmLog()));
      }
      if (Clock::now() >= deadline) {
        throw SimError("fabric \"" + s.name + "\" not up within " +
                       std::to_string(timeout.count()) + " s: " + std::to_string(bad.size()) +
                       " of " + std::to_string(caPorts) +
                       " HCA ports are not Active with a LID (first: " + bad.front() + ")");
      }
      throwIfInterrupted();
      std::this_thread::sleep_for(200ms);
    }
  }
}

FabricState up(const UpOptions& options) {
  validateName(options.name);
  const InterruptGuard interruptGuard;
  const auto start = Clock::now();
  const auto deadline = start + options.timeout;
  if (!fs::exists(options.fabricFile)) {
    throw SimError("fabric file " + options.fabricFile.string() + ": no such file");
  }
  for (const auto& line : options.smOptions) {
    const auto sp = line.find(' ');
    const bool keyOk = sp != std::string::npos && sp > 0 &&
                       line.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == sp;
    if (!keyOk || line.find('\n') != std::string::npos || sp + 1 >= line.size()) {
      throw SimError("bad OpenSM option \"" + line + "\" (want KEY=VALUE, e.g. sweep_interval=0)");
    }
  }
  NetFabric fabric;
  try {
    fabric = parseNetFile(options.fabricFile);
  } catch (const NetFileError& e) {
    throw SimError(e.what());
  }
  if (fabric.nodes.empty()) throw SimError(options.fabricFile.string() + ": no nodes");

  FabricState s;
  s.name = options.name;
  s.dir = simRoot() / options.name;
  s.sourceFile = fs::absolute(options.fabricFile);
  s.sockName = socketNameFor(options.name);
  s.nodes = fabric.nodes.size();
  s.switches = fabric.switchCount();
  s.cas = fabric.caCount();
  s.links = fabric.linkCount();
  s.withSm = options.withSm;
  s.routing = options.routing;
  if (!options.osmPlugin.empty()) {
    const std::string file = options.osmPlugin.filename().string();
    if (file.size() <= 6 || !file.starts_with("lib") || !file.ends_with(".so"))
      throw SimError("OpenSM plugin must be a lib<name>.so file: " + options.osmPlugin.string());
    if (!fs::is_regular_file(options.osmPlugin))
      throw SimError("no such OpenSM plugin: " + options.osmPlugin.string());
    s.osmPlugin = fs::absolute(options.osmPlugin).string();
    s.osmPluginOptions = options.osmPluginOptions;
  }
  if (options.smSweepInterval < 0) throw SimError("the SM sweep interval must be >= 0");
  s.smSweepInterval = options.smSweepInterval;
  std::vector<const NetNode*> connectedCas;
  std::size_t ports = 0;
  for (const auto& n : fabric.nodes) {
    ports += static_cast<std::size_t>(n.numPorts) + 1;
    if (n.type == NodeType::kCa && !n.ports.empty()) connectedCas.push_back(&n);
  }
  if (options.withSm) {
    if (connectedCas.empty()) {
      throw SimError(options.fabricFile.string() +
                     ": no connected HCA to run OpenSM on (use --no-sm for a switch-only fabric)");
    }
    s.smHost = connectedCas.front()->id;
  }
  // Clients may share the SM's HCA, but a separate one keeps their traffic apart from OpenSM's.
  if (!connectedCas.empty()) s.clientHost = connectedCas.back()->id;

  std::error_code ec;
  fs::create_directories(simRoot(), ec);
  if (::mkdir(s.dir.c_str(), 0755) != 0) {
    if (errno == EEXIST) {
      std::string status = "in use";
      if (auto other = readState(s.dir)) status = toString(healthOf(other->first, other->second));
      throw SimError("fabric name \"" + options.name + "\" is already in use (" + status +
                     "); pick another --name or run `ibfabric sim down --name " + options.name +
                     "`");
    }
    throw SimError("cannot create " + s.dir.string() + ": " + errnoText());
  }

  StateExtras extras;
  extras.upProcess = {::getpid(), processStartTime(::getpid()).value_or(0)};
  try {
    fs::copy_file(options.fabricFile, s.fabricCopy());
    for (const char* sub : {"work", "osm-tmp", "osm-cache", "dump", "slots"}) {
      fs::create_directories(s.dir / sub);
    }
    if (::mkfifo(s.consoleFifo().c_str(), 0600) != 0) {
      throw SimError("mkfifo " + s.consoleFifo().string() + ": " + errnoText());
    }
    s.startedAt = static_cast<std::int64_t>(std::time(nullptr));
    s.status = "starting";
    saveState(s, extras);

    startProcesses(s, extras, ports, &options.smOptions, start, deadline, options.timeout);
    s.status = "up";
    saveState(s);
    return s;
  } catch (...) {
    spdlog::info("sim {}: bring-up failed, cleaning up", s.name);
    gInterrupted = 0;
    stopAll(s);
    fs::remove_all(s.dir, ec);
    throw;
  }
}

FabricState restart(const std::string& name, std::chrono::seconds timeout) {
  const InterruptGuard interruptGuard;
  const auto start = Clock::now();
  const auto deadline = start + timeout;
  FabricState s = load(name);
  if (s.status != "up") {
    throw SimError("fabric \"" + name + "\" is " + (s.status.empty() ? "unknown" : s.status) +
                   ", not up: only a fabric that was up can be restarted");
  }
  NetFabric fabric;
  try {
    fabric = parseNetFile(s.fabricCopy());
  } catch (const NetFileError& e) {
    throw SimError(e.what());
  }
  std::size_t ports = 0;
  for (const auto& n : fabric.nodes) ports += static_cast<std::size_t>(n.numPorts) + 1;
  // OpenSM first (it hangs on exit while ibsim is gone or going), then ibsim. The fabric's other
  // clients keep running, as they would through a real simulator crash.
  bool stopped = true;
  if (s.opensm.pid != 0 && isAlive(s.opensm)) stopped &= terminateAll({s.opensm}, 5s, 3s) == 0;
  if (s.ibsim.pid != 0 && isAlive(s.ibsim)) stopped &= terminateAll({s.ibsim}, 3s, 2s) == 0;
  if (!stopped) throw SimError("the simulator of \"" + name + "\" survived SIGKILL");
  StateExtras extras;
  extras.upProcess = {::getpid(), processStartTime(::getpid()).value_or(0)};
  s.status = "starting";
  s.ibsim = {};
  s.opensm = {};
  saveState(s, extras);
  try {
    startProcesses(s, extras, ports, nullptr, start, deadline, timeout);
  } catch (...) {
    spdlog::info("sim {}: restart failed, stopping what it started", s.name);
    gInterrupted = 0;
    if (s.opensm.pid != 0) terminateAll({s.opensm}, 5s, 3s);
    if (s.ibsim.pid != 0) terminateAll({s.ibsim}, 3s, 2s);
    s.status = "up";  // stale: `sim down` cleans it up, `sim restart` may try again
    saveState(s);
    throw;
  }
  s.status = "up";
  s.startedAt = static_cast<std::int64_t>(std::time(nullptr));
  saveState(s);
  return s;
}

DownReport down(const std::string& name) {
  validateName(name);
  const fs::path dir = simRoot() / name;
  if (!fs::is_directory(dir)) {
    throw SimError("no fabric named \"" + name + "\" (looked in " + simRoot().string() + ")");
  }
  FabricState s;
  DownReport report;
  if (auto st = readState(dir)) {
    s = st->first;
    report.wasStale = healthOf(st->first, st->second) == Health::kStale;
  } else {
    report.wasStale = true;
  }
  s.name = name;
  s.dir = dir;
  if (s.sockName.empty()) s.sockName = socketNameFor(name);
  const auto [stopped, allGone] = stopAll(s);
  report.processesStopped = stopped;
  report.allGone = allGone;
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) throw SimError("cannot remove " + dir.string() + ": " + ec.message());
  if (!allGone) throw SimError("some processes of \"" + name + "\" survived SIGKILL");
  return report;
}

std::vector<FabricListing> list() {
  std::vector<FabricListing> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(simRoot(), ec)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    FabricListing l;
    if (auto st = readState(entry.path())) {
      l.state = st->first;
      l.health = healthOf(st->first, st->second);
    } else {
      l.state.name = name;
      l.state.dir = entry.path();
      l.stateReadable = false;
      l.health = Health::kStale;
    }
    out.push_back(std::move(l));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.state.name < b.state.name; });
  return out;
}

namespace {

volatile sig_atomic_t gRunChild = 0;

void forwardSignal(int sig) {
  if (gRunChild > 0) ::kill(static_cast<pid_t>(gRunChild), sig);
}

/// Removes `sys-<pid>` trees that umad2sim left in `dir` for processes that are gone.
void removeDeadSysTrees(const fs::path& dir, const std::vector<std::string>& keep) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string n = entry.path().filename().string();
    if (n.rfind("sys-", 0) != 0) continue;
    if (std::find(keep.begin(), keep.end(), n) != keep.end()) continue;
    const pid_t pid = static_cast<pid_t>(std::atoi(n.c_str() + 4));
    if (pid > 0 && processStartTime(pid)) continue;
    fs::remove_all(entry.path(), ec);
  }
}

}  // namespace

int run(const RunOptions& options) {
  if (options.argv.empty()) throw SimError("sim run: no command given (use -- CMD ARGS...)");
  FabricState s = loadUp(options.name);
  std::string host = options.host.empty() ? s.clientHost : options.host;
  if (host.empty()) throw SimError("fabric \"" + s.name + "\" has no HCA: give --host");
  if (!options.host.empty()) {
    NetFabric fabric;
    try {
      fabric = parseNetFile(s.fabricCopy());
    } catch (const NetFileError& e) {
      throw SimError(e.what());
    }
    const bool known = std::any_of(fabric.nodes.begin(), fabric.nodes.end(),
                                   [&](const auto& n) { return n.id == host || n.desc == host; });
    if (!known) throw SimError("no node \"" + host + "\" in fabric \"" + s.name + "\"");
  }
  // Absolute, since the program may start in another directory than ours.
  const std::string found = findProgram(options.argv[0]);
  if (found.empty()) throw SimError(options.argv[0] + ": program not found");
  const std::string program = fs::absolute(found).string();

  // One slot per attached client; OpenSM holds one of ibsim's ten.
  const int slots = kMaxClientsPerSimulator - (s.withSm ? 1 : 0);
  FileLock slot;
  const auto slotDeadline = Clock::now() + options.slotWait;
  while (true) {
    bool got = false;
    for (int i = 0; i < slots && !got; ++i) {
      got = slot.tryLock(s.dir / "slots" / std::to_string(i));
    }
    if (got) break;
    if (Clock::now() >= slotDeadline) {
      throw SimError("all " + std::to_string(slots) + " client slots of \"" + s.name +
                     "\" are in use (ibsim allows 10 clients)");
    }
    std::this_thread::sleep_for(100ms);
  }

  // The program runs where it was asked to, so relative paths in its arguments mean what the
  // caller meant; umad2sim's sys-<pid> tree is removed from there afterwards. Only when that
  // directory is not writable does it run in a fresh directory of its own.
  std::error_code ec;
  fs::path wanted = options.cwd ? fs::absolute(*options.cwd) : fs::current_path(ec);
  const bool ownCwd = !options.cwd && (ec || ::access(wanted.c_str(), W_OK) != 0);
  const fs::path cwd = ownCwd ? s.workDir() / ("run-" + uniqueToken()) : wanted;
  fs::create_directories(cwd, ec);
  if (::access(cwd.c_str(), W_OK) != 0) {
    throw SimError("working directory " + cwd.string() + " is not writable (umad2sim needs it)");
  }
  std::vector<std::string> before;
  if (!ownCwd) {
    for (const auto& e : fs::directory_iterator(cwd, ec)) {
      before.push_back(e.path().filename().string());
    }
  }

  const auto env = clientEnv(s, host);
  std::vector<std::string> envStrings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string_view::npos && env.contains(std::string(entry.substr(0, eq)))) continue;
    envStrings.emplace_back(entry);
  }
  for (const auto& [k, v] : env) envStrings.push_back(k + "=" + v);
  std::vector<std::string> args = options.argv;
  std::vector<char*> argvC;
  std::vector<char*> envC;
  for (auto& a : args) argvC.push_back(a.data());
  argvC.push_back(nullptr);
  for (auto& e : envStrings) envC.push_back(e.data());
  envC.push_back(nullptr);
  const std::string cwdText = cwd.string();

  const pid_t child = ::fork();
  if (child < 0) throw SimError("fork: " + errnoText());
  if (child == 0) {
    if (::chdir(cwdText.c_str()) != 0) ::_exit(127);
    ::execve(program.c_str(), argvC.data(), envC.data());
    ::_exit(127);
  }
  gRunChild = child;
  struct sigaction forward {};
  forward.sa_handler = forwardSignal;
  sigemptyset(&forward.sa_mask);
  struct sigaction old[4];
  const int forwarded[4] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  for (int i = 0; i < 4; ++i) ::sigaction(forwarded[i], &forward, &old[i]);

  int status = 0;
  bool timedOut = false;
  const auto runDeadline = Clock::now() + options.timeout;
  std::optional<Clock::time_point> termAt;
  while (true) {
    const pid_t r = ::waitpid(child, &status, WNOHANG);
    if (r == child || (r < 0 && errno != EINTR)) break;
    if (options.timeout.count() > 0 && Clock::now() >= runDeadline) {
      if (!termAt) {
        timedOut = true;
        ::kill(child, SIGTERM);
        termAt = Clock::now();
      } else if (Clock::now() - *termAt > 3s) {
        ::kill(child, SIGKILL);
      }
    }
    std::this_thread::sleep_for(10ms);
  }
  gRunChild = 0;
  for (int i = 0; i < 4; ++i) ::sigaction(forwarded[i], &old[i], nullptr);

  if (ownCwd) {
    fs::remove_all(cwd, ec);
  } else {
    removeDeadSysTrees(cwd, before);
  }
  if (timedOut) {
    throw SimError("`" + options.argv[0] + "` timed out after " +
                   std::to_string(options.timeout.count()) + " s and was killed");
  }
  return exitCodeOf(status);
}

}  // namespace ibfabric::sim
