#include "tools/ibfabric/place_local.h"

#include <chrono>
#include <map>
#include <thread>

#include "routing/lft_reader.h"
#include "routing/link_load.h"
#include "routing/placement_engine.h"
#include "telemetry/clock.h"
#include "telemetry/counter_history.h"
#include "telemetry/counter_sweep.h"
#include "telemetry/link_health_eval.h"
#include "telemetry/mad_engine.h"
#include "telemetry/port_rates.h"
#include "telemetry/rates_table.h"
#include "telemetry/umad_transport.h"
#include "tools/ibfabric/commands.h"

namespace ibfabric::cli {

routing::PlacementAnswer placeLocally(const CrawlOptions& crawl, double intervalSeconds,
                                      const routing::PlacementRequest& request) {
  using namespace ibfabric::telemetry;
  auto source = makeSmpCrawler(crawl);
  TopologyPtr topo;
  try {
    topo = source->discover();
  } catch (const CrawlError& e) {
    throw CliError(e.what());
  }
  mad::UmadTransport::Options to;
  to.caName = crawl.ca;
  to.port = crawl.caPort;
  mad::UmadTransport transport(to);
  std::string error;
  if (!transport.open(error)) throw CliError("cannot open umad: " + error);
  mad::SteadyClock clock;
  mad::MadEngineOptions eo;
  eo.window = 64;
  eo.timeout = std::chrono::milliseconds(200);
  eo.retries = 3;
  mad::MadEngine engine(transport, clock, eo);

  routing::LftReader reader(engine, clock);
  routing::ForwardingTablesPtr tables = reader.read(topo);
  if (tables->switchesWithTables() == 0) {
    throw CliError("no switch forwarding table could be read" +
                   (tables->failures.empty() ? std::string() : ": " + tables->failures.front()));
  }

  CounterSweeper sweeper(engine, clock, SweepOptions{});
  sweeper.setTopology(topo);
  CounterHistory history(4);
  auto first = sweeper.sweep();
  history.add(*first);
  std::this_thread::sleep_for(std::chrono::duration<double>(intervalSeconds));
  auto second = sweeper.sweep();
  history.add(*second);
  const RatesTable rates = computeRates(*first, *second);
  HealthThresholds ht = HealthThresholds::defaults();
  std::map<PortKey, PortWindow> windows;
  for (const auto& s : second->ports) {
    if (auto w = history.window(s.key, ht.errorWindow, ht.flapWindow)) windows[s.key] = *w;
  }
  auto health = evaluateLinkHealth(
      *topo,
      [&](PortKey k) -> const PortWindow* {
        auto it = windows.find(k);
        return it == windows.end() ? nullptr : &it->second;
      },
      ht);
  auto load = std::make_shared<const routing::LinkLoadModel>(
      routing::LinkLoadModel::fromSweep(topo, &rates, &health, nullptr));
  routing::PlacementInput input{topo, tables, load};
  return routing::place(input, request);
}

}  // namespace ibfabric::cli
