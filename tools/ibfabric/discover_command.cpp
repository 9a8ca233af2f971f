#include "tools/ibfabric/commands.h"

namespace ibfabric::cli {
void addDiscoverCommand(CLI::App& app) { app.add_subcommand("discover", "Crawl the fabric (WIP)"); }
}  // namespace ibfabric::cli
