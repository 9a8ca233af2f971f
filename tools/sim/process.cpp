#include "tools/sim/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace ibfabric::sim {
namespace {

using Clock = std::chrono::steady_clock;

struct ProcStat {
  char state = '?';
  std::uint64_t startTime = 0;
};

std::optional<ProcStat> readStat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  // The command name is in parentheses and may contain spaces: fields start after the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  ProcStat stat;
  fields >> stat.state;
  std::string skip;
  for (int field = 4; field < 22; ++field) fields >> skip;  // ppid .. itrealvalue
  fields >> stat.startTime;
  if (!fields) return std::nullopt;
  return stat;
}

/// Environment for execve: the caller's, with `overrides` replacing or adding entries.
std::vector<std::string> mergedEnv(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string_view::npos && overrides.contains(std::string(entry.substr(0, eq)))) {
      continue;
    }
    out.emplace_back(entry);
  }
  for (const auto& [key, value] : overrides) out.push_back(key + "=" + value);
  return out;
}

std::vector<char*> cStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void writeAll(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

bool waitGone(const ProcRef& proc, std::chrono::milliseconds wait) {
  const auto deadline = Clock::now() + wait;
  while (isAlive(proc)) {
    if (Clock::now() >= deadline) return false;
    // Reap it ourselves when it is our child (otherwise it stays a zombie we treat as gone).
    ::waitpid(proc.pid, nullptr, WNOHANG);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace

std::optional<std::uint64_t> processStartTime(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  const auto stat = readStat(pid);
  if (!stat || stat->state == 'Z' || stat->state == 'X') return std::nullopt;
  return stat->startTime;
}

bool isAlive(const ProcRef& proc) {
  const auto start = processStartTime(proc.pid);
  return start && (proc.startTime == 0 || *start == proc.startTime);
}

std::string findProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  // Daemons such as opensm live in sbin, which a user's PATH may lack.
  for (const char* sbin : {"/usr/sbin/", "/sbin/", "/usr/local/sbin/"}) {
    const std::string candidate = sbin + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

int exitCodeOf(int waitStatus) {
  if (WIFEXITED(waitStatus)) return WEXITSTATUS(waitStatus);
  if (WIFSIGNALED(waitStatus)) return 128 + WTERMSIG(waitStatus);
  return 255;
}

ProcRef spawnDetached(const DaemonSpec& spec) {
  if (spec.argv.empty()) throw std::runtime_error("spawnDetached: empty argv");
  const std::string program = findProgram(spec.argv[0]);
  if (program.empty()) throw std::runtime_error(spec.argv[0] + ": program not found in PATH");
  std::vector<std::string> args = spec.argv;
  std::vector<std::string> env = mergedEnv(spec.env);
  auto argvC = cStrings(args);
  auto envC = cStrings(env);
  const std::string cwd = spec.cwd.string();
  const std::string stdinPath = spec.stdinPath.empty() ? "/dev/null" : spec.stdinPath.string();
  const std::string logPath = spec.logPath.empty() ? "/dev/null" : spec.logPath.string();

  int pidPipe[2];
  int errPipe[2];
  if (::pipe2(pidPipe, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe: " + std::string(strerror(errno)));
  if (::pipe2(errPipe, O_CLOEXEC) != 0) {
    ::close(pidPipe[0]);
    ::close(pidPipe[1]);
    throw std::runtime_error("pipe: " + std::string(strerror(errno)));
  }
  const pid_t first = ::fork();
  if (first < 0) throw std::runtime_error("fork: " + std::string(strerror(errno)));
  if (first == 0) {
    ::setsid();
    const pid_t second = ::fork();
    if (second == 0) {
      // The daemon. Only async-signal-safe calls from here to execve.
      int err = 0;
      const int in = ::open(stdinPath.c_str(), O_RDWR);
      const int log = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (in < 0 || log < 0) err = errno;
      if (err == 0 && (::dup2(in, 0) < 0 || ::dup2(log, 1) < 0 || ::dup2(log, 2) < 0)) err = errno;
      if (err == 0 && !cwd.empty() && ::chdir(cwd.c_str()) != 0) err = errno;
      if (err == 0) {
        ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);  // keeps errPipe open until execve succeeds
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::signal(SIGPIPE, SIG_DFL);
        ::execve(program.c_str(), argvC.data(), envC.data());
        err = errno;
      }
      writeAll(errPipe[1], &err, sizeof err);
      ::_exit(127);
    }
    writeAll(pidPipe[1], &second, sizeof second);
    ::_exit(second < 0 ? 1 : 0);
  }
  ::close(pidPipe[1]);
  ::close(errPipe[1]);
  int status = 0;
  while (::waitpid(first, &status, 0) < 0 && errno == EINTR) {
  }
  pid_t daemon = -1;
  if (::read(pidPipe[0], &daemon, sizeof daemon) != sizeof daemon) daemon = -1;
  ::close(pidPipe[0]);
  int execErr = 0;
  ssize_t n;
  while ((n = ::read(errPipe[0], &execErr, sizeof execErr)) < 0 && errno == EINTR) {
  }
  ::close(errPipe[0]);
  if (daemon <= 0) throw std::runtime_error("cannot fork " + spec.argv[0]);
  if (n == sizeof execErr) {
    throw std::runtime_error("cannot start " + spec.argv[0] + ": " + strerror(execErr));
  }
  ProcRef ref{daemon, 0};
  // A start time of 0 (process already gone) makes isAlive() compare nothing; keep the pid
  // so that callers still see it as dead.
  if (auto start = processStartTime(daemon)) ref.startTime = *start;
  return ref;
}

bool terminate(const ProcRef& proc, std::chrono::milliseconds termWait,
               std::chrono::milliseconds killWait) {
  if (!isAlive(proc)) return true;
  ::kill(proc.pid, SIGTERM);
  if (waitGone(proc, termWait)) return true;
  ::kill(proc.pid, SIGKILL);
  return waitGone(proc, killWait);
}

std::vector<pid_t> processesWithEnv(std::string_view key, std::string_view value) {
  std::vector<pid_t> out;
  std::string wanted(key);
  wanted += '=';
  wanted += value;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  const pid_t self = ::getpid();
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == self) continue;
    std::ifstream in(std::string("/proc/") + entry->d_name + "/environ", std::ios::binary);
    if (!in) continue;
    std::string item;
    while (std::getline(in, item, '\0')) {
      if (item == wanted) {
        if (processStartTime(static_cast<pid_t>(pid))) out.push_back(static_cast<pid_t>(pid));
        break;
      }
    }
  }
  ::closedir(proc);
  return out;
}

CapturedRun runCaptured(const std::vector<std::string>& argv, const CaptureOptions& options) {
  if (argv.empty()) throw std::runtime_error("runCaptured: empty argv");
  const std::string program = findProgram(argv[0]);
  CapturedRun result;
  if (program.empty()) {
    result.exitCode = 127;
    result.err = argv[0] + ": program not found\n";
    return result;
  }
  std::vector<std::string> args = argv;
  std::vector<std::string> env = mergedEnv(options.env);
  auto argvC = cStrings(args);
  auto envC = cStrings(env);
  const std::string cwd = options.cwd.string();

  int outPipe[2];
  int errPipe[2];
  if (::pipe2(outPipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  if (::pipe2(errPipe, O_CLOEXEC) != 0) {
    ::close(outPipe[0]);
    ::close(outPipe[1]);
    throw std::runtime_error("pipe failed");
  }
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("fork: " + std::string(strerror(errno)));
  if (child == 0) {
    ::setpgid(0, 0);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(outPipe[1], 1);
    ::dup2(errPipe[1], 2);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
      static const char kMsg[] = "runCaptured: cannot chdir\n";
      writeAll(2, kMsg, sizeof kMsg - 1);
      ::_exit(127);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(program.c_str(), argvC.data(), envC.data());
    static const char kMsg[] = "runCaptured: exec failed\n";
    writeAll(2, kMsg, sizeof kMsg - 1);
    ::_exit(127);
  }
  ::setpgid(child, child);  // both sides, so the group exists before any kill
  ::close(outPipe[1]);
  ::close(errPipe[1]);

  const auto start = Clock::now();
  const auto deadline = start + options.timeout;
  std::optional<Clock::time_point> exitedAt;
  std::optional<Clock::time_point> termSentAt;
  bool killed = false;
  int status = 0;
  pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open = 2;
  char buf[65536];
  while (true) {
    if (!exitedAt) {
      const pid_t r = ::waitpid(child, &status, WNOHANG);
      if (r == child) exitedAt = Clock::now();
    }
    const auto now = Clock::now();
    if (exitedAt && (open == 0 || now - *exitedAt > std::chrono::seconds(1))) break;
    if (!exitedAt && now >= deadline) {
      if (!termSentAt) {
        result.timedOut = true;
        ::kill(-child, SIGTERM);
        termSentAt = now;
      } else if (!killed && now - *termSentAt > std::chrono::seconds(3)) {
        ::kill(-child, SIGKILL);
        killed = true;
      }
    }
    if (open == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    const int ready = ::poll(fds, 2, 20);
    if (ready <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  for (auto& fd : fds) {
    if (fd.fd >= 0) ::close(fd.fd);
  }
  result.exitCode = result.timedOut ? 124 : exitCodeOf(status);
  return result;
}

}  // namespace ibfabric::sim
