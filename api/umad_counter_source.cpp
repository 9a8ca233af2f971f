// The umad-backed CounterSource: one umad port, opened once and kept for the source's life (the
// daemon's, unless the sweep thread has to re-create it after a failure).
#include <memory>

#include "api/counter_source.h"
#include "routing/lft_reader.h"
#include "telemetry/clock.h"
#include "telemetry/pma_attributes.h"
#include "telemetry/umad_transport.h"

namespace ibfabric::api {
namespace {

class UmadCounterSource final : public CounterSource {
 public:
  explicit UmadCounterSource(const UmadCounterOptions& options)
      : transport_(mad::UmadTransport::Options{
            options.ca,
            options.caPort,
            {mad::MgmtClass::kSubnLid, mad::MgmtClass::kPerfMgt, mad::MgmtClass::kSubnDirected}}) {
    std::string error;
    if (!transport_.open(error)) throw SweepError("cannot open umad: " + error);
    engine_ = std::make_unique<mad::MadEngine>(transport_, clock_, options.engine);
    telemetry::SweepOptions sweep = options.sweep;
    sweep.samplesControlAvoid.insert({transport_.smLid(), transport_.localLid()});
    sweeper_ = std::make_unique<telemetry::CounterSweeper>(*engine_, clock_, std::move(sweep));
    routing::LftReaderOptions lo;
    lo.localPort = transport_.localPortGuid();  // directed-route fallback starts here
    lfts_ = std::make_unique<routing::LftReader>(*engine_, clock_, lo);
  }
  ~UmadCounterSource() override {
    lfts_.reset();
    sweeper_.reset();
    engine_.reset();
    transport_.close();
  }

  void setTopology(TopologyPtr topology) override { sweeper_->setTopology(std::move(topology)); }
  telemetry::CounterSnapshotPtr sweep() override { return sweeper_->sweep(); }
  std::optional<mad::MadEngineStats> engineStats() const override { return engine_->stats(); }
  routing::ForwardingTablesPtr readForwardingTables(const TopologyPtr& topology,
                                                    const routing::ForwardingTablesPtr& previous,
                                                    std::string* reason) override {
    routing::LftRefreshStats st;
    auto tables = lfts_->refresh(topology, previous, &st);
    if (reason) *reason = st.reason;
    return tables;
  }
  std::vector<std::optional<mad::PortInfo>> probePortInfo(
      Lid lid, const std::vector<PortNum>& ports) override {
    std::vector<mad::MadRequest> requests;
    for (PortNum p : ports)
      requests.push_back({mad::smpAddress(lid), mad::buildPortInfoGet(p.value()), {}});
    const auto results = engine_->run(std::move(requests));
    std::vector<std::optional<mad::PortInfo>> out(results.size());
    for (std::size_t i = 0; i < results.size(); ++i)
      if (results[i].ok() && mad::madStatus(results[i].reply) == 0)
        out[i] = mad::decodePortInfo(results[i].reply);
    return out;
  }
  std::string describe() const override {
    return "umad " + transport_.caName() + ":" + std::to_string(transport_.portNum());
  }

  ClearCountersResult clearCounters(telemetry::PortKey key, Lid lid) override {
    using Status = ClearCountersResult::Status;
    const std::uint8_t port = key.port.value();
    std::vector<telemetry::Counter> all(telemetry::kAllCounters.begin(),
                                        telemetry::kAllCounters.end());
    std::vector<mad::MadRequest> requests;
    requests.push_back({mad::pmaAddress(lid), telemetry::buildPortCountersClear(port, all), {}});
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
  mad::SteadyClock clock_;
  mad::UmadTransport transport_;
  std::unique_ptr<mad::MadEngine> engine_;
  std::unique_ptr<telemetry::CounterSweeper> sweeper_;
  std::unique_ptr<routing::LftReader> lfts_;
};

}  // namespace

CounterSourcePtr makeUmadCounterSource(const UmadCounterOptions& options) {
  return std::make_unique<UmadCounterSource>(options);
}

}  // namespace ibfabric::api
