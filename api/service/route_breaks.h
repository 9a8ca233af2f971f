// Route breaks: where the destinations a sweep lost lose their way, found by reading the egress
// ports of their routes by directed route along the routes themselves.
//
// When a cable breaks, the LID-routed SMPs and PMA queries routed over it are lost until the SM
// routes around it — on a 10,240-HCA fabric longer than a sweep — and the switch holding the
// broken end may itself be among the lost (its LID routed over the cable), so probing the
// switches that went silent finds nothing. The route of each lost destination from our port
// (the SM's forwarding tables, routing/routes.h) worked until the cable went: a directed route
// along its first hops reaches every switch up to the break, and the switch before the break
// reads its egress port Down.
//
// routeBreakProbes: up to `maxRoutes` lost destinations (sampled across the lost set), each
// switch hop once, the hops shared by most lost routes first, at most `maxProbes` (one SMP
// each). probeRouteBreaks sends them and returns the switches whose egress port is no longer
// Active while the model has it Active with a cable: those the service probes in full
// (FabricService::requestPortProbe), which edits the model and writes the link_down events.
//
// Pure (routeBreakProbes) or on the caller's counter source (probeRouteBreaks, the sweep
// thread).
#pragma once

#include <set>
#include <vector>

#include "api/service/counter_source.h"
#include "discovery/topology.h"
#include "routing/forwarding.h"
#include "telemetry/counter_sweep.h"

namespace ibfabric::api {

/// The LIDs sweep `now` lost: ports that answered in `previous` and not now, by the LID they
/// were polled at (a switch once), in sweep order.
std::vector<Lid> lostLids(const telemetry::CounterSnapshot* previous,
                          const telemetry::CounterSnapshot& now);

struct RouteBreakProbe {
  Guid switchGuid;  ///< whose egress port is read
  PortNum port;
  mad::DirectedPath path;  ///< from our port to that switch, along the lost routes' hops
  std::size_t routes = 0;  ///< lost routes through this hop
};

/// The hops to read for `lost` (in the tables' topology); empty when `local` (our CA port's
/// LID) is not in it.
std::vector<RouteBreakProbe> routeBreakProbes(const routing::ForwardingTables& tables, Lid local,
                                              const std::vector<Lid>& lost,
                                              std::size_t maxRoutes = 8,
                                              std::size_t maxProbes = 24);

/// Sends `probes` through `source` and returns the LIDs (in `model`) of the switches whose port
/// reads not Active while `model` has it Active and cabled. A source that cannot send SMPs, or
/// probes that get no answer, give none.
std::set<Lid> probeRouteBreaks(CounterSource& source, const Topology& model,
                               const std::vector<RouteBreakProbe>& probes);

}  // namespace ibfabric::api
