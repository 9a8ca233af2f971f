// The job collector (live): per job its hottest links only (JobServiceOptions::hottestLinks, 3 by
// default), never a series per port per job, from the JobService's last view (refreshed by its
// follower once per state; a scrape computes nothing). The link of a series is named by its
// transmitting port (guid, port), as the port families name it. The job is `job_id`: Prometheus
// gives every target a `job` label of its own.
#include "api/metrics/collectors.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kInfo{"ibfabric_job_info",
                             "A job known to the daemon (pool allocation or reported by a "
                             "scheduler): source, traffic pattern; value 1",
                             "gauge"};
constexpr MetricFamily kHosts{"ibfabric_job_hosts", "Hosts of a job", "gauge"};
constexpr MetricFamily kUtilization{
    "ibfabric_job_link_utilization_ratio",
    "Utilization now (smoothed, 0..1) of the hottest links a job's flows use, named by their "
    "transmitting port; only the hottest few per job",
    "gauge"};
constexpr MetricFamily kShare{
    "ibfabric_job_link_share_ratio",
    "The job's share (0..1) of all the jobs' traffic weight on each of its hottest links", "gauge"};
constexpr MetricFamily kAttributions{
    "ibfabric_job_attributions_total",
    "Full recomputations of the job attribution (tables, topology or jobs changed)", "counter"};
constexpr MetricFamily kAttributionSeconds{
    "ibfabric_job_attribution_duration_seconds",
    "Duration of the last full job attribution, and of the last join with the link load", "gauge"};

class JobCollector final : public Collector {
 public:
  explicit JobCollector(const JobService& jobs) : jobs_(jobs) {}
  std::string_view name() const override { return "jobs"; }
  void collect(const CollectContext&, MetricWriter& out) const override {
    const JobsViewPtr v = jobs_.latest();
    writeStats(out);
    if (!v) return;
    out.family(kInfo);
    for (const auto& j : v->jobs)
      out.sample(kInfo.name,
                 Labels("job_id", j.id)
                     .add("source", toString(j.source))
                     .add("pattern", routing::toString(j.pattern)),
                 1);
    out.family(kHosts);
    for (const auto& j : v->jobs) out.sampleU(kHosts.name, Labels("job_id", j.id), j.hosts.size());
    if (!v->attribution) return;
    writeLinks(out, *v);
  }

 private:
  void writeStats(MetricWriter& out) const {
    const JobStats s = jobs_.stats();
    out.family(kAttributions);
    out.sampleU(kAttributions.name, "", s.attributions);
    out.family(kAttributionSeconds);
    out.sample(kAttributionSeconds.name, Labels("step", "attribution"), s.lastAttributionSeconds);
    out.sample(kAttributionSeconds.name, Labels("step", "join"), s.lastJoinSeconds);
  }

  static void writeLinks(MetricWriter& out, const JobsView& v) {
    const Topology& t = v.engine->index().topology();
    const auto& load = v.engine->load();
    auto labels = [&](const std::string& job, routing::DirectedLinkId d) {
      const PortRef from = load.sender(d);
      return Labels("job_id", job)
          .add("guid", toString(t.node(from.node).guid))
          .add("port", std::to_string(from.port.value()));
    };
    out.family(kUtilization);
    for (std::size_t i = 0; i < v.jobs.size(); ++i)
      for (const auto& h : v.hottest[i])
        out.sample(kUtilization.name, labels(v.jobs[i].id, h.use.link), h.load.utilization);
    out.family(kShare);
    for (std::size_t i = 0; i < v.jobs.size(); ++i)
      for (const auto& h : v.hottest[i])
        out.sample(kShare.name, labels(v.jobs[i].id, h.use.link), h.use.share);
  }

  const JobService& jobs_;
};

}  // namespace

CollectorPtr jobCollector(const JobService& jobs) { return std::make_unique<JobCollector>(jobs); }

}  // namespace ibfabric::api
