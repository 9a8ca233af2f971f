// The umad-backed CounterSource: one umad port, opened once and kept for the source's life (the
// daemon's, unless the sweep thread has to re-create it after a failure). The port is opened in
// this process (UmadTransport) or in a MAD proxy child (SubprocessMadTransport) when
// `proxyArgv` is given; re-creating the source then starts a fresh child, which reconnects.
#include <memory>

#include "api/service/counter_source.h"
#include "routing/lft_reader.h"
#include "telemetry/clock.h"
#include "telemetry/pma_attributes.h"
#include "telemetry/subprocess_mad_transport.h"
#include "telemetry/umad_transport.h"

namespace ibfabric::api {
namespace {

/// The PortInfo of each answered, successful reply; nullopt for the others.
std::vector<std::optional<mad::PortInfo>> portInfos(const std::vector<mad::MadResult>& results) {
  std::vector<std::optional<mad::PortInfo>> out(results.size());
  for (std::size_t i = 0; i < results.size(); ++i)
    if (results[i].ok() && mad::madStatus(results[i].reply) == 0)
      out[i] = mad::decodePortInfo(results[i].reply);
  return out;
}

class UmadCounterSource final : public CounterSource {
 public:
  explicit UmadCounterSource(const UmadCounterOptions& options) {
    if (options.proxyArgv.empty()) {
      auto umad = std::make_unique<mad::UmadTransport>(mad::UmadTransport::Options{
          options.ca,
          options.caPort,
          {mad::MgmtClass::kSubnLid, mad::MgmtClass::kPerfMgt, mad::MgmtClass::kSubnDirected}});
      umad_ = umad.get();
      transport_ = std::move(umad);
    } else {
      mad::SubprocessMadTransport::Options po;
      po.argv = options.proxyArgv;
      po.openTimeout = std::chrono::seconds(5);  // bounds a sweep-thread stall (frozen simulator)
      auto proxy = std::make_unique<mad::SubprocessMadTransport>(std::move(po));
      proxy_ = proxy.get();
      transport_ = std::move(proxy);
    }
    std::string error;
    if (!transport_->open(error)) throw SweepError("cannot open umad: " + error);
    engine_ = std::make_unique<mad::MadEngine>(*transport_, clock_, options.engine);
    sweepOptions_ = options.sweep;
    localLid_ = transport_->localLid();
    smLid_ = transport_->smLid();
  }
  ~UmadCounterSource() override {
    lfts_.reset();
    sweeper_.reset();
    engine_.reset();
    transport_->close();
  }

  void setTopology(TopologyPtr topology) override {
    ensureSweeper();
    sweeper_->setTopology(std::move(topology));
  }
  telemetry::CounterSnapshotPtr sweep() override {
    ensureSweeper();
    auto snap = sweeper_->sweep();
    // A proxy child that died answers nothing ever again: fail now, so the source is re-created.
    if (auto fatal = transport_->fatalError(); !fatal.empty()) throw SweepError(fatal);
    return snap;
  }
  void continueAfter(const telemetry::CounterSnapshot& previous) override {
    ensureSweeper();
    sweeper_->continueAfter(previous);
  }
  std::optional<mad::MadEngineStats> engineStats() const override { return engine_->stats(); }
  routing::ForwardingTablesPtr readForwardingTables(const TopologyPtr& topology,
                                                    const routing::ForwardingTablesPtr& previous,
                                                    std::string* reason) override {
    ensureSweeper();
    routing::LftRefreshStats st;
    auto tables = lfts_->refresh(topology, previous, &st, betweenSlices_);
    if (reason) *reason = st.reason;
    return tables;
  }
  void setBetweenSlices(std::function<void()> hook) override {
    betweenSlices_ = std::move(hook);
    if (sweeper_) sweeper_->setBetweenSlices(betweenSlices_);
  }
  bool readsLocalPort() const override { return true; }
  std::optional<mad::PortInfo> localPortInfo() override {
    // Directed route with no hop: our own node's SMA answers, with or without LIDs and an SM.
    std::vector<mad::MadRequest> requests;
    requests.push_back({mad::directedRouteAddress(),
                        mad::toDirectedRoute(mad::buildPortInfoGet(0), mad::DirectedPath{}),
                        {}});
    const auto results = engine_->run(std::move(requests));
    if (auto fatal = transport_->fatalError(); !fatal.empty()) throw SweepError(fatal);
    if (results.empty() || !results[0].ok() || mad::madStatus(results[0].reply) != 0)
      return std::nullopt;
    mad::PortInfo info = mad::decodePortInfo(results[0].reply);
    if (!sweeper_) {  // the sweeps, created later, avoid the LIDs the subnet has now
      localLid_ = Lid{info.lid};
      smLid_ = Lid{info.masterSmLid};
    }
    return info;
  }
  std::vector<std::optional<mad::PortInfo>> probePortInfo(
      Lid lid, const std::vector<PortNum>& ports) override {
    std::vector<mad::MadRequest> requests;
    for (PortNum p : ports)
      requests.push_back({mad::smpAddress(lid), mad::buildPortInfoGet(p.value()), {}});
    return portInfos(engine_->run(std::move(requests)));
  }
  std::vector<std::optional<mad::PortInfo>> probePortInfoDirected(
      const std::vector<DirectedPortProbe>& probes) override {
    std::vector<mad::MadRequest> requests;
    for (const auto& p : probes)
      requests.push_back({mad::directedRouteAddress(),
                          mad::toDirectedRoute(mad::buildPortInfoGet(p.port.value()), p.path),
                          {}});
    return portInfos(engine_->run(std::move(requests)));
  }
  std::vector<std::optional<mad::PortInfo>> probeSwitchPortsDirected(
      const TopologyPtr& topology, Guid switchGuid, const std::vector<PortNum>& ports) override {
    const auto path = pathTo(topology, switchGuid);
    if (!path) return {};
    std::vector<DirectedPortProbe> probes;
    for (PortNum p : ports) probes.push_back({*path, p});
    return probePortInfoDirected(probes);
  }
  std::optional<FarEnd> probeFarEnd(const TopologyPtr& topology, Guid switchGuid,
                                    PortNum port) override {
    auto found = pathTo(topology, switchGuid);
    if (!found || found->ports.size() >= mad::DirectedPath::kMaxHops) return std::nullopt;
    mad::DirectedPath path = std::move(*found);
    path.ports.push_back(port.value());
    auto ask = [&](const mad::MadBuffer& smp) -> std::optional<mad::MadBuffer> {
      std::vector<mad::MadRequest> requests;
      requests.push_back({mad::directedRouteAddress(), mad::toDirectedRoute(smp, path), {}});
      const auto results = engine_->run(std::move(requests));
      if (results.empty() || !results[0].ok() || mad::madStatus(results[0].reply) != 0)
        return std::nullopt;
      return results[0].reply;
    };
    const auto node = ask(mad::buildNodeInfoGet());
    if (!node) return std::nullopt;
    FarEnd out{mad::decodeNodeInfo(*node), std::nullopt};
    if (const auto info = ask(mad::buildPortInfoGet(out.node.localPortNum)))
      out.port = mad::decodePortInfo(*info);
    return out;
  }
  std::string describe() const override {
    if (proxy_)
      return proxy_->childDescription() + " (mad proxy pid " + std::to_string(proxy_->childPid()) +
             ")";
    return "umad " + umad_->caName() + ":" + std::to_string(umad_->portNum());
  }

  ClearCountersResult clearCounters(telemetry::PortKey key, Lid lid) override {
    using Status = ClearCountersResult::Status;
    const std::uint8_t port = key.port.value();
    std::vector<telemetry::Counter> all(telemetry::kAllCounters.begin(),
                                        telemetry::kAllCounters.end());
    std::vector<mad::MadRequest> requests;
    requests.push_back({mad::pmaAddress(lid), telemetry::buildPortCountersClear(port, all), {}});
    ensureSweeper();
    const auto caps = sweeper_->capabilities().find(key.node);
    const bool extended = caps != sweeper_->capabilities().end() && caps->second.extendedCounters();
    if (extended) {
      requests.push_back(
          {mad::pmaAddress(lid),
           buildPortCountersExtendedClear(port, caps->second.extendedErrorCounters()),
           {}});
    }
    const auto results = engine_->run(std::move(requests));
    const char* names[] = {"PortCounters", "PortCountersExtended"};
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& r = results[i];
      if (!r.ok()) {
        return {Status::kTimeout, false,
                std::string(names[i]) + " SET to LID " + std::to_string(lid.value()) + ": " +
                    mad::toString(r.outcome)};
      }
      if (const auto status = mad::madStatus(r.reply); status != 0) {
        return {Status::kRejected, false,
                std::string(names[i]) + " SET refused with MAD status " + std::to_string(status)};
      }
    }
    return {Status::kOk, extended, ""};
  }

 private:
  /// The directed route from our port to `guid` along up cables of `topology`.
  std::optional<mad::DirectedPath> pathTo(const TopologyPtr& topology, Guid guid) {
    ensureSweeper();
    const Node* n = topology ? topology->findNode(guid) : nullptr;
    const auto paths = lfts_->pathsFor(topology);
    if (!n || n->index >= paths->size()) return std::nullopt;
    return (*paths)[n->index];
  }
  /// The sweeper and the LFT reader are made at first use: a source opened before the SM
  /// assigned LIDs learns them from localPortInfo() first.
  void ensureSweeper() {
    if (sweeper_) return;
    telemetry::SweepOptions sweep = sweepOptions_;
    sweep.samplesControlAvoid.insert({smLid_, localLid_});
    sweeper_ = std::make_unique<telemetry::CounterSweeper>(*engine_, clock_, std::move(sweep));
    sweeper_->setBetweenSlices(betweenSlices_);
    routing::LftReaderOptions lo;
    lo.localPort = transport_->localPortGuid();  // directed-route fallback starts here
    lfts_ = std::make_unique<routing::LftReader>(*engine_, clock_, lo);
  }

  mad::SteadyClock clock_;
  std::function<void()> betweenSlices_;
  telemetry::SweepOptions sweepOptions_;
  Lid localLid_;
  Lid smLid_;
  std::unique_ptr<mad::MadTransport> transport_;
  mad::UmadTransport* umad_ = nullptr;
  mad::SubprocessMadTransport* proxy_ = nullptr;
  std::unique_ptr<mad::MadEngine> engine_;
  std::unique_ptr<telemetry::CounterSweeper> sweeper_;
  std::unique_ptr<routing::LftReader> lfts_;
};

}  // namespace

CounterSourcePtr makeUmadCounterSource(const UmadCounterOptions& options) {
  return std::make_unique<UmadCounterSource>(options);
}

}  // namespace ibfabric::api
