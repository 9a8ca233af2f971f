#include "tools/ibfabric/commands.h"

namespace ibfabric::cli {
void addTopoCompareCommand(CLI::App& topo) {
  topo.add_subcommand("compare", "Compare the live fabric to an expected one (WIP)");
}
}  // namespace ibfabric::cli
