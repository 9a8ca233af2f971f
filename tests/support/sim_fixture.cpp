#include "tests/support/sim_fixture.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <stdexcept>

#include "tools/sim/harness.h"
#include "tools/sim/process.h"

namespace ibfabric::testing {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string uniqueFabricName(std::string_view tag) {
  static std::atomic<int> counter{0};
  std::string name = "t" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-";
  std::string t;
  for (char c : tag) {
    t += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  }
  return name + t.substr(0, 40 - std::min<std::size_t>(name.size(), 40));
}

std::vector<pid_t> fabricProcesses(const std::string& name) {
  return sim::processesWithEnv("IBSIM_SOCKNAME", sim::socketNameFor(name));
}

fs::path fabricStateDir(const std::string& name) { return sim::simRoot() / name; }

std::string fatTreeText(std::string_view prefix, int spines, int leaves, int hostsPerLeaf) {
  const std::string p(prefix);
  std::string text = "# two-level fat tree: " + std::to_string(spines) + " spines, " +
                     std::to_string(leaves) + " leaves, " + std::to_string(hostsPerLeaf) +
                     " hosts per leaf\n\n";
  const auto quoted = [](const std::string& id, int port) {
    return "\"" + id + "\"[" + std::to_string(port) + "]";
  };
  for (int l = 1; l <= leaves; ++l) {
    text += "Switch " + std::to_string(hostsPerLeaf + spines) + " \"" + p + "leaf" +
            std::to_string(l) + "\"\n";
    for (int h = 1; h <= hostsPerLeaf; ++h) {
      text += "[" + std::to_string(h) + "] " +
              quoted(p + "host" + std::to_string(l) + "-" + std::to_string(h), 1) + "\n";
    }
    for (int s = 1; s <= spines; ++s) {
      text += "[" + std::to_string(hostsPerLeaf + s) + "] " +
              quoted(p + "spine" + std::to_string(s), l) + "\n";
    }
    text += "\n";
  }
  for (int s = 1; s <= spines; ++s) {
    text += "Switch " + std::to_string(leaves) + " \"" + p + "spine" + std::to_string(s) + "\"\n";
    for (int l = 1; l <= leaves; ++l) {
      text += "[" + std::to_string(l) + "] " +
              quoted(p + "leaf" + std::to_string(l), hostsPerLeaf + s) + "\n";
    }
    text += "\n";
  }
  for (int l = 1; l <= leaves; ++l) {
    for (int h = 1; h <= hostsPerLeaf; ++h) {
      text += "Hca 1 \"" + p + "host" + std::to_string(l) + "-" + std::to_string(h) + "\"\n[1] " +
              quoted(p + "leaf" + std::to_string(l), h) + "\n\n";
    }
  }
  return text;
}

void reapAbandonedFabrics() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(sim::simRoot(), ec)) {
      // "t<pid>-<n>-<tag>"
      const std::string name = entry.path().filename().string();
      if (name.size() < 4 || name[0] != 't') continue;
      const auto dash = name.find('-');
      if (dash == std::string::npos || dash == 1 ||
          name.find_first_not_of("0123456789", 1) != dash) {
        continue;
      }
      const pid_t owner = static_cast<pid_t>(std::stol(name.substr(1, dash - 1)));
      if (owner == ::getpid() || ::kill(owner, 0) == 0 || errno != ESRCH) continue;
      std::fprintf(stderr, "[sim] taking down abandoned fabric %s\n", name.c_str());
      runCli({"sim", "down", "--name", name}, 60s);
    }
  });
}

SimFabric::SimFabric(fs::path netFile, std::string_view tag)
    : SimFabric(std::move(netFile), tag, Options{}) {}

SimFabric::SimFabric(fs::path netFile, std::string_view tag, Options options)
    : netFile_(std::move(netFile)), name_(uniqueFabricName(tag)) {
  reapAbandonedFabrics();
  std::vector<std::string> args{"sim",
                                "up",
                                netFile_.string(),
                                "--name",
                                name_,
                                "--timeout",
                                std::to_string(options.upTimeout.count())};
  args.insert(args.end(), options.upArgs.begin(), options.upArgs.end());
  up_ = runCli(args, options.upTimeout + 30s);
  if (up_.exitCode != 0) {
    // `sim up` cleans up after itself; a killed one may not have.
    runCli({"sim", "down", "--name", name_}, 60s);
    down_ = true;
    throw std::runtime_error("sim up " + netFile_.string() + " failed: " + up_.describe());
  }
}

SimFabric::~SimFabric() {
  const auto r = down();
  if (r.exitCode != 0) {
    std::fprintf(stderr, "[sim] sim down %s failed: %s\n", name_.c_str(), r.describe().c_str());
  }
}

ProcessResult SimFabric::run(const std::vector<std::string>& argv,
                             std::chrono::milliseconds timeout, const std::string& host) const {
  std::vector<std::string> args{"sim", "run", "--name", name_};
  if (!host.empty()) {
    args.push_back("--host");
    args.push_back(host);
  }
  args.push_back("--");
  args.insert(args.end(), argv.begin(), argv.end());
  return runCli(args, timeout);
}

ProcessResult SimFabric::cmd(const std::string& command, std::chrono::milliseconds timeout) const {
  return runCli({"sim", "cmd", "--name", name_, command}, timeout);
}

ProcessResult SimFabric::restart(std::chrono::milliseconds timeout) const {
  const auto seconds = std::max<long>(1, std::chrono::ceil<std::chrono::seconds>(timeout).count());
  return runCli({"sim", "restart", "--name", name_, "--timeout", std::to_string(seconds)},
                timeout + 30s);
}

ProcessResult SimFabric::down() {
  if (down_) return {0, false, "", ""};
  down_ = true;
  return runCli({"sim", "down", "--name", name_}, 120s);
}

pid_t processNamed(const SimFabric& fabric, const std::string& comm) {
  for (pid_t p : fabricProcesses(fabric.name())) {
    std::ifstream in("/proc/" + std::to_string(p) + "/comm");
    std::string name;
    std::getline(in, name);
    if (name == comm) return p;
  }
  return -1;
}

}  // namespace ibfabric::testing
