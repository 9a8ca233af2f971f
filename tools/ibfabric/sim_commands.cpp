// `ibfabric sim up | down | run | cmd | list | env`: simulated fabrics (ibsim + OpenSM).
// The logic lives in tools/sim (ibfabric::sim); this file only maps options and output.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "tools/ibfabric/commands.h"
#include "tools/sim/harness.h"

namespace ibfabric::cli {
namespace {

using Clock = std::chrono::steady_clock;

/// Runs `body`, turning harness errors into the CLI's one-line errors.
template <typename F>
void guarded(F&& body) {
  try {
    body();
  } catch (const sim::SimError& e) {
    throw CliError(e.what());
  }
}

std::string shellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                        "0123456789_-./:=,+@%") == std::string::npos) {
    return s;
  }
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

void printEnv(const sim::FabricState& st, const std::string& host, const char* indent) {
  for (const auto& [k, v] : sim::clientEnv(st, host)) {
    if (k == "ASAN_OPTIONS") continue;  // only matters for sanitized programs
    std::printf("%sexport %s=%s\n", indent, k.c_str(), shellQuote(v).c_str());
  }
}

std::string localTime(std::int64_t t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

void addUp(CLI::App& simApp) {
  struct Opts {
    std::string file, name, routing = "ftree";
    std::string osmPlugin, osmPluginOptions;
    int smSweepInterval = 0;
    int timeout = 180;
    bool noSm = false;
    std::vector<std::string> smOptions;
  };
  auto o = std::make_shared<Opts>();
  auto* up = simApp.add_subcommand("up",
                                   "Start ibsim + OpenSM on a fabric file; returns when the "
                                   "subnet is up");
  up->add_option("fabric", o->file, "Fabric file (ibnetdiscover/ibsim format)")->required();
  up->add_option("--name", o->name, "Name of this fabric (unique per IBFABRIC_SIM_DIR)")
      ->required();
  up->add_option("--timeout", o->timeout, "Seconds to wait for the subnet to come up")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  up->add_flag("--no-sm", o->noSm, "Start ibsim only (no OpenSM; ports stay Init without LIDs)");
  up->add_option("--routing", o->routing, "OpenSM routing engine")->capture_default_str();
  up->add_option("--sm-option", o->smOptions,
                 "Extra OpenSM option KEY=VALUE for opensm.conf (repeatable), e.g. "
                 "sweep_on_trap=FALSE");
  up->add_option("--osm-plugin", o->osmPlugin,
                 "Load this OpenSM event plugin (lib<name>.so), e.g. build/libibfabric_osm.so");
  up->add_option("--osm-plugin-options", o->osmPluginOptions,
                 "OpenSM event_plugin_options (for libibfabric_osm.so: the daemon's socket)");
  up->add_option("--sm-sweep-interval", o->smSweepInterval,
                 "OpenSM sweep_interval in seconds (default: OpenSM's, 10)")
      ->check(CLI::NonNegativeNumber);
  up->callback([o] {
    guarded([&] {
      const auto start = Clock::now();
      sim::UpOptions opts;
      opts.fabricFile = o->file;
      opts.name = o->name;
      opts.timeout = std::chrono::seconds(o->timeout);
      opts.withSm = !o->noSm;
      opts.routing = o->routing;
      for (std::string kv : o->smOptions) {
        if (auto eq = kv.find('='); eq != std::string::npos) kv[eq] = ' ';
        opts.smOptions.push_back(kv);  // sim::up rejects malformed ones
      }
      opts.osmPlugin = o->osmPlugin;
      opts.osmPluginOptions = o->osmPluginOptions;
      opts.smSweepInterval = o->smSweepInterval;
      const auto st = sim::up(opts);
      const double secs = std::chrono::duration<double>(Clock::now() - start).count();
      std::printf("fabric \"%s\" is up in %.1f s: %zu nodes (%zu switches, %zu HCAs), %zu links",
                  st.name.c_str(), secs, st.nodes, st.switches, st.cas, st.links);
      if (st.withSm) {
        std::printf("; OpenSM (%s) on \"%s\"\n", st.routing.c_str(), st.smHost.c_str());
      } else {
        std::printf("; no SM\n");
      }
      std::printf("state: %s\n", st.dir.c_str());
      std::printf("run programs on it:\n  ibfabric sim run --name %s [--host HCA] -- CMD ARGS...\n",
                  shellQuote(st.name).c_str());
      if (!st.clientHost.empty()) {
        std::printf("or, from a writable working directory (umad2sim creates ./sys-<pid>):\n");
        printEnv(st, st.clientHost, "  ");
      }
      std::printf("console: ibfabric sim cmd --name %s 'Unlink \"node\"[port]'\n",
                  shellQuote(st.name).c_str());
      std::printf("stop:    ibfabric sim down --name %s\n", shellQuote(st.name).c_str());
      std::fflush(stdout);
    });
  });
}

void addDown(CLI::App& simApp) {
  auto name = std::make_shared<std::string>();
  auto* down = simApp.add_subcommand("down",
                                     "Stop a fabric (OpenSM, clients, ibsim) and remove "
                                     "its state");
  down->add_option("--name", *name, "Fabric name")->required();
  down->callback([name] {
    guarded([&] {
      const auto start = Clock::now();
      const auto report = sim::down(*name);
      const double secs = std::chrono::duration<double>(Clock::now() - start).count();
      std::printf("fabric \"%s\" %s in %.1f s (%zu processes stopped)\n", name->c_str(),
                  report.wasStale ? "was stale; cleaned up" : "is down", secs,
                  report.processesStopped);
    });
  });
}

void addRestart(CLI::App& simApp) {
  auto name = std::make_shared<std::string>();
  auto timeout = std::make_shared<int>(180);
  auto* restart = simApp.add_subcommand(
      "restart",
      "Restart a fabric's ibsim and OpenSM in place (same socket name; clients keep running)");
  restart->add_option("--name", *name, "Fabric name")->required();
  restart->add_option("--timeout", *timeout, "Seconds to wait for the subnet (default 180)")
      ->check(CLI::PositiveNumber);
  restart->callback([name, timeout] {
    guarded([&] {
      const auto start = Clock::now();
      const auto st = sim::restart(*name, std::chrono::seconds(*timeout));
      const double secs = std::chrono::duration<double>(Clock::now() - start).count();
      std::printf("fabric \"%s\" restarted in %.1f s (ibsim pid %d%s)\n", st.name.c_str(), secs,
                  st.ibsim.pid,
                  st.withSm ? (", opensm pid " + std::to_string(st.opensm.pid)).c_str() : "");
    });
  });
}

void addRun(CLI::App& simApp) {
  struct Opts {
    std::string name, host, cwd;
    int timeout = 0;
    std::vector<std::string> argv;
  };
  auto o = std::make_shared<Opts>();
  auto* run = simApp.add_subcommand(
      "run", "Run a program attached to a fabric (umad2sim); its exit status is passed through");
  run->add_option("--name", o->name, "Fabric name")->required();
  run->add_option("--host", o->host,
                  "Node (id or description) the program runs on; default: an HCA other than "
                  "OpenSM's");
  run->add_option("--timeout", o->timeout, "Kill the program after this many seconds (0 = never)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--cwd", o->cwd,
                  "Working directory (default: the current one if writable, else a fresh one in "
                  "the state dir); umad2sim's sys-<pid> tree is removed afterwards");
  run->add_option("command", o->argv, "Program and arguments (after --)")->required();
  run->callback([o] {
    int status = 0;
    guarded([&] {
      sim::RunOptions opts;
      opts.name = o->name;
      opts.host = o->host;
      opts.argv = o->argv;
      opts.timeout = std::chrono::seconds(o->timeout);
      if (!o->cwd.empty()) opts.cwd = o->cwd;
      std::fflush(stdout);
      status = sim::run(opts);
    });
    if (status != 0) throw CliExit{status};
  });
}

void addCmd(CLI::App& simApp) {
  struct Opts {
    std::string name, command;
    int timeout = 30;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = simApp.add_subcommand("cmd",
                                    "Send a command to ibsim's console and print its "
                                    "answer");
  cmd->add_option("--name", o->name, "Fabric name")->required();
  cmd->add_option("--timeout", o->timeout, "Seconds to wait for the answer")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("command", o->command, "Console command, e.g. 'Unlink \"leaf1\"[3]'")->required();
  cmd->callback([o] {
    guarded([&] {
      const std::string answer =
          sim::consoleCommand(o->name, o->command, std::chrono::seconds(o->timeout));
      if (!answer.empty()) std::printf("%s\n", answer.c_str());
      std::fflush(stdout);
      // ibsim answers mistakes with a message and carries on: make them fail the command.
      for (const char* failure : {"unknown - skipped", "not found", "bad port", "can't"}) {
        const auto pos = answer.find(failure);
        if (pos == std::string::npos) continue;
        const auto b = answer.rfind('\n', pos);
        const auto e = answer.find('\n', pos);
        std::string line = answer.substr(b == std::string::npos ? 0 : b + 1,
                                         e == std::string::npos ? std::string::npos : e - b - 1);
        if (!line.empty() && line[0] == '#') line = line.substr(line.find_first_not_of("# "));
        throw CliError("ibsim: " + line);
      }
    });
  });
}

void addList(CLI::App& simApp) {
  auto* list = simApp.add_subcommand("list", "Show the fabrics under IBFABRIC_SIM_DIR");
  list->callback([] {
    guarded([] {
      const auto fabrics = sim::list();
      if (fabrics.empty()) {
        std::printf("no fabrics under %s\n", sim::simRoot().c_str());
        return;
      }
      std::printf("%-20s %-9s %7s %8s %8s  %-19s  %s\n", "NAME", "STATUS", "NODES", "IBSIM",
                  "OPENSM", "UP SINCE", "FILE");
      for (const auto& f : fabrics) {
        const auto& s = f.state;
        const std::string status = f.stateReadable ? sim::toString(f.health) : "broken";
        std::printf("%-20s %-9s %7zu %8d %8s  %-19s  %s\n", s.name.c_str(), status.c_str(), s.nodes,
                    s.ibsim.pid, s.withSm ? std::to_string(s.opensm.pid).c_str() : "-",
                    s.startedAt != 0 ? localTime(s.startedAt).c_str() : "-", s.sourceFile.c_str());
      }
    });
  });
}

void addEnv(CLI::App& simApp) {
  struct Opts {
    std::string name, host;
  };
  auto o = std::make_shared<Opts>();
  auto* env = simApp.add_subcommand("env",
                                    "Print the environment (export lines) a program needs "
                                    "to attach to a fabric");
  env->add_option("--name", o->name, "Fabric name")->required();
  env->add_option("--host", o->host, "Node the program runs on (default: the fabric's client HCA)");
  env->callback([o] {
    guarded([&] {
      const auto st = sim::loadUp(o->name);
      printEnv(st, o->host.empty() ? st.clientHost : o->host, "");
    });
  });
}

}  // namespace

void addSimCommands(CLI::App& app) {
  auto* simApp = app.add_subcommand("sim",
                                    "Simulated fabrics: ibsim + OpenSM (state under "
                                    "$IBFABRIC_SIM_DIR, default /tmp/ibfabric-sim)");
  simApp->require_subcommand(1);
  addUp(*simApp);
  addDown(*simApp);
  addRestart(*simApp);
  addRun(*simApp);
  addCmd(*simApp);
  addList(*simApp);
  addEnv(*simApp);
}

}  // namespace ibfabric::cli
