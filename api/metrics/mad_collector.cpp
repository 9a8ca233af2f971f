// The sweep collector: the last counter sweep and the MAD engine that ran it.
#include <chrono>

#include "api/metrics/collectors.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kSweepDuration{"ibfabric_sweep_duration_seconds",
                                      "Duration of the last successful counter sweep", "gauge"};
constexpr MetricFamily kLastSweep{"ibfabric_last_sweep_timestamp_seconds",
                                  "When the last successful counter sweep finished (Unix time)",
                                  "gauge"};
constexpr MetricFamily kSent{"ibfabric_mad_sent_total",
                             "MADs sent by the sweep engine (attempts, retries included)",
                             "counter"};
constexpr MetricFamily kTimeouts{"ibfabric_mad_timeouts_total", "MAD attempts that timed out",
                                 "counter"};
constexpr MetricFamily kRetries{"ibfabric_mad_retries_total", "MAD re-sends", "counter"};

class MadCollector final : public Collector {
 public:
  std::string_view name() const override { return "mad"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    const ServiceState& s = c.state;
    if (s.sweep.lastSuccess) {
      out.family(kSweepDuration);
      out.sample(kSweepDuration.name, "",
                 std::chrono::duration<double>(s.sweep.lastDuration).count());
      out.family(kLastSweep);
      out.sample(kLastSweep.name, "",
                 std::chrono::duration<double>(s.sweep.lastSuccess->time_since_epoch()).count());
    }
    if (!s.engine) return;
    out.family(kSent);
    out.sampleU(kSent.name, "", s.engine->sent);
    out.family(kTimeouts);
    out.sampleU(kTimeouts.name, "", s.engine->timeouts);
    out.family(kRetries);
    out.sampleU(kRetries.name, "", s.engine->retries);
  }
};

}  // namespace

CollectorPtr madCollector() { return std::make_unique<MadCollector>(); }

}  // namespace ibfabric::api
