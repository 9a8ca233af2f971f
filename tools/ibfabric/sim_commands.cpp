#include "tools/ibfabric/commands.h"

namespace ibfabric::cli {
void addSimCommands(CLI::App& app) { app.add_subcommand("sim", "Simulated fabrics (WIP)"); }
}  // namespace ibfabric::cli
