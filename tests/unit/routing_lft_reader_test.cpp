// LftReader on the scripted fake transport: switches answer SwitchInfo and LFT blocks from
// in-memory tables; a dead switch and a MAD error become failures, never a crash; refresh()
// keeps the tables while the probe sees no change and re-reads the switch whose probe differs.
#include "routing/lft_reader.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <mutex>
#include <set>

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

// Switches by LID answering from `tables` (editable while the engine runs).
struct FakeSwitches {
  std::mutex mu;
  std::map<std::uint16_t, SwitchTable> byLid;
  std::set<std::uint16_t> dead;
  std::set<std::uint16_t> errors;  // answer with MAD status 0x001c
  std::size_t asked = 0;

  explicit FakeSwitches(const ForwardingTables& t) {
    for (const Node& n : t.topology()->nodes()) {
      if (auto* s = t.table(n.index)) byLid[s->switchLid.value()] = *s;
    }
  }
  FakeMadTransport::Responder responder() {
    return [this](const mad::MadAddress& to, const mad::MadBuffer& req, int) {
      std::lock_guard lock(mu);
      ++asked;
      const auto lid = to.lid.value();
      if (dead.contains(lid)) return std::vector<Reply>{};
      mad::MadBuffer reply = FakeMadTransport::responseTo(req);
      const mad::MadHeader h = mad::decodeHeader(req);
      if (errors.contains(lid) || !byLid.contains(lid)) {
        mad::MadHeader rh = mad::decodeHeader(reply);
        rh.status = 0x001c;
        mad::encodeHeader(reply, rh);
        return std::vector<Reply>{{1ms, reply}};
      }
      const SwitchTable& t = byLid[lid];
      if (h.attributeId == static_cast<std::uint16_t>(mad::SmpAttribute::kSwitchInfo)) {
        mad::SwitchInfo si;
        si.linearFdbCap = 49152;
        si.linearFdbTop = t.linearFdbTop;
        mad::encodeSwitchInfo(reply, si);
      } else if (h.attributeId ==
                 static_cast<std::uint16_t>(mad::SmpAttribute::kLinearForwardingTable)) {
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
  explicit Harness(const ForwardingTables& truth)
      : switches(truth), transport(clock, switches.responder()) {
    std::string error;
    transport.open(error);
    mad::MadEngineOptions o;
    o.window = 16;
    o.retries = 1;
    o.timeout = 50ms;
    engine = std::make_unique<mad::MadEngine>(transport, clock, o);
    reader = std::make_unique<LftReader>(*engine, clock);
  }
  FakeSwitches switches;
  mad::FakeClock clock;
  FakeMadTransport transport;
  std::unique_ptr<mad::MadEngine> engine;
  std::unique_ptr<LftReader> reader;
};

TEST(LftReader, ReadsEveryBlockOfEverySwitch) {
  auto topo = testing::routableTopology(
      testing::twoLevel(8, 2, 10));  // 80 CAs + 10 switches: LIDs up to 90, two blocks
  auto truth = computeShortestPathTables(topo);
  Harness h(*truth);
  auto tables = h.reader->read(topo);
  EXPECT_EQ(tables->source(), "mad");
  EXPECT_TRUE(tables->failures.empty());
  EXPECT_EQ(tables->switchesWithTables(), 10u);
  EXPECT_TRUE(tableDifferences(*tables, *truth).empty());
  EXPECT_EQ(tables->madsUsed, 10u * (1 + 2));
  EXPECT_TRUE(validateRoutes(*topo, *tables).problems.empty());
}

TEST(LftReader, DeadSwitchAndMadErrorAreFailuresNotCrashes) {
  auto topo = testing::routableTopology(testing::twoLevel(4, 2, 3));
  auto truth = computeShortestPathTables(topo);
  Harness h(*truth);
  const Node* spine = nullptr;
  const Node* leaf = nullptr;
  for (const Node& n : topo->nodes()) {
    if (n.isSwitch() && n.level == 2 && !spine) spine = &n;
    if (n.isSwitch() && n.level == 1 && !leaf) leaf = &n;
  }
  h.switches.dead.insert(spine->lid().value());
  h.switches.errors.insert(leaf->lid().value());
  auto tables = h.reader->read(topo);
  EXPECT_EQ(tables->switchesWithTables(), 4u);
  EXPECT_EQ(tables->table(spine->index), nullptr);
  EXPECT_EQ(tables->table(leaf->index), nullptr);
  ASSERT_EQ(tables->failures.size(), 2u);
  std::string all = tables->failures[0] + "\n" + tables->failures[1];
  EXPECT_NE(all.find("SwitchInfo: timeout after 2 sends"), std::string::npos) << all;
  EXPECT_NE(all.find("MAD status 0x001c"), std::string::npos) << all;
  auto report = validateRoutes(*topo, *tables);
  EXPECT_GT(report.missingTables, 0u);
}

TEST(LftReader, RefreshProbesAndRereadsOnChange) {
  auto topo = testing::routableTopology(testing::twoLevel(4, 2, 3));
  auto truth = computeShortestPathTables(topo);
  Harness h(*truth);
  LftRefreshStats st;
  auto first = h.reader->refresh(topo, nullptr, &st);
  EXPECT_TRUE(st.fullRead);
  EXPECT_EQ(st.reason, "first read");

  auto same = h.reader->refresh(topo, first, &st);
  EXPECT_EQ(same, first);
  EXPECT_FALSE(st.fullRead);
  EXPECT_EQ(st.reason, "unchanged");
  EXPECT_EQ(st.probeMads, 6u * 2);

  // The SM reroutes one LID on one switch: the probe (block 0 holds every LID here) sees it.
  {
    std::lock_guard lock(h.switches.mu);
    auto& t = h.switches.byLid.begin()->second;
    t.ports[t.linearFdbTop] = t.ports[t.linearFdbTop] == 1 ? 2 : 1;
  }
  auto changed = h.reader->refresh(topo, first, &st);
  EXPECT_FALSE(st.fullRead);  // only the switch whose probe differs is re-read
  EXPECT_EQ(st.switchesRead, 1u);
  EXPECT_NE(st.reason.find("LFT block 0 changed"), std::string::npos) << st.reason;
  EXPECT_NE(changed, first);
  EXPECT_EQ(tableDifferences(*changed, *first).size(), 1u);

  // A new topology snapshot of the same shape: the tables carry over (a changed shape re-reads
  // everything: routing_lft_fallback_test.cpp).
  auto topo2 = testing::routableTopology(testing::twoLevel(4, 2, 3));
  auto carried = h.reader->refresh(topo2, changed, &st);
  EXPECT_FALSE(st.fullRead);
  EXPECT_EQ(st.reason, "unchanged");
  EXPECT_EQ(carried->topology(), topo2);
  EXPECT_TRUE(tableDifferences(*carried, *changed).empty());

  // Age bound.
  h.reader->fullReadEvery = 2;
  auto t3 = h.reader->refresh(topo2, nullptr, &st);
  h.reader->refresh(topo2, t3, &st);
  EXPECT_FALSE(st.fullRead);
  h.reader->refresh(topo2, t3, &st);
  EXPECT_TRUE(st.fullRead);
  EXPECT_EQ(st.reason, "age");
}

TEST(LftReader, ALongReadLetsTheCallerUseTheEngineBetweenItsSlices) {
  // 70 switches: three slices of at most kSliceSwitches.
  auto topo = testing::routableTopology(testing::twoLevel(60, 10, 1));
  auto truth = computeShortestPathTables(topo);
  Harness h(*truth);
  const Lid someSwitch = truth->table(topo->nodesAtLevel(1).front())->switchLid;
  std::vector<std::size_t> askedAt;  // MADs answered when the hook ran
  int probesAnswered = 0;
  const std::function<void()> between = [&] {
    {
      std::lock_guard lock(h.switches.mu);
      askedAt.push_back(h.switches.asked);
    }
    // What the daemon does there: its own MADs on the same engine (a PortInfo probe).
    std::vector<mad::MadRequest> probe;
    probe.push_back({mad::smpAddress(someSwitch), mad::buildSwitchInfoGet(), {}});
    probesAnswered += h.engine->run(std::move(probe)).front().ok() ? 1 : 0;
  };
  LftRefreshStats st;
  auto tables = h.reader->refresh(topo, nullptr, &st, between);
  ASSERT_EQ(topo->switchCount(), 70u);
  EXPECT_EQ(askedAt.size(), 2u);  // between slices 1-2 and 2-3, not before or after
  EXPECT_EQ(probesAnswered, 2);
  for (std::size_t i = 1; i < askedAt.size(); ++i) EXPECT_GT(askedAt[i], askedAt[i - 1]);
  EXPECT_TRUE(tableDifferences(*tables, *truth).empty());
  EXPECT_EQ(tables->switchesWithTables(), 70u);

  // An incremental refresh that re-reads nothing (70 probes in one batch) has no slices.
  askedAt.clear();
  EXPECT_EQ(h.reader->refresh(topo, tables, &st, between), tables);
  EXPECT_EQ(st.reason, "unchanged");
  EXPECT_TRUE(askedAt.empty());
}

}  // namespace
}  // namespace ibfabric::routing
