#include "tools/ibfabric/commands.h"

namespace ibfabric::cli {
void addTopoCommands(CLI::App& app) { app.add_subcommand("topo", "Topology files (WIP)"); }
}  // namespace ibfabric::cli
