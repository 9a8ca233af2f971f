// FabricService's reactions to OpenSM events: switch re-probes after traps (on the sweep thread,
// which owns the MAD engine), the forwarding-table refresh hook and the plugin link status.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <utility>

#include "api/service/fabric_service.h"
#include "discovery/topology_delta.h"
#include "discovery/topology_edit.h"

namespace ibfabric::api {

/// Cables a probe took out, by each end: restored when the port comes back up. A trap for a
/// port whose cable is not remembered here (e.g. plugged while the daemon was down) triggers a
/// crawl instead, since PortInfo does not say what is at the other end.
struct FabricService::ProbeMemory {
  struct Removed {
    Guid remoteNode;
    PortNum remotePort;
    std::optional<LinkRate> rate;        // this end's active rate before the cable went down
    std::optional<LinkRate> remoteRate;  // the other end's
  };
  std::map<std::pair<Guid, PortNum>, Removed> removed;
  /// Probes of a switch in a row in which some port did not answer. Right after a cable
  /// breaks, LID-routed SMPs to its switch may still be routed over it until the SM has
  /// rerouted: such a switch is probed again shortly (kUnansweredRetries times) before a crawl.
  std::map<Lid, int> unanswered;
  /// Ports of cables a probe put back while not yet Active (init), with when: their switch is
  /// probed again every kPendingProbeEvery until the SM activates them, for kActivationWatch
  /// at most (then the sweeps' re-checks of cables not Active take over, sweep_suspects.h).
  std::map<std::pair<Guid, PortNum>, std::chrono::steady_clock::time_point> activating;
  /// Silent switches a neighbour's probe explained (their cable to it is down): probed once
  /// more, along a route that avoids that cable, then left to the sweeps.
  std::set<Lid> explained;
  /// Switches read by directed route since they last answered by LID (logged once a streak).
  std::set<Lid> readDirected;

  /// How soon the switches left pending are probed again: kPendingProbeEvery while a silent
  /// switch is retried or a cable has just come back, then a tenth of the youngest watch's age,
  /// up to kActivationWatchEvery (an SM that takes minutes to activate a cable — OpenSM at
  /// 10,240 HCAs on ibsim: ~100 s — costs one switch's PortInfo every 2 s, not 5 a second).
  std::chrono::milliseconds watchEvery(std::chrono::steady_clock::time_point now) const;
};

namespace {
constexpr int kUnansweredRetries = 5;
constexpr auto kActivationWatch = std::chrono::minutes(3);
constexpr auto kActivationWatchEvery = std::chrono::milliseconds(2'000);
}  // namespace

std::chrono::milliseconds FabricService::ProbeMemory::watchEvery(
    std::chrono::steady_clock::time_point now) const {
  using std::chrono::milliseconds;
  if (!unanswered.empty() || activating.empty()) return kPendingProbeEvery;
  milliseconds every = kActivationWatchEvery;
  for (const auto& [port, since] : activating)
    every = std::min(every, std::chrono::duration_cast<milliseconds>(now - since) / 10);
  return std::clamp(every, milliseconds(kPendingProbeEvery), kActivationWatchEvery);
}

namespace {

PortStateUpdate updateOf(Guid node, PortNum port, const mad::PortInfo& info,
                         std::optional<LinkRate> rate) {
  PortStateUpdate u;
  u.node = node;
  u.port = port;
  u.state = static_cast<PortState>(info.portState & 0xF);
  u.physState = static_cast<PhysPortState>(info.portPhysState & 0xF);
  if (u.state != PortState::kDown && u.state != PortState::kNoChange) u.activeRate = rate;
  return u;
}

bool isDown(const mad::PortInfo& info) {
  const auto s = static_cast<PortState>(info.portState & 0xF);
  return s == PortState::kDown || s == PortState::kNoChange;
}

/// Where PortInfo of a node's port is asked: a switch at its own LID, a CA at the port's LID.
Lid probeLid(const Node& n, PortNum p) {
  if (n.isSwitch()) return n.lid();
  const Port* port = n.port(p);
  return port ? port->lid : Lid{};
}

/// The switches cabled to switch `sw` whose port towards it is no longer Active (one PortInfo
/// each, by LID): for a switch that does not answer, the ends of its dead cables that still do.
/// Gives up after kSilentNeighbours neighbours that do not answer either (a plane in trouble:
/// each costs the engine's timeouts, on the sweep thread).
constexpr int kSilentNeighbours = 4;
std::vector<Lid> neighboursSeeingADeadCable(const Topology& t, NodeIndex sw,
                                            CounterSource& source) {
  std::vector<Lid> out;
  int silentNeighbours = 0;
  for (const auto& p : t.node(sw).ports) {
    if (!p || !p->remote || !p->link || t.links()[*p->link].missing) continue;
    const Node& r = t.node(p->remote->node);
    if (!r.isSwitch() || r.missing || r.lid().value() == 0) continue;
    std::vector<std::optional<mad::PortInfo>> info;
    try {
      info = source.probePortInfo(r.lid(), {p->remote->port});
    } catch (const std::exception&) {
      return out;
    }
    if (!info.empty() && info[0] && !isDown(*info[0]) &&
        static_cast<PortState>(info[0]->portState & 0xF) == PortState::kActive)
      continue;
    if (!info.empty() && info[0])
      out.push_back(r.lid());
    else if (++silentNeighbours >= kSilentNeighbours)
      break;
  }
  return out;
}

/// PortInfo of the port at the far end of `port` of switch `sw`, read by directed route, when
/// the node answering there is `expected` (by GUID) at `expectedPort`; nullopt when another node
/// answers (the cable moved: a crawl's work), nothing does, or the source cannot tell.
std::optional<mad::PortInfo> farEndIfItIs(CounterSource& source, const TopologyPtr& topology,
                                          Guid sw, PortNum port, const Node& expected,
                                          PortNum expectedPort) {
  std::optional<CounterSource::FarEnd> far;
  try {
    far = source.probeFarEnd(topology, sw, port);
  } catch (const std::exception& e) {
    spdlog::debug("far end of {} port {}: {}", toString(sw), port.value(), e.what());
    return std::nullopt;
  }
  if (!far || !far->port) return std::nullopt;
  if (Guid{far->node.nodeGuid} != expected.guid || far->node.localPortNum != expectedPort.value()) {
    spdlog::info("far end of {} port {}: {} port {} answers, not {} port {}", toString(sw),
                 port.value(), toString(Guid{far->node.nodeGuid}), far->node.localPortNum,
                 expected.description, expectedPort.value());
    return std::nullopt;
  }
  return far->port;
}

/// A switch silent by LID — its LID route may cross the dead cable until the SM reroutes —
/// asked again along up cables by directed route; `silent` back when that does not answer either.
std::vector<std::optional<mad::PortInfo>> byDirectedRoute(
    CounterSource& source, const TopologyPtr& topology, const Node& sw,
    const std::vector<PortNum>& ports, std::vector<std::optional<mad::PortInfo>> silent,
    bool firstOfStreak) {
  std::vector<std::optional<mad::PortInfo>> direct;
  try {
    direct = source.probeSwitchPortsDirected(topology, sw.guid, ports);
  } catch (const std::exception& e) {
    spdlog::debug("{} by directed route: {}", sw.description, e.what());
    return silent;
  }
  if (direct.size() != ports.size() ||
      std::none_of(direct.begin(), direct.end(), [](const auto& i) { return i.has_value(); }))
    return silent;
  spdlog::log(firstOfStreak ? spdlog::level::info : spdlog::level::debug,
              "probe of LID {}: no answer by LID; {} read by directed route", sw.lid().value(),
              sw.description);
  return direct;
}

}  // namespace

void FabricService::requestPortProbe(Lid switchLid, bool fromSweep) {
  {
    std::lock_guard lock(mu_);
    probeRequests_.insert(switchLid);
    if (fromSweep)
      sweepProbes_.insert(switchLid);
    else
      sweepProbes_.erase(switchLid);  // a trap's probe may crawl
  }
  cv_.notify_all();
}

void FabricService::requestPendingProbes() {
  {
    std::lock_guard lock(mu_);
    if (pendingUp_.empty()) return;
    probeRequests_.merge(pendingUp_);
    pendingUp_.clear();
  }
  cv_.notify_all();
}

void FabricService::requestRouteRefresh(const std::string& reason) {
  // The sweep thread owns the MAD engine: it sweeps at once and reads every table in full
  // (ibfabric_route_refresh_requests_total counts the requests).
  spdlog::info("forwarding tables changed ({}): route refresh requested", reason);
  publishChange([&](ServiceState& s) {
    s.osm.routeRefreshRequests++;
    s.osm.lastRouteRefreshReason = reason;
  });
  {
    std::lock_guard lock(mu_);
    routeRefreshRequested_ = true;
  }
  cv_.notify_all();
}

void FabricService::setOsmLink(const OsmLinkStatus& link) {
  publishChange([&](ServiceState& s) { s.osm.link = link; });
}

void FabricService::setEventCoalescing(const CoalescingCounts& counts) {
  publishChange([&](ServiceState& s) { s.osm.coalescing = counts; });
}

void FabricService::setTrapSubscription(const mad::TrapSubscriptionStatus& status) {
  publishChange([&](ServiceState& s) { s.traps = status; });
}

void FabricService::probeSwitches(const std::set<Lid>& lids, CounterSource* source) {
  if (!probeMemory_) probeMemory_ = std::make_shared<ProbeMemory>();
  for (Lid lid : lids) {
    if (stopping_) return;
    if (!source) {
      // The source is created by the sweep (which then hands it the topology): crawl instead.
      spdlog::info("trap from LID {}: no MAD engine yet, crawling instead", lid.value());
      publishChange([](ServiceState& s) { s.osm.portProbeFailures++; });
      requestCrawl();
      continue;
    }
    probeSwitch(lid, *source);
  }
  const auto every = probeMemory_->watchEvery(std::chrono::steady_clock::now());
  std::lock_guard lock(mu_);
  pendingEvery_ = every;
}

void FabricService::probeSwitch(Lid lid, CounterSource& source) {
  const auto t0 = std::chrono::steady_clock::now();
  bool fromSweep = false;
  {
    std::lock_guard lock(mu_);
    fromSweep = sweepProbes_.count(lid) > 0;
  }
  // What asked for this probe, for the log: a sweep's suspect or a trap (the plugin, SM traps).
  const char* asker = fromSweep ? "sweep probe" : "trap";
  // What a probe cannot place: a trap's asks for a crawl, a sweep's waits for the next one.
  auto crawlFor = [&](const std::string& why) {
    if (fromSweep) {
      spdlog::debug("probe of LID {} after a sweep: {}; left to the next crawl", lid.value(), why);
      return;
    }
    spdlog::info("trap from LID {}: {}; crawling", lid.value(), why);
    requestCrawl();
  };
  auto fallBack = [&](const std::string& why) {
    publishChange([](ServiceState& s) { s.osm.portProbeFailures++; });
    crawlFor(why + " (instead of the probe)");
  };
  const TopologyPtr topo = state()->topology;
  if (!topo) return;
  const auto ref = topo->findLid(lid);
  if (!ref || !topo->node(ref->node).isSwitch()) return fallBack("no known switch has that LID");
  const Node& sw = topo->node(ref->node);

  std::vector<PortNum> ports;
  for (int p = 1; p <= sw.numPorts; ++p) ports.push_back(PortNum{static_cast<std::uint8_t>(p)});
  std::vector<std::optional<mad::PortInfo>> infos;
  try {
    infos = source.probePortInfo(lid, ports);
  } catch (const std::exception& e) {
    return fallBack(e.what());
  }
  if (infos.size() != ports.size()) return fallBack("the probe returned the wrong port count");
  auto& memory = *probeMemory_;
  if (std::none_of(infos.begin(), infos.end(), [](const auto& i) { return i.has_value(); }))
    infos = byDirectedRoute(source, topo, sw, ports, std::move(infos),
                            memory.readDirected.insert(lid).second);
  else
    memory.readDirected.erase(lid);
  TopologyEdit edit;
  std::string needCrawl;  // why a crawl is needed; empty = not needed
  bool pending = false;
  struct FarEnd {
    Guid node;
    PortNum port;
    Lid lid;
    bool cableUp;  // linked (true) or removed (false)
    std::optional<LinkRate> rate;
    PortState nearState = PortState::kActive;  // this end's, for a far end that does not answer
    PortNum nearPort{};                        // the switch port facing it
    std::optional<mad::PortInfo> known;        // already read (by directed route)
  };
  std::vector<FarEnd> farEnds;
  std::vector<std::pair<Guid, PortNum>> restored;
  const auto probedAt = std::chrono::steady_clock::now();
  // A port of a cable the SM has not activated yet (init) is watched until it is Active.
  auto watchActivation = [&](PortNum p, PortState state) {
    const auto key = std::make_pair(sw.guid, p);
    const auto at = memory.activating.find(key);
    if (at == memory.activating.end()) return;
    if (state == PortState::kActive || probedAt - at->second > kActivationWatch)
      memory.activating.erase(at);
    else
      pending = true;
  };
  // The cable at `p` is linked again (Active, or init: the SM has not activated it yet; it is
  // back in the model either way, its link_up saying which).
  auto restore = [&](PortNum p, const mad::PortInfo& info, const Node& rn, PortNum rport,
                     std::optional<LinkRate> rate, std::optional<LinkRate> remoteRate,
                     std::optional<mad::PortInfo> farInfo = std::nullopt) {
    const auto state = static_cast<PortState>(info.portState & 0xF);
    edit.addLinks.push_back(LinkKey::of(sw.guid, p, rn.guid, rport));
    edit.ports.push_back(updateOf(sw.guid, p, info, rate));
    farEnds.push_back(
        {rn.guid, rport, probeLid(rn, rport), true, remoteRate, state, p, std::move(farInfo)});
    restored.push_back({sw.guid, p});
    restored.push_back({rn.guid, rport});
    if (state != PortState::kActive) {
      memory.activating[{sw.guid, p}] = probedAt;
      pending = true;
    }
  };

  std::size_t silent = 0;
  for (const auto& info : infos) silent += info ? 0 : 1;
  if (silent > 0) {
    // Not reachable at all: its neighbours can say which of its cables went (once a streak).
    // When one does, that is what the trap (or the sweep) was about: the neighbour's probe
    // edits the model, and this switch is not crawled for, only probed again shortly.
    if (silent == ports.size() && memory.explained.erase(lid) > 0) {
      // Asked again after a neighbour explained it, and still silent: nothing more to learn
      // until the SM reroutes (the sweeps will ask again), no crawl for it.
      spdlog::debug("{} of LID {}: still silent after its neighbour's report", asker, lid.value());
      std::lock_guard lock(mu_);
      sweepProbes_.erase(lid);
      return;
    }
    if (silent == ports.size() && memory.unanswered[lid] == 0) {
      const auto seeing = neighboursSeeingADeadCable(*topo, ref->node, source);
      for (const Lid n : seeing) {
        spdlog::info("probe of LID {}: no answer; its neighbour at LID {} sees their cable down",
                     lid.value(), n.value());
        requestPortProbe(n, fromSweep);
      }
      if (!seeing.empty()) {
        publishChange([](ServiceState& s) { s.osm.portProbes++; });
        // Asked once more shortly: once the neighbour's probe has put
        // the dead cable in the model, the directed route avoids it and reads this switch's own
        // ports — an HCA cable coming back on it need not wait for the SM's reroute.
        memory.unanswered.erase(lid);
        memory.explained.insert(lid);
        std::lock_guard lock(mu_);
        pendingUp_.insert(lid);
        return;
      }
    }
    if (++memory.unanswered[lid] <= kUnansweredRetries) {
      spdlog::debug("{} of LID {}: {} of {} ports did not answer; probing again shortly", asker,
                    lid.value(), silent, ports.size());
      std::lock_guard lock(mu_);
      pendingUp_.insert(lid);
      return;
    }
    needCrawl = std::to_string(silent) + " ports did not answer";
  }
  memory.unanswered.erase(lid);
  memory.explained.erase(lid);

  for (std::size_t i = 0; i < ports.size(); ++i) {
    if (!infos[i]) continue;
    const PortNum p = ports[i];
    const mad::PortInfo& info = *infos[i];
    const Port* old = sw.port(p);
    if (!old) {
      if (!isDown(info)) needCrawl = "port " + std::to_string(i + 1) + " is not in the topology";
      continue;
    }
    const auto newState = static_cast<PortState>(info.portState & 0xF);
    const auto newPhys = static_cast<PhysPortState>(info.portPhysState & 0xF);
    if (old->remote && old->link && topo->links()[*old->link].missing) {
      // A cable the model remembers as missing (discovery/fabric_memory.h).
      const Node& rn = topo->node(old->remote->node);
      if (isDown(info)) {
        if (newState != old->state || newPhys != old->physState)
          edit.ports.push_back(updateOf(sw.guid, p, info, std::nullopt));
      } else if (rn.missing) {
        // The node went missing with its cable (a crawl ran meanwhile): back when the node that
        // answers through this port is the one remembered, at the port remembered.
        const auto far = farEndIfItIs(source, topo, sw.guid, p, rn, old->remote->port);
        if (!far) {
          needCrawl =
              "port " + std::to_string(p.value()) + " came up towards missing " + rn.description;
        } else {
          edit.nodesBack.push_back(rn.guid);
          restore(p, info, rn, old->remote->port, std::nullopt, std::nullopt, far);
        }
      } else {
        // The rates it had before it went down, when a probe saw it go (else the next crawl's).
        const auto was = memory.removed.find({sw.guid, p});
        const bool known = was != memory.removed.end();
        restore(p, info, rn, old->remote->port, known ? was->second.rate : std::nullopt,
                known ? was->second.remoteRate : std::nullopt);
      }
      continue;
    }
    if (old->remote) {
      const Node& rn = topo->node(old->remote->node);
      const Port* rp = topo->port(*old->remote);
      if (isDown(info)) {
        edit.removeLinks.push_back(LinkKey::of(sw.guid, p, rn.guid, old->remote->port));
        edit.ports.push_back(updateOf(sw.guid, p, info, std::nullopt));
        farEnds.push_back({rn.guid, old->remote->port, probeLid(rn, old->remote->port), false,
                           std::nullopt, PortState::kDown, p, std::nullopt});
        memory.removed[{sw.guid, p}] = {rn.guid, old->remote->port, old->activeRate,
                                        rp ? rp->activeRate : std::nullopt};
        memory.removed[{rn.guid, old->remote->port}] = {
            sw.guid, p, rp ? rp->activeRate : std::nullopt, old->activeRate};
        memory.activating.erase({sw.guid, p});
      } else if (newState != old->state || newPhys != old->physState) {
        // Activated by the SM (or taken back to Init): the far end's state changed too.
        edit.ports.push_back(updateOf(sw.guid, p, info, old->activeRate));
        farEnds.push_back({rn.guid, old->remote->port, probeLid(rn, old->remote->port), true,
                           rp ? rp->activeRate : std::nullopt, newState, p, std::nullopt});
      }
      if (!isDown(info)) watchActivation(p, newState);
      continue;
    }
    if (isDown(info)) {
      if (newState != old->state || newPhys != old->physState)
        edit.ports.push_back(updateOf(sw.guid, p, info, std::nullopt));
      continue;
    }
    // The port has a link again.
    auto it = memory.removed.find({sw.guid, p});
    if (it == memory.removed.end()) {
      needCrawl = "port " + std::to_string(p.value()) + " came up on an unknown cable";
      continue;
    }
    const auto& r = it->second;
    const Node* rn = topo->findNode(r.remoteNode);
    const Port* rp = rn ? rn->port(r.remotePort) : nullptr;
    if (!rp || rp->remote) {
      needCrawl = "the far end of port " + std::to_string(p.value()) + " is cabled elsewhere";
      continue;
    }
    restore(p, info, *rn, r.remotePort, r.rate, r.remoteRate);
  }

  // The far ends of the cables that changed: their own PortInfo (a switch's trap may still be
  // on its way); without an answer, the obvious state.
  for (const auto& f : farEnds) {
    std::optional<mad::PortInfo> info = f.known;
    const Node* fn = topo->findNode(f.node);
    if (!info && f.lid.value() != 0) {
      try {
        auto r = source.probePortInfo(f.lid, {f.port});
        if (!r.empty()) info = r.front();
      } catch (const std::exception&) {
      }
    } else if (!info && f.cableUp && fn && fn->isCa()) {
      // A CA port without a LID in the model (back from missing): by directed route.
      info = farEndIfItIs(source, topo, sw.guid, f.nearPort, *fn, f.port);
    }
    std::optional<Lid> newLid;
    if (info && fn && fn->isCa() && info->lid != 0 && Lid{info->lid} != f.lid)
      newLid = Lid{info->lid};
    if (!info) {
      mad::PortInfo guess;
      guess.portState = static_cast<std::uint8_t>(f.cableUp ? f.nearState : PortState::kDown);
      guess.portPhysState =
          static_cast<std::uint8_t>(f.cableUp ? PhysPortState::kLinkUp : PhysPortState::kPolling);
      info = guess;
    }
    edit.ports.push_back(updateOf(f.node, f.port, *info, f.cableUp ? f.rate : std::nullopt));
    edit.ports.back().lid = newLid;
  }

  if (!edit.empty()) {
    std::lock_guard editLock(topologyEditMu_);
    const TopologyPtr current = state()->topology;
    if (current != topo) {
      // A crawl published a fresher view while the probe ran: it already has the change.
      spdlog::debug("{} of LID {}: a crawl finished meanwhile, probe result dropped", asker,
                    lid.value());
    } else {
      TopologyPtr next;
      try {
        next = applyTopologyEdit(*topo, edit);
        // A cable the probe found down stays in the model, missing (discovery/fabric_memory.h).
        const auto now = std::chrono::system_clock::now();
        next = rememberMissing(*topo, now, std::move(next), now, options_.remember);
        modelSeenAt_ = now;
      } catch (const std::exception& e) {
        return fallBack(std::string("cannot apply the probe: ") + e.what());
      }
      TopologyDelta delta(topo, next);
      for (const auto& line : delta.describeAll())
        spdlog::info("{} of LID {}: {}", asker, lid.value(), line);
      // The snapshot first, then the events: a client woken by link_down reads the new topology.
      publishChange([&](ServiceState& s) {
        s.topology = next;
        s.osm.portProbes++;
      });
      telemetry::appendTopologyEvents(events_, delta);
      publishChange([](ServiceState&) {});  // counts the new events by type
      for (const auto& key : restored) memory.removed.erase(key);
      {
        std::lock_guard lock(mu_);
        latestTopology_ = next;
      }
      cv_.notify_all();
    }
  } else {
    publishChange([](ServiceState& s) { s.osm.portProbes++; });
  }
  spdlog::debug(
      "{} of LID {}: probed {} ports in {:.1f} ms", asker, lid.value(), ports.size(),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  {
    std::lock_guard lock(mu_);
    if (pending)
      pendingUp_.insert(lid);
    else
      sweepProbes_.erase(lid);  // done
  }
  if (!needCrawl.empty()) crawlFor(needCrawl);
}

}  // namespace ibfabric::api
