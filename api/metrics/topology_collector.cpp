// The topology collector: the last crawl, every node's identity, the fabric's size by state and
// its comparison with the expected topology. The per-node families (node_info, expected node
// present) keep the nodes of the page's shard (shard_owner.h); the counts are fabric-wide, in
// every shard.
#include <algorithm>
#include <chrono>
#include <map>

#include "api/metrics/collectors.h"
#include "api/metrics/shard_owner.h"
#include "discovery/fabric_memory.h"
#include "discovery/formats.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kCrawlDuration{"ibfabric_crawl_duration_seconds",
                                      "Duration of the last successful crawl", "gauge"};
constexpr MetricFamily kLastCrawl{"ibfabric_last_crawl_timestamp_seconds",
                                  "When the last successful crawl finished (Unix time)", "gauge"};
constexpr MetricFamily kNodeInfo{"ibfabric_node_info", "Identity of every node (value 1)", "gauge"};
constexpr MetricFamily kSwitches{
    "ibfabric_fabric_switches",
    "Switches by state: active (in the last crawl), missing (expected, not in the crawl)", "gauge"};
constexpr MetricFamily kCas{"ibfabric_fabric_cas",
                            "Channel adapters by state: active (a port Active), down (no port "
                            "Active), missing (expected, not in the crawl)",
                            "gauge"};
constexpr MetricFamily kLinks{"ibfabric_fabric_links",
                              "Cables in the last crawl by state (a partition): active (both ends "
                              "Active, healthy), degraded, faulty (link health), down (an end not "
                              "Active)",
                              "gauge"};
constexpr MetricFamily kHosts{
    "ibfabric_fabric_hosts",
    "Hosts by the worst state of their HCA links: ok, degraded, faulty (faulty or down)", "gauge"};
constexpr MetricFamily kMissingNodes{
    "ibfabric_fabric_missing_nodes",
    "Nodes of the expected topology absent from the last crawl, by type", "gauge"};
constexpr MetricFamily kMissingLinks{"ibfabric_fabric_missing_links",
                                     "Cables of the expected topology absent from the last crawl "
                                     "(between present nodes, or of missing nodes) or miswired",
                                     "gauge"};
constexpr MetricFamily kExpectedPresent{
    "ibfabric_expected_node_present",
    "1 when the node of the expected topology is in the last crawl, else 0", "gauge"};

constexpr MetricFamily kNodeMissingSince{
    "ibfabric_node_missing_since_timestamp_seconds",
    "When a node the daemon has seen went missing from the fabric (Unix time): one series per "
    "remembered missing node, gone when it is back or forgotten",
    "gauge"};

using Health = std::map<telemetry::PortKey, telemetry::LinkState>;

/// Health of the links of the last evaluation, by either end.
Health healthByEnd(const ServiceState& s) {
  Health out;
  if (!s.health) return out;
  for (const auto& r : *s.health) {
    out[r.a] = r.state;
    out[r.b] = r.state;
  }
  return out;
}

bool bothActive(const Topology& t, const Link& l) { return t.activity(l) == LinkActivity::kActive; }

void writeCrawl(MetricWriter& out, const ServiceState& s) {
  if (!s.crawl.lastSuccess) return;
  out.family(kCrawlDuration);
  out.sample(kCrawlDuration.name, "", std::chrono::duration<double>(s.crawl.lastDuration).count());
  out.family(kLastCrawl);
  out.sample(kLastCrawl.name, "",
             std::chrono::duration<double>(s.crawl.lastSuccess->time_since_epoch()).count());
}

void writeNodes(MetricWriter& out, const Topology& t, const MetricsShard& shard) {
  out.family(kNodeInfo);
  for (const Node& n : t.nodes()) {
    if (!shard.keeps(nodeShardOwner(t, n))) continue;
    Labels l;  // in name order
    l.add("guid", toString(n.guid))
        .add("host", n.host ? t.hosts()[*n.host].name : "")
        .add("level", levelName(n.level))
        .add("lid", std::to_string(n.lid().value()))
        .add("node", n.description)
        .add("rail", n.rail >= 0 ? std::to_string(n.rail) : "")
        .add("type", n.isSwitch() ? "switch"
                     : n.isCa()   ? "ca"
                                  : "router");
    out.sampleU(kNodeInfo.name, l, 1);
  }
}

/// The nodes the model remembers as missing (discovery/fabric_memory.h), by GUID; names and
/// types in ibfabric_node_info, which keeps them.
void writeMissingNodes(MetricWriter& out, const Topology& t, const MetricsShard& shard) {
  bool any = false;
  for (const Node& n : t.nodes()) {
    if (!n.missing || !shard.keeps(nodeShardOwner(t, n))) continue;
    if (!any) out.family(kNodeMissingSince);
    any = true;
    out.sample(kNodeMissingSince.name, Labels("guid", toString(n.guid)),
               std::chrono::duration<double>(n.missing->since.time_since_epoch()).count());
  }
}

/// Missing: the expected topology's nodes not crawled when one is configured, else the nodes the
/// model remembers but the last crawl did not see (discovery/fabric_memory.h).
void writeNodeCounts(MetricWriter& out, const Topology& t, const TopologyComparison* cmp) {
  std::size_t casActive = 0, casDown = 0;
  for (const Node& n : t.nodes()) {
    if (!n.isCa() || n.missing) continue;
    bool active = false;
    for (const auto& p : n.ports) active = active || (p && p->state == PortState::kActive);
    ++(active ? casActive : casDown);
  }
  const MissingCounts remembered = countMissing(t);
  out.family(kSwitches);
  out.sampleU(kSwitches.name, Labels("state", "active"), t.switchCount() - remembered.switches);
  out.sampleU(kSwitches.name, Labels("state", "missing"),
              cmp ? cmp->missingSwitches : remembered.switches);
  out.family(kCas);
  out.sampleU(kCas.name, Labels("state", "active"), casActive);
  out.sampleU(kCas.name, Labels("state", "down"), casDown);
  out.sampleU(kCas.name, Labels("state", "missing"), cmp ? cmp->missingCas : remembered.cas);
}

/// Links: a partition (sum = cables). down: an end not Active; else by link health.
void writeLinkCounts(MetricWriter& out, const Topology& t, const Health& health) {
  std::size_t count[4] = {0, 0, 0, 0};  // active, degraded, faulty, down
  for (const Link& l : t.links()) {
    if (!bothActive(t, l)) {
      ++count[3];
      continue;
    }
    auto it = health.find({t.node(l.a.node).guid, l.a.port});
    const auto st = it == health.end() ? telemetry::LinkState::kOk : it->second;
    ++count[st == telemetry::LinkState::kDegraded ? 1
            : st == telemetry::LinkState::kFaulty ? 2
            : st == telemetry::LinkState::kDown   ? 3
                                                  : 0];
  }
  out.family(kLinks);
  const char* states[] = {"active", "degraded", "faulty", "down"};
  for (int i = 0; i < 4; ++i) out.sampleU(kLinks.name, Labels("state", states[i]), count[i]);
}

/// Hosts: the worst state of their HCAs' links (a link down counts as faulty).
void writeHostCounts(MetricWriter& out, const Topology& t, const Health& health) {
  std::size_t count[3] = {0, 0, 0};  // ok, degraded, faulty
  for (const Host& h : t.hosts()) {
    int worst = 0;
    for (NodeIndex i : h.hcas) {
      const Node& n = t.node(i);
      for (const auto& p : n.ports) {
        if (!p || !p->remote) continue;
        if (p->state != PortState::kActive) {
          worst = 2;
          continue;
        }
        auto it = health.find({n.guid, p->num});
        if (it == health.end()) continue;
        const int v = it->second == telemetry::LinkState::kDegraded ? 1
                      : it->second == telemetry::LinkState::kOk     ? 0
                                                                    : 2;
        worst = std::max(worst, v);
      }
    }
    ++count[worst];
  }
  out.family(kHosts);
  const char* states[] = {"ok", "degraded", "faulty"};
  for (int i = 0; i < 3; ++i) out.sampleU(kHosts.name, Labels("state", states[i]), count[i]);
}

/// Whether `shard` exports the expected-node series of `n`: by the crawled node's owner, by the
/// planned GUID for a node not crawled, in shard 0 for a planned node without a GUID.
bool keepsExpected(const MetricsShard& shard, const Topology& t, const ExpectedNodePresence& n) {
  if (shard.whole()) return true;
  const auto guid = parseGuid(n.guid);
  if (!guid) return shard.index == 0;
  const Node* live = t.findNode(*guid);
  return shard.keeps(live ? nodeShardOwner(t, *live) : *guid);
}

void writeExpected(MetricWriter& out, const TopologyComparison& cmp, const Topology& t,
                   const MetricsShard& shard) {
  out.family(kMissingNodes);
  out.sampleU(kMissingNodes.name, Labels("type", "switch"), cmp.missingSwitches);
  out.sampleU(kMissingNodes.name, Labels("type", "ca"), cmp.missingCas);
  out.sampleU(kMissingNodes.name, Labels("type", "router"), cmp.missingRouters);
  out.family(kMissingLinks);
  const auto counts = cmp.result.counts();
  std::size_t missingLinks = counts.missingLinks + counts.miswired;
  // Cables of missing nodes: the expected cable count minus those found intact or accounted.
  // (intactLinks includes the cables at another rate than planned: they are there.)
  const std::size_t accounted = cmp.result.intactLinks + counts.missingLinks + counts.miswired;
  if (cmp.result.expectedLinks > accounted) missingLinks += cmp.result.expectedLinks - accounted;
  out.sampleU(kMissingLinks.name, "", missingLinks);
  out.family(kExpectedPresent);
  for (const auto& n : cmp.nodes) {
    if (!keepsExpected(shard, t, n)) continue;
    Labels l;
    l.add("guid", n.guid).add("node", n.name).add("type", n.type);
    out.sampleU(kExpectedPresent.name, l, n.present ? 1 : 0);
  }
}

class TopologyCollector final : public Collector {
 public:
  std::string_view name() const override { return "topology"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    const ServiceState& s = c.state;
    writeCrawl(out, s);
    if (!s.topology) return;
    const Topology& t = *s.topology;
    writeNodes(out, t, c.shard);
    writeMissingNodes(out, t, c.shard);
    const auto health = healthByEnd(s);
    writeNodeCounts(out, t, s.comparison.get());
    writeLinkCounts(out, t, health);
    writeHostCounts(out, t, health);
    if (s.comparison) writeExpected(out, *s.comparison, t, c.shard);
  }
};

}  // namespace

CollectorPtr topologyCollector() { return std::make_unique<TopologyCollector>(); }

}  // namespace ibfabric::api
