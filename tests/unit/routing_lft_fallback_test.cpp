// Directed-route SMPs and the LftReader's fallback and incremental refresh, on the scripted
// fake transport: switches answer LID-routed SMPs at their LID and directed-route SMPs along the
// path from our CA port; a switch can drop one kind or both. Checks the DR SMP codec, the paths
// derived from the topology, a switch read by directed route when LID routing cannot reach it,
// and refreshes that keep good tables and re-read only a failed switch after its backoff
// (counted in MADs), with per-switch status, JSON view and metrics.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>

#include "api/http/lft_status.h"
#include "api/metrics/collectors.h"
#include "api/service/routing_state.h"
#include "discovery/topology_edit.h"
#include "routing/directed_paths.h"
#include "routing/lft_reader.h"
#include "routing/routes.h"
#include "routing/synthetic_tables.h"
#include "telemetry/smp_attributes.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_mad_transport.h"
#include "tests/support/fabrics.h"

namespace ibfabric::routing {
namespace {

using namespace std::chrono_literals;
using mad::FakeMadTransport;
using Reply = FakeMadTransport::Reply;

const Node& firstAt(const Topology& t, int level) {
  for (const Node& n : t.nodes()) {
    if (n.isSwitch() && n.level == level) return n;
  }
  throw std::logic_error("no switch at that level");
}

/// Our port: the last CA's port 1 (as the harness's client is the last HCA).
Guid localPortOf(const Topology& t) {
  for (auto it = t.nodes().rbegin(); it != t.nodes().rend(); ++it) {
    if (it->isCa()) return it->port(PortNum(1))->guid;
  }
  throw std::logic_error("no CA");
}

// Switches answering from `truth`, by LID (LID-routed) or by path (directed route).
struct FakeFabric {
  std::mutex mu;
  std::map<std::uint16_t, SwitchTable> byLid;
  std::map<std::string, std::uint16_t> lidByPath;  // DirectedPath::toString() -> switch LID
  std::set<std::uint16_t> lidDead;                 // LID-routed SMPs to it go unanswered
  std::set<std::uint16_t> drDead;                  // directed-route SMPs to it go unanswered
  std::set<std::uint16_t> errors;                  // answer with MAD status 0x001c
  std::map<std::uint16_t, int> lidAsked, drAsked;

  FakeFabric(const ForwardingTables& truth, Guid localPort) {
    const Topology& t = *truth.topology();
    for (const Node& n : t.nodes()) {
      if (auto* s = truth.table(n.index)) byLid[s->switchLid.value()] = *s;
    }
    const auto paths = directedPaths(t, localPort);
    for (const Node& n : t.nodes()) {
      if (n.isSwitch() && paths[n.index]) lidByPath[paths[n.index]->toString()] = n.lid().value();
    }
  }
  int asked(std::uint16_t lid) {
    std::lock_guard lock(mu);
    return lidAsked[lid] + drAsked[lid];
  }
  FakeMadTransport::Responder responder() {
    return [this](const mad::MadAddress& to, const mad::MadBuffer& req, int) {
      std::lock_guard lock(mu);
      std::uint16_t lid = to.lid.value();
      const bool dr = mad::isDirectedRoute(req);
      if (dr) {
        auto it = lidByPath.find(mad::directedPathOf(req).toString());
        if (to.lid != mad::kPermissiveLid || it == lidByPath.end()) return std::vector<Reply>{};
        lid = it->second;
        ++drAsked[lid];
        if (drDead.contains(lid)) return std::vector<Reply>{};
      } else {
        ++lidAsked[lid];
        if (lidDead.contains(lid)) return std::vector<Reply>{};
      }
      mad::MadBuffer reply = FakeMadTransport::responseTo(req);
      const mad::MadHeader h = mad::decodeHeader(req);
      if (errors.contains(lid) || !byLid.contains(lid)) {
        mad::MadHeader rh = mad::decodeHeader(reply);
        rh.status = 0x001c;
        mad::encodeHeader(reply, rh);
        return std::vector<Reply>{{1ms, reply}};
      }
      if (dr) {  // a real reply has the direction bit set
        mad::MadHeader rh = mad::decodeHeader(reply);
        rh.status = 0x8000;
        mad::encodeHeader(reply, rh);
      }
      const SwitchTable& t = byLid[lid];
      if (h.attributeId == static_cast<std::uint16_t>(mad::SmpAttribute::kSwitchInfo)) {
        mad::SwitchInfo si;
        si.linearFdbCap = 49152;
        si.linearFdbTop = t.linearFdbTop;
        mad::encodeSwitchInfo(reply, si);
      } else {
        mad::LinearForwardingBlock b;
        b.block = h.attributeModifier;
        b.ports.fill(mad::LinearForwardingBlock::kNoPort);
        for (std::size_t k = 0; k < b.ports.size(); ++k) {
          const std::size_t lidIndex = b.block * 64u + k;
          if (lidIndex < t.ports.size()) b.ports[k] = t.ports[lidIndex];
        }
        mad::encodeLinearForwardingBlock(reply, b);
      }
      return std::vector<Reply>{{1ms, reply}};
    };
  }
};

struct Harness {
  Harness(const ForwardingTables& truth, bool directRoute,
          mad::MadPolicy policy = mad::MadPolicy::kAdaptive)
      : fake(truth, localPortOf(*truth.topology())), transport(clock, fake.responder()) {
    std::string error;
    transport.open(error);
    mad::MadEngineOptions o;
    o.policy = policy;
    o.window = 16;
    o.retries = 1;
    o.timeout = 50ms;
    o.adaptive.timeoutMin = 20ms;  // Fake-clock scale, below the default floor (200 ms).
    engine = std::make_unique<mad::MadEngine>(transport, clock, o);
    LftReaderOptions lo;
    if (directRoute) lo.localPort = localPortOf(*truth.topology());
    lo.retryBackoff = 10s;
    lo.maxRetryBackoff = 25s;
    reader = std::make_unique<LftReader>(*engine, clock, lo);
  }
  std::size_t sent() const { return transport.sent().size(); }
  FakeFabric fake;
  mad::FakeClock clock;
  FakeMadTransport transport;
  std::unique_ptr<mad::MadEngine> engine;
  std::unique_ptr<LftReader> reader;
};

const SwitchTableStatus& statusOf(const ForwardingTables& t, NodeIndex n) {
  for (const auto& s : t.switchStatus) {
    if (s.node == n) return s;
  }
  throw std::logic_error("no status");
}

TEST(DirectedRouteSmp, EncodesPathHopCountAndPermissiveLidsThroughLibibmadFields) {
  const mad::DirectedPath path{{1, 13, 5}};
  const auto smp = mad::toDirectedRoute(mad::buildLinearForwardingTableGet(7), path);
  EXPECT_TRUE(mad::isDirectedRoute(smp));
  const auto h = mad::decodeHeader(smp);
  EXPECT_EQ(h.mgmtClass, 0x81);
  EXPECT_EQ(h.method, 0x01);
  EXPECT_EQ(h.attributeId, 0x19);
  EXPECT_EQ(h.attributeModifier, 7u);
  EXPECT_EQ(mad::directedPathOf(smp), path);
  EXPECT_EQ(path.toString(), "0,1,13,5");
  // Wire layout (IBA 14.2.1.2): hop pointer byte 6, hop count byte 7, DrSLID/DrDLID at 32/34,
  // initial path from byte 128 with entry 0 unused.
  EXPECT_EQ(smp[6], 0);
  EXPECT_EQ(smp[7], 3);
  EXPECT_EQ(smp[32], 0xff);
  EXPECT_EQ(smp[35], 0xff);
  EXPECT_EQ(smp[128], 0);
  EXPECT_EQ(smp[129], 1);
  EXPECT_EQ(smp[130], 13);
  EXPECT_EQ(smp[131], 5);
  EXPECT_EQ(mad::directedRouteAddress().lid, mad::kPermissiveLid);
  EXPECT_EQ(mad::directedRouteAddress().mgmtClass, mad::MgmtClass::kSubnDirected);

  // A reply carries the direction bit in the status word: not an error.
  auto reply = FakeMadTransport::responseTo(smp);
  reply[4] = 0x80;
  EXPECT_EQ(mad::madStatus(reply), 0);
  reply[5] = 0x1c;
  EXPECT_EQ(mad::madStatus(reply), 0x1c);

  EXPECT_THROW(mad::toDirectedRoute(mad::buildSwitchInfoGet(),
                                    mad::DirectedPath{std::vector<std::uint8_t>(64, 1)}),
               std::invalid_argument);
  EXPECT_THROW(mad::toDirectedRoute(
                   mad::makeRequest(mad::MgmtClass::kPerfMgt, mad::MadMethod::kGet, 0x12, 0), path),
               std::invalid_argument);
}

TEST(DirectedPaths, ShortestPathsOverUpCablesFromOurPort) {
  auto topo = testing::routableTopology(testing::twoLevel(4, 2, 3));
  const Guid local = localPortOf(*topo);
  const auto here = topo->findPort(local);
  ASSERT_TRUE(here);
  const auto paths = directedPaths(*topo, local);
  ASSERT_EQ(paths.size(), topo->nodes().size());
  const Port* ours = topo->port(*here);
  const NodeIndex ourLeaf = ours->remote->node;
  EXPECT_EQ(*paths[here->node], mad::DirectedPath{});
  EXPECT_EQ(*paths[ourLeaf], mad::DirectedPath{{1}});
  for (const Node& n : topo->nodes()) {
    if (n.isSwitch()) {
      ASSERT_TRUE(paths[n.index]) << n.description;
      const std::size_t hops = n.index == ourLeaf ? 1 : (n.level == 2 ? 2 : 3);
      EXPECT_EQ(paths[n.index]->ports.size(), hops) << n.description;
    } else if (n.index != here->node) {
      EXPECT_FALSE(paths[n.index]) << "CAs do not forward SMPs: " << n.description;
    }
  }
  // Following a path through the topology ends at the switch it is for.
  for (const Node& n : topo->nodes()) {
    if (!n.isSwitch() || n.index == ourLeaf) continue;
    NodeIndex at = ourLeaf;
    const auto& ports = paths[n.index]->ports;
    for (std::size_t i = 1; i < ports.size(); ++i) {
      at = topo->node(at).port(PortNum(ports[i]))->remote->node;
    }
    EXPECT_EQ(at, n.index);
  }
  EXPECT_TRUE(directedPaths(*topo, Guid(0x1234)).empty());

  // A cable removed is not used: the spine our leaf can no longer reach directly is reached
  // over another leaf.
  const Node& leaf = topo->node(ourLeaf);
  std::optional<PortRef> up;
  for (std::size_t p = 1; p < leaf.ports.size(); ++p) {
    const Port* port = leaf.port(PortNum(static_cast<std::uint8_t>(p)));
    if (port && port->remote && topo->node(port->remote->node).isSwitch()) {
      up = PortRef{leaf.index, port->num};
      break;
    }
  }
  ASSERT_TRUE(up);
  const PortRef spineEnd = *topo->port(*up)->remote;
  TopologyEdit edit;
  edit.removeLinks.push_back(
      LinkKey::of(leaf.guid, up->port, topo->node(spineEnd.node).guid, spineEnd.port));
  auto cut = applyTopologyEdit(*topo, edit);
  const auto cutPaths = directedPaths(*cut, local);
  const Node* spine = cut->findNode(topo->node(spineEnd.node).guid);
  ASSERT_TRUE(cutPaths[spine->index]);
  EXPECT_EQ(cutPaths[spine->index]->ports.size(), 4u);  // CA -> leaf -> spine -> leaf -> spine
}

TEST(LftFallback, SwitchLidRoutingCannotReachIsReadByDirectRoute) {
  auto topo = testing::routableTopology(testing::twoLevel(4, 2, 3));
  auto truth = computeShortestPathTables(topo);
  Harness h(*truth, true);
  const Node& spine = firstAt(*topo, 2);
  h.fake.lidDead.insert(spine.lid().value());
  LftRefreshStats st;
  auto tables = h.reader->read(topo, &st);
  EXPECT_TRUE(tables->failures.empty()) << tables->failures.front();
  EXPECT_EQ(tables->switchesWithTables(), 6u);
  EXPECT_TRUE(tableDifferences(*tables, *truth).empty());
  EXPECT_EQ(st.readByDirectRoute, 1u);
  EXPECT_EQ(st.readFailed, 0u);
  EXPECT_EQ(tables->switchesReadByDirectRoute(), 1u);
  EXPECT_TRUE(statusOf(*tables, spine.index).directRoute);
  EXPECT_EQ(statusOf(*tables, spine.index).state, TableState::kOk);
  EXPECT_TRUE(validateRoutes(*topo, *tables).problems.empty());
  // Every DR SMP went to the permissive LID with the path to that spine.
  const auto paths = directedPaths(*topo, localPortOf(*topo));
  int direct = 0;
  for (const auto& s : h.transport.sent()) {
    if (!mad::isDirectedRoute(s.mad)) continue;
    ++direct;
    EXPECT_EQ(s.to, mad::directedRouteAddress());
    EXPECT_EQ(mad::directedPathOf(s.mad), *paths[spine.index]);
  }
  EXPECT_EQ(direct, 1 + 1);  // SwitchInfo + the one LFT block (LIDs up to 18)

  // The refresh probes it by directed route too (no LID-routed SMP to it any more).
  const int lidBefore = h.fake.lidAsked[spine.lid().value()];
  auto again = h.reader->refresh(topo, tables, &st);
  EXPECT_EQ(again, tables);
  EXPECT_EQ(st.reason, "unchanged");
  EXPECT_EQ(h.fake.lidAsked[spine.lid().value()], lidBefore);
  EXPECT_EQ(h.fake.drAsked[spine.lid().value()], 2 + 2);
}

TEST(LftFallback, WithoutOurPortOrForAMadErrorThereIsNoDirectRoute) {
  auto topo = testing::routableTopology(testing::twoLevel(4, 2, 3));
  auto truth = computeShortestPathTables(topo);
  const Node& spine = firstAt(*topo, 2);
  const Node& leaf = firstAt(*topo, 1);
  {
    Harness h(*truth, false);
    h.fake.lidDead.insert(spine.lid().value());
    auto tables = h.reader->read(topo);
    EXPECT_EQ(tables->table(spine.index), nullptr);
    EXPECT_EQ(h.fake.drAsked[spine.lid().value()], 0);
    EXPECT_EQ(statusOf(*tables, spine.index).state, TableState::kMissing);
  }
  {
    Harness h(*truth, true);
    h.fake.errors.insert(leaf.lid().value());
    h.fake.lidDead.insert(spine.lid().value());
    h.fake.drDead.insert(spine.lid().value());
    auto tables = h.reader->read(topo);
    EXPECT_EQ(h.fake.drAsked[leaf.lid().value()], 0) << "a MAD error is an answer";
    ASSERT_EQ(tables->failures.size(), 2u);
    const std::string all = tables->failures[0] + "\n" + tables->failures[1];
    EXPECT_NE(all.find("MAD status 0x001c"), std::string::npos) << all;
    EXPECT_NE(all.find("SwitchInfo: timeout after 2 sends; by directed route SwitchInfo: timeout"),
              std::string::npos)
        << all;
  }
}

TEST(LftFallback, RefreshKeepsGoodTablesAndRereadsOnlyTheFailedSwitchAfterItsBackoff) {
  auto topo =
      testing::routableTopology(testing::twoLevel(4, 2, 3));  // 6 switches, one LFT block each
  auto truth = computeShortestPathTables(topo);
  // It counts the reader's sends exactly: under the adaptive policy the failed switch's LID has
  // an open circuit breaker by the re-read, which then costs one probe, not 1 + 1 retry.
  Harness h(*truth, true, mad::MadPolicy::kFixed);
  const Node& leaf = firstAt(*topo, 1);
  const std::uint16_t lid = leaf.lid().value();
  LftRefreshStats st;
  auto first = h.reader->refresh(topo, nullptr, &st);
  ASSERT_TRUE(first->failures.empty());

  // The leaf stops answering both ways: the probe misses it, the re-read (LID, then DR) fails;
  // its table is kept, marked stale, since now.
  h.fake.lidDead.insert(lid);
  h.fake.drDead.insert(lid);
  const auto failedAt = std::chrono::system_clock::now();
  auto stale = h.reader->refresh(topo, first, &st);
  EXPECT_FALSE(st.fullRead);
  EXPECT_NE(st.reason.find("did not answer"), std::string::npos) << st.reason;
  EXPECT_EQ(st.switchesRead, 1u);
  EXPECT_EQ(st.readFailed, 1u);
  EXPECT_EQ(stale->switchesWithTables(), 6u);
  EXPECT_TRUE(tableDifferences(*stale, *truth).empty());
  const auto& s1 = statusOf(*stale, leaf.index);
  EXPECT_EQ(s1.state, TableState::kStale);
  EXPECT_EQ(s1.consecutiveFailures, 1);
  EXPECT_GE(s1.failingSince, failedAt - 1s);
  EXPECT_GT(s1.nextRetry, s1.failingSince);
  EXPECT_EQ(stale->switchesIn(TableState::kOk), 5u);
  EXPECT_EQ(stale->failures.size(), 1u);
  EXPECT_NE(stale->failures[0].find("keeping its table"), std::string::npos);

  // Within the backoff: only the probes of the 5 good switches, nothing to the failed one.
  std::size_t before = h.sent();
  int leafBefore = h.fake.asked(lid);
  auto kept = h.reader->refresh(topo, stale, &st);
  EXPECT_EQ(kept, stale);
  EXPECT_EQ(st.backingOff, 1u);
  EXPECT_EQ(st.switchesRead, 0u);
  EXPECT_EQ(h.sent() - before, 5u * 2);
  EXPECT_EQ(h.fake.asked(lid), leafBefore);

  // After the backoff: the probes plus a re-read of that switch alone (LID and DR, 2 sends
  // each): nobody else is re-read.
  h.clock.advance(11s);
  before = h.sent();
  leafBefore = h.fake.asked(lid);
  auto retried = h.reader->refresh(topo, stale, &st);
  EXPECT_NE(st.reason.find("retry"), std::string::npos) << st.reason;
  EXPECT_EQ(st.switchesRead, 1u);
  EXPECT_EQ(h.fake.asked(lid) - leafBefore, 2 + 2);
  EXPECT_EQ(h.sent() - before, 5u * 2 + 4u);
  EXPECT_EQ(statusOf(*retried, leaf.index).consecutiveFailures, 2);
  EXPECT_EQ(statusOf(*retried, leaf.index).failingSince, s1.failingSince);
  // The backoff doubled: 11 s later it is still waiting, 21 s later it is retried.
  h.clock.advance(11s);
  h.reader->refresh(topo, retried, &st);
  EXPECT_EQ(st.backingOff, 1u);

  // The switch answers again (by LID): the next retry reads it, state ok, failure cleared.
  h.fake.lidDead.clear();
  h.fake.drDead.clear();
  h.clock.advance(11s);
  auto healed = h.reader->refresh(topo, retried, &st);
  EXPECT_EQ(st.switchesRead, 1u);
  const auto& s3 = statusOf(*healed, leaf.index);
  EXPECT_EQ(s3.state, TableState::kOk);
  EXPECT_FALSE(s3.directRoute);
  EXPECT_EQ(s3.consecutiveFailures, 0);
  EXPECT_TRUE(healed->failures.empty());
  EXPECT_EQ(healed->switchesIn(TableState::kOk), 6u);
}

TEST(LftFallback, OnlyAShapeChangeOrAnAgeForcesAFullRead) {
  auto topo = testing::routableTopology(testing::twoLevel(4, 2, 3));
  auto truth = computeShortestPathTables(topo);
  Harness h(*truth, true);
  LftRefreshStats st;
  auto first = h.reader->refresh(topo, nullptr, &st);
  // A new snapshot of the same fabric: probe only, the tables are carried over.
  auto same = testing::routableTopology(testing::twoLevel(4, 2, 3));
  auto t2 = h.reader->refresh(same, first, &st);
  EXPECT_FALSE(st.fullRead);
  EXPECT_EQ(st.reason, "unchanged");
  EXPECT_EQ(st.readMads, 0u);
  EXPECT_EQ(t2->topology(), same);
  EXPECT_EQ(t2->switchesWithTables(), 6u);
  EXPECT_TRUE(validateRoutes(*same, *t2).problems.empty());

  // A cable gone: the SM reroutes, everything is re-read.
  const Node& leaf = firstAt(*same, 1);
  const Port* up = nullptr;
  for (std::size_t p = 1; p < leaf.ports.size() && !up; ++p) {
    const Port* port = leaf.port(PortNum(static_cast<std::uint8_t>(p)));
    if (port && port->remote && same->node(port->remote->node).isSwitch()) up = port;
  }
  ASSERT_NE(up, nullptr);
  TopologyEdit edit;
  edit.removeLinks.push_back(
      LinkKey::of(leaf.guid, up->num, same->node(up->remote->node).guid, up->remote->port));
  auto cut = applyTopologyEdit(*same, edit);
  h.reader->refresh(cut, t2, &st);
  EXPECT_TRUE(st.fullRead);
  EXPECT_EQ(st.reason, "topology changed");
  EXPECT_EQ(st.switchesRead, 6u);
}

TEST(LftFallback, StatusJsonAndMetricsNameStaleAndDirectRouteSwitches) {
  auto topo = testing::routableTopology(testing::twoLevel(4, 2, 3));
  auto truth = computeShortestPathTables(topo);
  Harness h(*truth, true);
  const Node& spine = firstAt(*topo, 2);
  const Node& leaf = firstAt(*topo, 1);
  h.fake.lidDead.insert(spine.lid().value());
  auto first = h.reader->read(topo);
  h.fake.lidDead.insert(leaf.lid().value());
  h.fake.drDead.insert(leaf.lid().value());
  LftRefreshStats st;
  auto tables = h.reader->refresh(topo, first, &st);

  auto j = api::tableStatusJson(*topo, *tables, std::nullopt, true);
  EXPECT_EQ(j["ok"], 5);
  EXPECT_EQ(j["stale"], 1);
  EXPECT_EQ(j["missing"], 0);
  EXPECT_EQ(j["direct_route"], 1);
  EXPECT_EQ(j["full_read"], false);
  ASSERT_EQ(j["switches"].size(), 2u) << j.dump(2);  // problems only: the stale one, the DR one
  for (const auto& s : j["switches"]) {
    if (s["switch"] == leaf.description) {
      EXPECT_EQ(s["state"], "stale");
      EXPECT_TRUE(s["failing_since"].is_number());
      EXPECT_TRUE(s["next_retry"].is_number());
      EXPECT_EQ(s["consecutive_failures"], 1);
      EXPECT_NE(s["error"].get<std::string>().find("timeout"), std::string::npos);
    } else {
      EXPECT_EQ(s["switch"], spine.description);
      EXPECT_EQ(s["state"], "ok");
      EXPECT_EQ(s["direct_route"], true);
      EXPECT_TRUE(s["failing_since"].is_null());
    }
  }
  EXPECT_EQ(api::tableStatusJson(*topo, *tables, TableState::kOk, false)["switches"].size(), 5u);

  std::string text;
  api::MetricWriter out(text);
  api::writeLftStatus(out, *tables);
  EXPECT_NE(text.find("ibfabric_lft_switches{state=\"ok\"} 5"), std::string::npos) << text;
  EXPECT_NE(text.find("ibfabric_lft_switches{state=\"stale\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("ibfabric_lft_switches{state=\"missing\"} 0"), std::string::npos) << text;
  EXPECT_NE(text.find("ibfabric_lft_switches_direct_route 1"), std::string::npos) << text;
  EXPECT_NE(text.find("ibfabric_lft_refresh_duration_seconds"), std::string::npos) << text;
}

}  // namespace
}  // namespace ibfabric::routing
