#include "routing/link_load.h"

#include <algorithm>
#include <stdexcept>

namespace ibfabric::routing {

namespace {

double clamp01(double v) { return std::clamp(v, 0.0, 1.0); }

bool portActive(const Topology& topology, PortRef ref) {
  const Port* p = topology.port(ref);
  return p && p->state == PortState::kActive;
}

telemetry::PortKey keyOf(const Topology& topology, PortRef ref) {
  return telemetry::PortKey{topology.node(ref.node).guid, ref.port};
}

}  // namespace

double DirectedLoad::residualBytesPerSecond() const {
  if (health == telemetry::LinkState::kDown || health == telemetry::LinkState::kFaulty) return 0.0;
  return capacityBytesPerSecond * (1.0 - clamp01(utilization));
}

LinkLoadModel::LinkLoadModel(TopologyPtr topology) : topology_(std::move(topology)) {
  if (!topology_) throw std::invalid_argument("link load: no topology");
  const auto& links = topology_->links();
  loads_.resize(links.size() * 2);
  for (std::uint32_t l = 0; l < links.size(); ++l) {
    const Link& link = links[l];
    double capacity = link.rate ? link.rate->dataGbps() * 1e9 / 8.0 : 0.0;
    bool up = link.rate && portActive(*topology_, link.a) && portActive(*topology_, link.b);
    for (int dir = 0; dir < 2; ++dir) {
      DirectedLoad& d = loads_[directedLink(l, dir == 1)];
      d.capacityBytesPerSecond = capacity;
      d.health = up ? telemetry::LinkState::kOk : telemetry::LinkState::kDown;
    }
  }
}

LinkLoadModel LinkLoadModel::fromSweep(TopologyPtr topology, const telemetry::RatesTable* rates,
                                       const std::vector<telemetry::LinkHealthReport>* health,
                                       const LinkLoadModel* previous,
                                       const LinkLoadOptions& options) {
  LinkLoadModel model(std::move(topology));
  const Topology& topo = *model.topology_;
  const double alpha = std::clamp(options.alpha, 0.0, 1.0);

  // Previous averages: by directed link when the previous model is on the same snapshot (every
  // sweep between two crawls), else by transmitting port.
  const bool carries = previous && previous->topology_ && previous->sweeps_ > 0;
  const bool sameSnapshot = carries && previous->topology_ == model.topology_;
  std::map<telemetry::PortKey, std::pair<double, double>> before;
  if (carries && !sameSnapshot) {
    const Topology& old = *previous->topology_;
    for (DirectedLinkId d = 0; d < previous->loads_.size(); ++d) {
      const DirectedLoad& l = previous->loads_[d];
      before[keyOf(old, previous->sender(d))] = {l.utilization, l.congestion};
    }
  }

  const auto& links = topo.links();
  for (std::uint32_t l = 0; l < links.size(); ++l) {
    for (int dir = 0; dir < 2; ++dir) {
      DirectedLinkId id = directedLink(l, dir == 1);
      DirectedLoad& load = model.loads_[id];
      telemetry::PortKey tx = keyOf(topo, model.sender(id));
      telemetry::PortKey rx = keyOf(topo, model.receiver(id));
      std::optional<double> util;
      std::optional<double> congestion;
      if (rates) {
        if (auto r = rates->find(tx)) {
          util = r->txUtilization;
          congestion = r->congestion;
        }
        if (!util) {
          if (auto r = rates->find(rx)) util = r->rxUtilization;
        }
      }
      std::optional<std::pair<double, double>> old;
      if (sameSnapshot) {
        old = {previous->loads_[id].utilization, previous->loads_[id].congestion};
      } else if (auto it = before.find(tx); it != before.end()) {
        old = it->second;
      }
      double u = util ? clamp01(*util) : 0.0;
      double c = congestion ? clamp01(*congestion) : 0.0;
      if (old) {
        // A direction without a fresh number keeps its average.
        u = util ? alpha * u + (1 - alpha) * old->first : old->first;
        c = congestion ? alpha * c + (1 - alpha) * old->second : old->second;
      }
      load.utilization = u;
      load.congestion = c;
    }
  }
  if (health) {
    // Reports are matched by their ports, so they may come from an older topology snapshot.
    std::map<telemetry::PortKey, telemetry::LinkState> byPort;
    for (const auto& report : *health) {
      for (const auto& key : {report.a, report.b}) {
        auto [it, inserted] = byPort.emplace(key, report.state);
        if (!inserted) it->second = std::max(it->second, report.state);
      }
    }
    for (std::uint32_t l = 0; l < links.size(); ++l) {
      telemetry::LinkState state = telemetry::LinkState::kOk;
      for (PortRef end : {links[l].a, links[l].b}) {
        if (auto it = byPort.find(keyOf(topo, end)); it != byPort.end()) {
          state = std::max(state, it->second);
        }
      }
      // Discovery already marked links whose ports are not Active as down; keep the worse.
      for (int dir = 0; dir < 2; ++dir) {
        DirectedLoad& load = model.loads_[directedLink(l, dir == 1)];
        load.health = std::max(load.health, state);
      }
    }
  }
  model.sweeps_ = (previous ? previous->sweeps_ : 0) + 1;
  return model;
}

std::optional<DirectedLinkId> LinkLoadModel::transmitting(PortRef from) const {
  const Port* p = topology_ ? topology_->port(from) : nullptr;
  if (!p || !p->link) return std::nullopt;
  const Link& link = topology_->links()[*p->link];
  return directedLink(*p->link, !(link.a == from));
}

PortRef LinkLoadModel::sender(DirectedLinkId d) const {
  const Link& link = topology_->links().at(linkOf(d));
  return fromB(d) ? link.b : link.a;
}

PortRef LinkLoadModel::receiver(DirectedLinkId d) const {
  const Link& link = topology_->links().at(linkOf(d));
  return fromB(d) ? link.a : link.b;
}

void LinkLoadModel::setUtilization(DirectedLinkId d, double utilization, double congestion) {
  DirectedLoad& load = loads_.at(d);
  load.utilization = clamp01(utilization);
  load.congestion = clamp01(congestion);
}

void LinkLoadModel::setHealth(std::uint32_t link, telemetry::LinkState state) {
  loads_.at(directedLink(link, false)).health = state;
  loads_.at(directedLink(link, true)).health = state;
}

}  // namespace ibfabric::routing
