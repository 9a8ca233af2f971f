// Sweep suspects: the switches whose ports a sweep gives reason to re-read at once, so that a
// cable going down or coming back shows within a sweep or two with any subnet manager (the
// OpenSM plugin's traps are the fastest path; this one needs nothing from the SM).
//
// A sweep points at a switch when
//   - a port it polled answered last sweep and not this one: a CA port (its LID gone: the HCA's
//     cable) points at the switch at the cable's other end, a switch port at its own switch;
//   - a port's LinkDownedCounter went up (the link retrained or went down and came back): the
//     port's switch, or for a CA port the switch it is cabled to;
//   - a switch holds an end of a cable the model remembers as missing (discovery/
//     fabric_memory.h), or of a cable linked but not Active (init: the SM has not activated
//     it; its HCA end is not polled): counters cannot say a link came back, PortInfo can. At most
//     `maxRechecks` such switches per sweep, taken in turn by the sweep's sequence number, so a
//     fabric with many dead cables costs a bounded number of SMPs per sweep.
//   - in turn, as many switches a sweep as `rotationPorts` PortInfo reads pay for (by the
//     sweep's sequence number; at least one): the cheap periodic PortInfo check that finds what
//     no sweep shows — a switch-to-switch cable that breaks on no route the sweeps use (an SM that
//     reroutes at once, before a sweep reads across the dead cable), with an SM that sends no
//     traps. 256 reads: at 10,240 HCAs (896 switches of 64 ports) 4 switches a sweep, every
//     switch within 224 sweeps; a fabric of at most 256 switch ports is checked whole every sweep.
// At most `maxProbes` switches a sweep (a switch costs one PortInfo per port), the re-checks of
// what the model knows is broken first: a burst of silent ports (a switch reboot, MAD loss, an
// SM rerouting around a dead cable) fills only the rest, and what it leaves is the crawl's,
// which the crawl check guards.
// The service re-reads those switches' PortInfo (FabricService::requestPortProbe, the OSM
// plugin's probe) and publishes the edited model with link_down / link_up events; a change the
// probe cannot place (an unknown cable) is left to a crawl it requests.
//
// Pure function of its inputs; thread-safe.
#pragma once

#include <set>

#include "discovery/topology.h"
#include "telemetry/counter_sweep.h"
#include "telemetry/rates_table.h"

namespace ibfabric::api {

/// The LIDs of the switches to probe after sweep `now` (of `topology`), given the sweep before
/// it (null: none) and the rates between the two.
std::set<Lid> sweepSuspects(const Topology& topology, const telemetry::CounterSnapshot* previous,
                            const telemetry::CounterSnapshot& now,
                            const telemetry::RatesTable& rates, std::size_t maxRechecks = 8,
                            std::size_t maxProbes = 16, std::size_t rotationPorts = 256);

}  // namespace ibfabric::api
