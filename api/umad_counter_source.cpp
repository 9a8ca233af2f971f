// The umad-backed CounterSource: one umad port, opened once and kept for the source's life (the
// daemon's, unless the sweep thread has to re-create it after a failure).
#include <memory>

#include "api/counter_source.h"
#include "routing/lft_reader.h"
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
    lfts_ = std::make_unique<routing::LftReader>(*engine_, clock_);
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
  std::string describe() const override {
    return "umad " + transport_.caName() + ":" + std::to_string(transport_.portNum());
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
