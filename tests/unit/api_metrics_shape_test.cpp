// The shape of /metrics at scale: per-port and per-link series carry identity labels only (the
// names are on the _info series), the operator's choices (ports, counter sets, collectors) each
// change exactly what they name, and shards split the per-switch series of a fabric into
// disjoint parts whose union is the whole page while every shard keeps the fabric-wide families.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "api/metrics/collectors.h"
#include "api/metrics/metrics.h"
#include "api/service/expected_topology.h"
#include "api/service/routing_state.h"
#include "discovery/net_topology.h"
#include "discovery/netfile.h"
#include "routing/synthetic_tables.h"
#include "telemetry/link_health_eval.h"
#include "tests/fakes/fake_sources.h"
#include "tests/support/fabrics.h"
#include "tests/support/test_paths.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;

/// A two-level fabric (4 leaves, 2 spines, 3 hosts each) after two sweeps, with link health,
/// route analysis and an expected topology of 4 hosts per leaf (some planned nodes missing).
ServiceState fabricState() {
  const auto t0 = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
  ServiceState s;
  s.started = t0;
  s.topology = testing::routableTopology(testing::twoLevel(4, 2, 3));
  auto control = std::make_shared<FakeCounterControl>();
  FakeCounterSource source(control);
  source.setTopology(s.topology);
  auto first = source.sweep();
  auto second = std::make_shared<telemetry::CounterSnapshot>(*source.sweep());
  for (std::size_t i = 0; i < second->ports.size(); ++i)
    second->ports[i].at = first->ports[i].at + 1s;
  s.counters = second;
  s.rates = std::make_shared<const telemetry::RatesTable>(telemetry::computeRates(*first, *second));
  s.health = std::make_shared<std::vector<telemetry::LinkHealthReport>>(
      telemetry::evaluateLinkHealth(*s.topology, [](telemetry::PortKey) { return nullptr; }));
  s.crawl.runs = 1;
  s.crawl.lastSuccess = t0 + 1s;
  s.sweep.runs = 2;
  s.sweep.lastSuccess = t0 + 3s;
  s.forwarding = routing::computeShortestPathTables(s.topology);
  s.routeAnalysis = analyzeRoutes(*s.forwarding);
  s.routes.lastAttempt = s.routes.lastSuccess = t0 + 2s;
  ExpectedTopology expected;
  expected.path = "expected.net";
  expected.fabric = testing::routableNet(testing::twoLevel(4, 2, 4));
  s.comparison = compareWithExpected(expected, *s.topology);
  return s;
}

/// The state collectors' text of one shard (the collector status follows them on the page and
/// is the same in every shard).
std::string render(const ServiceState& s, const MetricsOptions& o, MetricsShard shard = {}) {
  telemetry::EventLog log;
  std::string text;
  runCollectors(stateCollectors(), CollectContext{s, log, o, shard}, text);
  return text;
}

MetricsOptions everything() {
  MetricsOptions o;
  o.ports = PortScope::kAll;
  o.counterSets = MetricsOptions::allCounterSets();
  return o;
}

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
};

/// The samples of a page (HELP/TYPE lines skipped); label values without escapes (as here).
std::vector<Sample> samples(const std::string& text) {
  static const std::regex kLabel(R"re(([a-z_]+)="([^"]*)")re");
  std::vector<Sample> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    Sample smp;
    const auto brace = line.find('{');
    smp.name = line.substr(0, std::min(brace, line.find(' ')));
    if (brace != std::string::npos) {
      const std::string labels = line.substr(brace + 1, line.find('}') - brace - 1);
      for (std::sregex_iterator it(labels.begin(), labels.end(), kLabel), end; it != end; ++it)
        smp.labels[(*it)[1]] = (*it)[2];
    }
    out.push_back(std::move(smp));
  }
  return out;
}

std::set<std::string> labelNames(const Sample& s) {
  std::set<std::string> n;
  for (const auto& [k, v] : s.labels) n.insert(k);
  return n;
}

std::set<std::string> families(const std::string& text) {
  std::set<std::string> out;
  for (const auto& s : samples(text)) out.insert(s.name);
  return out;
}

bool startsWith(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

TEST(ApiMetricsShape, PerPortAndPerLinkSeriesCarryIdentityOnly) {
  const auto s = fabricState();
  std::size_t ports = 0, links = 0, infos = 0;
  for (const auto& smp : samples(render(s, everything()))) {
    const auto names = labelNames(smp);
    if (smp.name == "ibfabric_port_info") {
      ++infos;
      EXPECT_EQ(names, (std::set<std::string>{"guid", "port", "host", "level", "node", "rail",
                                              "remote_guid", "remote_host", "remote_node",
                                              "remote_port"}));
    } else if (smp.name == "ibfabric_port_utilization_ratio") {
      ++ports;
      EXPECT_EQ(names, (std::set<std::string>{"guid", "port", "direction"})) << smp.name;
    } else if (startsWith(smp.name, "ibfabric_port_")) {
      ++ports;
      EXPECT_EQ(names, (std::set<std::string>{"guid", "port"})) << smp.name;
    } else if (smp.name == "ibfabric_link_info") {
      EXPECT_EQ(names, (std::set<std::string>{"guid", "port", "remote_guid", "remote_port", "level",
                                              "node", "remote_node"}));
    } else if (startsWith(smp.name, "ibfabric_link_")) {
      ++links;
      EXPECT_EQ(names, (std::set<std::string>{"guid", "port", "remote_guid", "remote_port"}))
          << smp.name;
    }
  }
  EXPECT_EQ(infos, s.counters->ports.size());
  EXPECT_GT(ports, 20 * infos);
  EXPECT_EQ(links, 3 * s.topology->links().size());  // health, degraded and rate per cable
}

TEST(ApiMetricsShape, ACableCarriesItsRateOnceWhateverTheCounterSets) {
  auto s = fabricState();
  MetricsOptions none;
  none.counterSets = 0;
  std::map<std::string, double> rate;  // "guid/port" of the a end -> bytes/s
  const std::regex kLine(
      R"re(^ibfabric_link_data_rate_bytes_per_second\{guid="([^"]+)",port="(\d+)",[^}]*\} (\S+)$)re");
  std::istringstream in(render(s, none));
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, kLine)) rate[m[1].str() + "/" + m[2].str()] = std::stod(m[3]);
  }
  const Topology& t = *s.topology;
  ASSERT_EQ(rate.size(), t.links().size());
  for (const auto& l : t.links()) {
    ASSERT_TRUE(l.rate);
    const std::string a = toString(t.node(l.a.node).guid) + "/" + std::to_string(l.a.port.value());
    ASSERT_TRUE(rate.count(a)) << a;
    EXPECT_DOUBLE_EQ(rate[a], l.rate->dataGbps() * 1e9 / 8) << a;
  }
  EXPECT_EQ(families(render(s, none)).count("ibfabric_port_link_data_rate_bytes_per_second"), 0u)
      << "the per-port rates are the link set's";
}

TEST(ApiMetricsShape, PortInfoCarriesTheNames) {
  const auto s = fabricState();
  const std::string all = render(s, everything());
  // The first host's HCA: 8000 bytes after two sweeps of the fake (2 x 1000 4-octet units).
  const Node& ca = s.topology->node(s.topology->hosts().at(0).hcas.at(0));
  const Node& leaf = s.topology->node(ca.port(PortNum{1})->remote->node);
  const std::string caId = "guid=\"" + toString(ca.guid) + "\",port=\"1\"";
  EXPECT_NE(all.find("ibfabric_port_transmit_bytes_total{" + caId + "} 8000\n"), std::string::npos)
      << all;
  EXPECT_NE(
      all.find("ibfabric_port_info{" + caId + ",host=\"" + s.topology->hosts().at(0).name +
               "\",level=\"ca\",node=\"" + ca.description + "\",rail=\"" + std::to_string(ca.rail) +
               "\",remote_guid=\"" + toString(leaf.guid) + "\",remote_host=\"\","),
      std::string::npos)
      << all;
}

TEST(ApiMetricsShape, SwitchPortsByDefaultNamingTheRemoteHca) {
  const auto s = fabricState();
  const auto page = samples(render(s, MetricsOptions{}));
  const Topology& t = *s.topology;
  std::size_t switchPorts = 0, caFacing = 0;
  for (const auto& smp : page) {
    if (!startsWith(smp.name, "ibfabric_port_")) continue;
    const Node* n = t.findNode(*parseGuid(smp.labels.at("guid")));
    ASSERT_NE(n, nullptr);
    EXPECT_TRUE(n->isSwitch()) << smp.name << " of " << n->description;
    if (smp.name != "ibfabric_port_info") continue;
    ++switchPorts;
    const Node* remote = t.findNode(*parseGuid(smp.labels.at("remote_guid")));
    if (!remote || !remote->isCa()) continue;
    ++caFacing;
    EXPECT_EQ(smp.labels.at("remote_node"), remote->description);
    EXPECT_EQ(smp.labels.at("remote_host"), t.hosts().at(*remote->host).name);
  }
  std::size_t polledSwitchPorts = 0;
  for (const auto& p : s.counters->ports) polledSwitchPorts += p.nodeType == NodeType::kSwitch;
  EXPECT_EQ(switchPorts, polledSwitchPorts);
  EXPECT_EQ(caFacing, 12u);  // every HCA, seen from its leaf
}

TEST(ApiMetricsShape, CounterSetsChooseTheirFamiliesOnly) {
  const auto s = fabricState();
  const std::map<CounterSet, std::set<std::string>> expected = {
      {CounterSet::kTraffic,
       {"ibfabric_port_transmit_bytes_total", "ibfabric_port_receive_bytes_total"}},
      {CounterSet::kPackets,
       {"ibfabric_port_transmit_packets_total", "ibfabric_port_receive_packets_total"}},
      {CounterSet::kErrors,
       {"ibfabric_port_symbol_errors_total", "ibfabric_port_link_downed_total",
        "ibfabric_port_receive_errors_total", "ibfabric_port_transmit_discards_total"}},
      {CounterSet::kPhysicalErrors,
       {"ibfabric_port_link_error_recovery_total",
        "ibfabric_port_receive_remote_physical_errors_total",
        "ibfabric_port_local_link_integrity_errors_total",
        "ibfabric_port_excessive_buffer_overrun_errors_total"}},
      {CounterSet::kFilterErrors,
       {"ibfabric_port_receive_switch_relay_errors_total",
        "ibfabric_port_transmit_constraint_errors_total",
        "ibfabric_port_receive_constraint_errors_total", "ibfabric_port_vl15_dropped_total"}},
      {CounterSet::kCongestion, {"ibfabric_port_congestion_ratio"}},
      {CounterSet::kUtilization, {"ibfabric_port_utilization_ratio"}},
      {CounterSet::kLink,
       {"ibfabric_port_state_id", "ibfabric_port_link_data_rate_bytes_per_second",
        "ibfabric_port_link_expected_data_rate_bytes_per_second"}},
      {CounterSet::kXmitWait, {"ibfabric_port_transmit_wait_total"}},
  };
  ASSERT_EQ(expected.size(), kCounterSetCount);
  auto portFamilies = [&](std::uint32_t sets) {
    MetricsOptions o = everything();
    o.counterSets = sets;
    std::set<std::string> out;
    for (const auto& f : families(render(s, o)))
      if (startsWith(f, "ibfabric_port_")) out.insert(f);
    return out;
  };
  EXPECT_EQ(portFamilies(0), (std::set<std::string>{"ibfabric_port_info"}));
  std::set<std::string> union_ = {"ibfabric_port_info"};
  for (const auto& [set, names] : expected) {
    auto want = names;
    want.insert("ibfabric_port_info");
    EXPECT_EQ(portFamilies(MetricsOptions::bit(set)), want) << counterSetName(set);
    EXPECT_EQ(parseCounterSet(counterSetName(set)), set);
    union_.insert(names.begin(), names.end());
  }
  EXPECT_EQ(portFamilies(MetricsOptions::allCounterSets()), union_);
  EXPECT_EQ(union_.size(), 1u + 17 + 1 + 1 + 3);  // info, counters, utilization, congestion, link
  EXPECT_FALSE(parseCounterSet("rates"));
}

TEST(ApiMetricsShape, TheDefaultsExportEveryPortAndLinkFamilyTheAlertsRead) {
  std::ifstream in(testing::sourceDir() / "dashboards" / "prometheus" / "ibfabric-alerts.yml");
  ASSERT_TRUE(in);
  const std::string rules(std::istreambuf_iterator<char>(in), {});
  static const std::regex kFamily(R"(ibfabric_(port|link)_[a-z_]+)");
  std::set<std::string> read;
  for (std::sregex_iterator it(rules.begin(), rules.end(), kFamily), end; it != end; ++it)
    read.insert(it->str());
  ASSERT_GE(read.size(), 10u);
  const auto exported = families(render(fabricState(), MetricsOptions{}));
  for (const auto& f : read) EXPECT_TRUE(exported.count(f)) << f << " is not exported by default";
}

TEST(ApiMetricsShape, DisabledCollectorsNeitherRenderNorReport) {
  const auto s = fabricState();
  telemetry::EventLog log;
  MetricsOptions o;
  o.disabledCollectors = {"links", "routing"};
  const std::string page = renderMetrics(s, log, o);
  EXPECT_EQ(page.find("ibfabric_link_health_id"), std::string::npos);
  EXPECT_EQ(page.find("ibfabric_route_pairs"), std::string::npos);
  EXPECT_EQ(page.find("collector=\"links\""), std::string::npos);
  EXPECT_EQ(page.find("collector=\"routing\""), std::string::npos);
  EXPECT_NE(page.find("ibfabric_collector_success{collector=\"ports\"} 1"), std::string::npos);
  EXPECT_NE(page.find("ibfabric_collector_success{collector=\"routes\"} 1"), std::string::npos)
      << "the fabric reads are reported still";
  const std::string whole = renderMetrics(s, log);
  EXPECT_NE(whole.find("ibfabric_link_health_id"), std::string::npos);
  EXPECT_NE(whole.find("collector=\"routing\""), std::string::npos);
}

/// Families whose series a shard splits; every other family is whole in every shard.
bool sharded(const std::string& name) {
  return startsWith(name, "ibfabric_port_") || startsWith(name, "ibfabric_link_") ||
         name == "ibfabric_node_info" || name == "ibfabric_expected_node_present" ||
         name == "ibfabric_uplink_route_imbalance_ratio";
}

std::vector<std::string> lines(const std::string& text, bool shardedOnes) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      if (!shardedOnes) out.push_back(line);  // every shard has every family's header
      continue;
    }
    const std::string name = line.substr(0, line.find_first_of("{ "));
    if (sharded(name) == shardedOnes) out.push_back(line);
  }
  return out;
}

TEST(ApiMetricsShape, ShardsAreDisjointAndTheirUnionIsTheWholePage) {
  const auto s = fabricState();
  for (const MetricsOptions& o : {MetricsOptions{}, everything()}) {
    const std::string whole = render(s, o);
    auto wholeSharded = lines(whole, true);
    std::sort(wholeSharded.begin(), wholeSharded.end());
    ASSERT_GT(wholeSharded.size(), 100u);
    for (unsigned n : {1u, 2u, 3u, 7u}) {
      std::vector<std::string> all;
      for (unsigned i = 0; i < n; ++i) {
        const std::string part = render(s, o, MetricsShard{i, n});
        EXPECT_EQ(lines(part, false), lines(whole, false)) << "shard " << i << "/" << n;
        const auto mine = lines(part, true);
        if (n > 1) {
          EXPECT_LT(mine.size(), wholeSharded.size()) << "shard " << i << "/" << n;
        }
        all.insert(all.end(), mine.begin(), mine.end());
      }
      std::sort(all.begin(), all.end());
      EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << n << " shards overlap";
      EXPECT_EQ(all, wholeSharded) << n << " shards";
    }
  }
}

TEST(ApiMetricsShape, AShardKeepsALeafWithItsHcasAndTheirCables) {
  const auto s = fabricState();
  const Topology& t = *s.topology;
  const Node& ca = t.node(t.hosts().at(0).hcas.at(0));
  const Node& leaf = t.node(ca.port(PortNum{1})->remote->node);
  const unsigned n = 5;
  unsigned mine = 0;
  while (!MetricsShard{mine, n}.keeps(leaf.guid)) ++mine;
  const std::string part = render(s, everything(), MetricsShard{mine, n});
  const std::string caGuid = "guid=\"" + toString(ca.guid) + "\"";
  EXPECT_NE(part.find("ibfabric_port_info{" + caGuid + ",port=\"1\""), std::string::npos);
  EXPECT_NE(part.find("ibfabric_node_info{" + caGuid), std::string::npos);
  EXPECT_NE(part.find("ibfabric_link_health_id{" + caGuid + ",port=\"1\",remote_guid=\"" +
                      toString(leaf.guid) + "\""),
            std::string::npos);
  EXPECT_NE(part.find("ibfabric_uplink_route_imbalance_ratio{guid=\"" + toString(leaf.guid)),
            std::string::npos);
  const std::string other = render(s, everything(), MetricsShard{(mine + 1) % n, n});
  EXPECT_EQ(other.find(caGuid), std::string::npos) << other;
}

}  // namespace
}  // namespace ibfabric::api
