// Sub-command registration for the `ibfabric` CLI. Each family of commands lives in its own
// file and adds itself to the CLI11 app here; main() only dispatches.
//
// Error convention: a command throws CliError (or any std::exception) with a one-line message;
// main() prints "ibfabric: error: <message>" on stderr and exits with the error's status (1 by
// default). Commands that want another exit status without a message throw CliExit.
#pragma once

#include <CLI/CLI.hpp>

#include <stdexcept>
#include <string>

namespace ibfabric {
struct CrawlOptions;
}  // namespace ibfabric

namespace ibfabric::cli {

/// Exit status of a command given input it cannot use (bad arguments, unreadable files).
inline constexpr int kExitBadInput = 2;

class CliError : public std::runtime_error {
 public:
  explicit CliError(const std::string& message, int status = 1)
      : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

/// Ends the command with `status` and nothing more printed.
struct CliExit {
  int status;
};

/// The SMP crawl options (--ca, --ca-port, --max-smps, --timeout-ms, --retries, --hops,
/// --mlnx-ext-port-info) shared by every command that crawls (crawl_options.cpp).
void addCrawlOptions(CLI::App& cmd, CrawlOptions& crawl);

void addTopoCommands(CLI::App& app);         // creates `topo`, adds `topo gen`
void addTopoCompareCommand(CLI::App& topo);  // topo compare
void addSimCommands(CLI::App& app);          // sim up | down | run | cmd | list
void addDiscoverCommand(CLI::App& app);      // discover
void addCountersCommand(CLI::App& app);      // counters
void addRoutesCommand(CLI::App& app);        // routes (routes_command.cpp)
void addPlaceCommand(CLI::App& app);         // place
void addExportCommands(CLI::App& app);       // export slurm-topology | k8s-labels | ...
void addForgetCommand(CLI::App& app);        // forget (forget_command.cpp)
void addWhatIfCommand(CLI::App& app);        // whatif (whatif_command.cpp)
void addPoolJournalCommands(CLI::App& app);  // pool journal verify | repair

}  // namespace ibfabric::cli
