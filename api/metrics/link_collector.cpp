// The link collector: per cable, its health from the last sweep's evaluation, whether it runs
// below the rate both ends enable, and its active data rate (a link property: both ends train to
// one rate). A cable's series
// carry its identity: both ends (guid, port of the `a` end; remote_guid, remote_port of the
// other), because a (guid, port) recabled to another port is another cable, and IbLinkDown's
// one-hour memory of vanished cables must not merge the two. The names an operator reads (node,
// remote_node, level) are on ibfabric_link_info, one series per cable. Cables outside the page's
// shard are left out (shard_owner.h: a cable goes with the owner of its `a` end's port).
#include <algorithm>

#include "api/metrics/collectors.h"
#include "api/metrics/shard_owner.h"
#include "discovery/formats.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kHealth{"ibfabric_link_health_id",
                               "Link health: 0 ok, 1 degraded, 2 faulty, 3 down", "gauge"};
constexpr MetricFamily kDegraded{"ibfabric_link_degraded",
                                 "1 when the link runs below the rate both ends enable", "gauge"};
constexpr MetricFamily kDataRate{
    "ibfabric_link_data_rate_bytes_per_second",
    "Active data rate of the cable (encoding overhead removed); absent while it is not up",
    "gauge"};
constexpr MetricFamily kInfo{"ibfabric_link_info",
                             "Descriptive labels of every cable (value 1): level (the higher of "
                             "its ends'), node and remote_node; join on (guid, port, remote_guid, "
                             "remote_port)",
                             "gauge"};

double bytesPerSecond(const LinkRate& r) { return r.dataGbps() * 1e9 / 8; }

/// The families after ibfabric_link_health_id, written in the same pass over the cables.
struct CableFamilies {
  std::string degradedText, rateText, infoText;
  MetricWriter degraded{degradedText}, rate{rateText}, info{infoText};

  void add(const Topology& t, const telemetry::LinkHealthReport& r, const Labels& id) {
    const Link* link = r.link < t.links().size() ? &t.links()[r.link] : nullptr;
    degraded.sampleU(kDegraded.name, id, link && link->belowEnabled() ? 1 : 0);
    if (link && link->rate) rate.sample(kDataRate.name, id, bytesPerSecond(*link->rate));
    const Node* a = t.findNode(r.a.node);
    const Node* b = t.findNode(r.b.node);
    Labels full(id);
    full.add("level",
             levelName(std::max(a ? a->level : kUnknownLevel, b ? b->level : kUnknownLevel)))
        .add("node", r.aDescription)
        .add("remote_node", r.bDescription);
    info.sampleU(kInfo.name, full, 1);
  }
  void writeTo(MetricWriter& out) const {
    out.family(kDegraded);
    out.samples(degradedText);
    out.family(kDataRate);
    out.samples(rateText);
    out.family(kInfo);
    out.samples(infoText);
  }
};

class LinkCollector final : public Collector {
 public:
  std::string_view name() const override { return "links"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    const ServiceState& s = c.state;
    if (!s.counters || !s.counters->topology || !s.health) return;
    const Topology& t = *s.counters->topology;
    CableFamilies rest;
    out.family(kHealth);
    for (const auto& r : *s.health) {
      if (!c.shard.keeps(portShardOwner(t, r.a))) continue;
      Labels id("guid", toString(r.a.node));
      id.add("port", std::to_string(r.a.port.value()))
          .add("remote_guid", toString(r.b.node))
          .add("remote_port", std::to_string(r.b.port.value()));
      out.sampleU(kHealth.name, id, static_cast<std::uint64_t>(r.state));
      rest.add(t, r, id);
    }
    rest.writeTo(out);
  }
};

}  // namespace

CollectorPtr linkCollector() { return std::make_unique<LinkCollector>(); }

}  // namespace ibfabric::api
