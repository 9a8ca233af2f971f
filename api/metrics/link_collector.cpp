// The link collector: per cable, its health from the last sweep's evaluation.
#include <algorithm>

#include "api/metrics/collectors.h"
#include "discovery/formats.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kHealth{"ibfabric_link_health_id",
                               "Link health: 0 ok, 1 degraded, 2 faulty, 3 down", "gauge"};
constexpr MetricFamily kDegraded{"ibfabric_link_degraded",
                                 "1 when the link runs below the rate both ends enable", "gauge"};

class LinkCollector final : public Collector {
 public:
  std::string_view name() const override { return "links"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    const ServiceState& s = c.state;
    if (!s.counters || !s.counters->topology || !s.health) return;
    const Topology& t = *s.counters->topology;
    std::string degradedText;  // both families in one pass
    MetricWriter degraded(degradedText);
    out.family(kHealth);
    for (const auto& r : *s.health) {
      const Node* a = t.findNode(r.a.node);
      const Node* b = t.findNode(r.b.node);
      Labels l;
      l.add("guid", toString(r.a.node))
          .add("level",
               levelName(std::max(a ? a->level : kUnknownLevel, b ? b->level : kUnknownLevel)))
          .add("node", r.aDescription)
          .add("port", std::to_string(r.a.port.value()))
          .add("remote_guid", toString(r.b.node))
          .add("remote_node", r.bDescription)
          .add("remote_port", std::to_string(r.b.port.value()));
      out.sampleU(kHealth.name, l, static_cast<std::uint64_t>(r.state));
      const bool below = r.link < t.links().size() && t.links()[r.link].belowEnabled();
      degraded.sampleU(kDegraded.name, l, below ? 1 : 0);
    }
    out.family(kDegraded);
    out.samples(degradedText);
  }
};

}  // namespace

CollectorPtr linkCollector() { return std::make_unique<LinkCollector>(); }

}  // namespace ibfabric::api
