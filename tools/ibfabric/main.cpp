// ibfabric: command-line tool (topology generator, simulated fabrics, discovery, counters).
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>

#include "api/daemon/version.h"
#include "telemetry/heap_tuning.h"
#include "tools/ibfabric/commands.h"

int main(int argc, char** argv) {
  ibfabric::telemetry::keepLargeBuffersInHeap();
  CLI::App app{"ibfabric - InfiniBand fabric manager and telemetry tool"};
  app.require_subcommand(1);
  app.set_version_flag("--version", ibfabric::versionString());
  std::string logLevel = "warn";
  app.add_option("--log-level", logLevel, "trace|debug|info|warn|error")->capture_default_str();
  app.parse_complete_callback([&] { spdlog::set_level(spdlog::level::from_str(logLevel)); });

  ibfabric::cli::addTopoCommands(app);
  ibfabric::cli::addSimCommands(app);
  ibfabric::cli::addDiscoverCommand(app);
  ibfabric::cli::addCountersCommand(app);
  ibfabric::cli::addRoutesCommand(app);
  ibfabric::cli::addPlaceCommand(app);
  ibfabric::cli::addExportCommands(app);
  ibfabric::cli::addForgetCommand(app);
  ibfabric::cli::addWhatIfCommand(app);
  ibfabric::cli::addPoolJournalCommands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const ibfabric::cli::CliExit& e) {
    return e.status;
  } catch (const ibfabric::cli::CliError& e) {
    std::fprintf(stderr, "ibfabric: error: %s\n", e.what());
    return e.status();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ibfabric: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
