// ibfabricd: the fabric manager daemon. The REST/Prometheus service arrives with the daemon
// issue; for now it validates its flags and reports its version.
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdio>

#include "api/version.h"

int main(int argc, char** argv) {
  CLI::App app{"ibfabricd - InfiniBand fabric manager and telemetry daemon"};
  bool version = false;
  app.add_flag("--version", version, "Print the version and exit");
  CLI11_PARSE(app, argc, argv);
  if (version) {
    std::printf("ibfabricd %s\n", ibfabric::versionString());
    return 0;
  }
  spdlog::error("ibfabricd: the daemon is not implemented yet (see the daemon issue)");
  return 2;
}
