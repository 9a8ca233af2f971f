// The umad-backed CounterSource: one umad port, opened once and kept for the source's life (the
// daemon's, unless the sweep thread has to re-create it after a failure).
#include <memory>

#include "api/counter_source.h"
#include "telemetry/clock.h"
#include "telemetry/umad_transport.h"

namespace ibfabric::api {
namespace {

class UmadCounterSource final : public CounterSource {
 public:
  explicit UmadCounterSource(const UmadCounterOptions& options)
      : transport_(mad::UmadTransport::Options{
            options.ca, options.caPort, {mad::MgmtClass::kSubnLid, mad::MgmtClass::kPerfMgt}}) {
    std::string error;
    if (!transport_.open(error)) throw SweepError("cannot open umad: " + error);
    engine_ = std::make_unique<mad::MadEngine>(transport_, clock_, options.engine);
    sweeper_ = std::make_unique<telemetry::CounterSweeper>(*engine_, clock_);
  }
  ~UmadCounterSource() override {
    sweeper_.reset();
    engine_.reset();
    transport_.close();
  }

  void setTopology(TopologyPtr topology) override { sweeper_->setTopology(std::move(topology)); }
  telemetry::CounterSnapshotPtr sweep() override { return sweeper_->sweep(); }
  std::optional<mad::MadEngineStats> engineStats() const override { return engine_->stats(); }
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

 private:
  mad::SteadyClock clock_;
  mad::UmadTransport transport_;
  std::unique_ptr<mad::MadEngine> engine_;
  std::unique_ptr<telemetry::CounterSweeper> sweeper_;
};

}  // namespace

CounterSourcePtr makeUmadCounterSource(const UmadCounterOptions& options) {
  return std::make_unique<UmadCounterSource>(options);
}

}  // namespace ibfabric::api
