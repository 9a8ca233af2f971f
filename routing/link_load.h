// Link load: per directed link of one topology snapshot, its capacity, smoothed utilization and
// congestion, health, and the residual capacity a new job could still use.
//
// A directed link is a cable used in one direction: `DirectedLinkId = 2 * link + dir`, where
// dir 0 means the link's `a` end transmits (a -> b, i.e. upwards in a fat tree) and dir 1 means
// `b` transmits. Utilization and congestion of a direction are those of its transmitting port
// (PortRates tx utilization and XmitWait congestion; when the transmitting port has no rates,
// the receiving port's rx utilization stands in), smoothed over sweeps by an exponentially
// weighted moving average. Health comes from telemetry's LinkHealthReport (one state for both
// directions); a link whose port is not Active in the topology is down.
//
// LinkLoadModel is a plain value: the daemon builds one per sweep from its state, tests and
// benches construct or edit one directly. Thread-safe to read; not to modify concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "discovery/topology.h"
#include "telemetry/counter_sweep.h"
#include "telemetry/link_health_eval.h"
#include "telemetry/port_rates.h"
#include "telemetry/rates_table.h"

namespace ibfabric::routing {

using DirectedLinkId = std::uint32_t;
constexpr DirectedLinkId directedLink(std::uint32_t link, bool fromB) {
  return link * 2 + (fromB ? 1 : 0);
}
constexpr std::uint32_t linkOf(DirectedLinkId d) { return d / 2; }
constexpr bool fromB(DirectedLinkId d) { return (d & 1u) != 0; }

struct DirectedLoad {
  double capacityBytesPerSecond = 0.0;  ///< link data rate (0 when the link is not up)
  double utilization = 0.0;             ///< smoothed, [0, 1]
  double congestion = 0.0;              ///< smoothed XmitWait ratio, [0, 1]
  telemetry::LinkState health = telemetry::LinkState::kOk;
  /// What a new job could use: capacity * (1 - utilization); 0 for a down or faulty link.
  double residualBytesPerSecond() const;
};

struct LinkLoadOptions {
  /// Weight of the newest sweep in the moving average (1 = no smoothing).
  double alpha = 0.5;
};

class LinkLoadModel {
 public:
  LinkLoadModel() = default;
  /// Every link idle and healthy (down when a port is not Active), capacity from its rate.
  explicit LinkLoadModel(TopologyPtr topology);

  /// The model after one more sweep: `rates` by port, `health` reports matched to links by
  /// their end ports (so they may come from another snapshot of the same fabric). `previous`, when
  /// given, carries the moving average over (matched by transmitting port, so it survives a new
  /// topology snapshot).
  static LinkLoadModel fromSweep(TopologyPtr topology, const telemetry::RatesTable* rates,
                                 const std::vector<telemetry::LinkHealthReport>* health,
                                 const LinkLoadModel* previous,
                                 const LinkLoadOptions& options = {});

  const TopologyPtr& topology() const { return topology_; }
  std::size_t size() const { return loads_.size(); }
  const DirectedLoad& at(DirectedLinkId d) const { return loads_.at(d); }
  DirectedLoad& at(DirectedLinkId d) { return loads_.at(d); }
  const std::vector<DirectedLoad>& loads() const { return loads_; }
  /// Sweeps folded into the average (0 for an idle model).
  int sweeps() const { return sweeps_; }

  /// The directed link `from` transmits on (nullopt when the port has no cable).
  std::optional<DirectedLinkId> transmitting(PortRef from) const;
  /// The port that transmits on `d`, and the one that receives.
  PortRef sender(DirectedLinkId d) const;
  PortRef receiver(DirectedLinkId d) const;

  /// Sets one direction's utilization (and optionally congestion); for tests and benches.
  void setUtilization(DirectedLinkId d, double utilization, double congestion = 0.0);
  /// Sets both directions' health.
  void setHealth(std::uint32_t link, telemetry::LinkState state);

 private:
  TopologyPtr topology_;
  std::vector<DirectedLoad> loads_;
  int sweeps_ = 0;
};

}  // namespace ibfabric::routing
