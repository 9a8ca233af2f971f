// The daemon collector: is the daemon ready, how often did its reads of the fabric fail.
#include "api/metrics/collectors.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kReady{"ibfabric_ready",
                              "1 once the first crawl and the first sweep are done", "gauge"};
constexpr MetricFamily kFailures{"ibfabric_collector_failures_total",
                                 "Failed attempts per collector", "counter"};
constexpr MetricFamily kWaiting{
    "ibfabric_waiting_for_subnet",
    "1 while the daemon waits for its local port to be Active with a LID and an SM", "gauge"};
constexpr MetricFamily kProxyRestarts{
    "ibfabric_mad_proxy_restarts_total",
    "The sweeps' umad port (a MAD proxy child in subprocess mode) re-created after a failure",
    "counter"};
constexpr MetricFamily kProxyStarts{
    "ibfabric_mad_proxy_starts_total",
    "The sweeps' umad port (a MAD proxy child in subprocess mode) opened, the first included",
    "counter"};
constexpr MetricFamily kSuspect{
    "ibfabric_crawl_suspect_total",
    "Crawls that lost much of the fabric while MADs failed: published as suspect, model kept",
    "counter"};

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
    out.family(kWaiting);
    out.sampleU(kWaiting.name, "", s.subnet.waiting ? 1 : 0);
    out.family(kProxyStarts);
    out.sampleU(kProxyStarts.name, "", s.counterSourceStarts);
    out.family(kProxyRestarts);
    out.sampleU(kProxyRestarts.name, "", s.counterSourceRestarts);
    out.family(kSuspect);
    out.sampleU(kSuspect.name, "", s.crawlCheck.suspectTotal);
  }
};

}  // namespace

CollectorPtr daemonCollector() { return std::make_unique<DaemonCollector>(); }

}  // namespace ibfabric::api
