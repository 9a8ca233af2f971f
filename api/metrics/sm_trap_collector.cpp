// The SM trap collector: the subscription to the subnet manager's traps (SA InformInfo,
// telemetry/trap_subscription.h). Nothing when it is off (config sm_traps: false).
#include "api/metrics/collectors.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kSubscribed{
    "ibfabric_sm_trap_subscribed",
    "1 while the SM has accepted the subscription to traps 64, 65, 128 and 144", "gauge"};
constexpr MetricFamily kReports{"ibfabric_sm_trap_reports_total",
                                "Trap Reports received from the SM, by trap number", "counter"};
constexpr MetricFamily kFailures{
    "ibfabric_sm_trap_subscription_failures_total",
    "Subscription rounds the SM refused or did not answer, and SA port opens that failed",
    "counter"};

class SmTrapCollector final : public Collector {
 public:
  std::string_view name() const override { return "sm_traps"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    if (!c.state.traps) return;
    const auto& t = *c.state.traps;
    out.family(kSubscribed);
    out.sampleU(kSubscribed.name, "", t.subscribed ? 1 : 0);
    out.family(kReports);
    for (const int trap : {64, 65, 128, 144}) {
      const auto it = t.reports.find(static_cast<std::uint16_t>(trap));
      out.sampleU(kReports.name, Labels("trap", std::to_string(trap)),
                  it == t.reports.end() ? 0 : it->second);
    }
    out.family(kFailures);
    out.sampleU(kFailures.name, "", t.failures);
  }
};

}  // namespace

CollectorPtr smTrapCollector() { return std::make_unique<SmTrapCollector>(); }

}  // namespace ibfabric::api
