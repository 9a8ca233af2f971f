// ibfabric-federate: one REST view over several ibfabricd daemons, one per InfiniBand subnet
// (docs/scale-out.md "Federation"). It merges their views (health, fabric, hosts, links,
// events, exports, pool) and routes placements and pool allocations to the one subnet that
// takes the job. No state of its own beyond short caches: start as many as you like.
//
//   ibfabric-federate --config federation.yaml [--listen HOST:PORT]
//
// Signals: SIGTERM/SIGINT stop it.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <thread>

#include "api/federation/federation_config.h"
#include "api/federation/federation_server.h"

int main(int argc, char** argv) {
  using namespace ibfabric::api::federation;
  CLI::App app{"ibfabric-federate: several ibfabricd subnets behind one REST API"};
  std::string configPath, listen, logLevel;
  std::vector<std::string> members;
  app.add_option("-c,--config", configPath, "YAML/JSON configuration (members, timeouts)");
  app.add_option("--listen", listen, "HOST:PORT to serve on (port 0: any free port)");
  app.add_option("--member", members,
                 "NAME=URL of a member ibfabricd (repeatable; adds to the config's members)");
  app.add_option("--log-level", logLevel, "trace|debug|info|warn|error|critical|off");
  CLI11_PARSE(app, argc, argv);

  FederationConfig config;
  try {
    if (!configPath.empty()) config = loadFederationConfigFile(configPath);
    for (const auto& m : members) {
      const auto eq = m.find('=');
      MemberConfig mc;
      if (eq == std::string::npos || m.compare(0, 4, "http") == 0) {
        mc.url = m;
      } else {
        mc.name = m.substr(0, eq);
        mc.url = m.substr(eq + 1);
      }
      config.members.push_back(mc);
    }
    if (!listen.empty()) std::tie(config.listenHost, config.listenPort) = parseListen(listen);
    if (!logLevel.empty()) config.logLevel = logLevel;
    config.validate();
  } catch (const FederationConfigError& e) {
    std::fprintf(stderr, "ibfabric-federate: %s\n", e.what());
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(config.logLevel));

  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  FederationServer server(config);
  const int port = server.bind(config.listenHost, config.listenPort);
  if (port < 0) {
    spdlog::critical("cannot listen on {}:{}", config.listenHost, config.listenPort);
    return 1;
  }
  std::printf("ibfabric-federate listening on http://%s:%d\n", config.listenHost.c_str(), port);
  std::fflush(stdout);
  spdlog::info("ibfabric-federate listening on {}:{} ({} member(s))", config.listenHost, port,
               config.members.size());
  std::thread serving([&server] { server.run(); });
  // The first look at every member; joined before the server goes (it may wait a member's
  // timeout when the signal comes early).
  std::thread probe([&server] { server.probeMembers(); });
  int sig = 0;
  while (sigwait(&signals, &sig) != 0) {
  }
  spdlog::info("signal {}: shutting down", sig);
  server.stop();
  serving.join();
  probe.join();
  return 0;
}
