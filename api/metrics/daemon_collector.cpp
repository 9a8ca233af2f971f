// The daemon collector: is the daemon ready, how often did its reads of the fabric fail.
#include "api/metrics/collectors.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kReady{"ibfabric_ready",
                              "1 once the first crawl and the first sweep are done", "gauge"};
constexpr MetricFamily kFailures{"ibfabric_collector_failures_total",
                                 "Failed attempts per collector", "counter"};

class DaemonCollector final : public Collector {
 public:
  std::string_view name() const override { return "daemon"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    const ServiceState& s = c.state;
    out.family(kReady);
    out.sampleU(kReady.name, "", s.ready() ? 1 : 0);
    out.family(kFailures);
    out.sampleU(kFailures.name, Labels("collector", "crawl"), s.crawl.failures);
    out.sampleU(kFailures.name, Labels("collector", "sweep"), s.sweep.failures);
  }
};

}  // namespace

CollectorPtr daemonCollector() { return std::make_unique<DaemonCollector>(); }

}  // namespace ibfabric::api
