// Counter sweeps on a real ibsim fabric through `ibfabric counters ... --format json` (run with
// `ibfabric sim run`): values set with ibsim's PerformanceSet between two invocations (the
// second reads the first one's --save file as its baseline) show up exactly on that port and no
// other; saturation, resets, perfquery agreement and MAD drops. A link Unlinked between a --save
// and a --baseline run (or, with --recrawl, during one run) is a link_down event and both its
// ports are reported gone and not polled; ReLink gives link_up.
//
// One fabric per suite (2 spines, 2 leaves, 2 hosts per leaf: 16 linked ports).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class TelemetrySim : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto net = writeScratchFile("telemetry.net", fatTreeText("c", 2, 2, 2));
    fabric_ = std::make_unique<SimFabric>(net, "telemetry");
  }
  static void TearDownTestSuite() { fabric_.reset(); }

  static json counters(std::vector<std::string> extra) {
    std::vector<std::string> argv = {IBFABRIC_CLI_PATH, "counters", "--format", "json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = fabric_->run(argv, 120s);
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.describe();
    return j;
  }
  static void set(const std::string& command) {
    auto r = fabric_->cmd(command);
    ASSERT_EQ(r.exitCode, 0) << r.describe();
  }
  static const json* port(const json& list, const std::string& node, int num) {
    for (const auto& p : list)
      if (p.value("node", "") == node && p["port"].get<int>() == num) return &p;
    return nullptr;
  }

  static std::unique_ptr<SimFabric> fabric_;
};
std::unique_ptr<SimFabric> TelemetrySim::fabric_;

TEST_F(TelemetrySim, PerformanceSetBetweenSweepsGivesExactRatesOnThatPortOnly) {
  const std::string base = (scratchDir() / "baseline.json").string();
  // Port 4 of cleaf1 goes up to cspine2; port 1 of cleaf2 down to chost2-1.
  set(R"(PerformanceSet "cleaf2"[2] PortCounters.SymbolErrorCounter=100)");
  json first = counters({"--save", base});
  ASSERT_EQ(first["sweeps"].size(), 1u);
  const json& s1 = first["sweeps"][0];
  EXPECT_EQ(s1["ports_polled"], 16);
  EXPECT_EQ(s1["ports_ok"], 16);
  const json* before = port(s1["ports"], "cleaf1", 4);
  ASSERT_NE(before, nullptr);
  const std::uint64_t xmit1 = (*before)["counters"]["xmit_data"];
  const std::uint64_t wait1 = (*before)["counters"]["xmit_wait"];

  const std::uint64_t setData = 4'000'000'000ull;  // beyond 32 bits: only the extended counter
  set(R"(PerformanceSet "cleaf1"[4] PortCountersExtended.PortXmitData=4000000000)");
  set(R"(PerformanceSet "cleaf1"[4] PortCounters.SymbolErrorCounter=7)");
  set(R"(PerformanceSet "cleaf1"[4] PortCounters.PortRcvErrors=3)");
  set(R"(PerformanceSet "cleaf1"[4] PortCounters.PortXmitWait=5000000)");
  set(R"(PerformanceSet "cleaf2"[1] PortCounters.PortXmitWait=4294967295)");
  set(R"(PerformanceSet "cleaf2"[2] PortCounters.SymbolErrorCounter=3)");

  json second = counters({"--baseline", base});
  ASSERT_EQ(second["rates"].size(), 1u);
  const json& rates = second["rates"][0]["ports"];
  ASSERT_EQ(rates.size(), 16u);
  const double tick = second["xmit_wait_tick_ns"].get<double>() * 1e-9;

  const json* r = port(rates, "cleaf1", 4);
  ASSERT_NE(r, nullptr);
  const double dt = (*r)["interval_s"];
  ASSERT_GT(dt, 0.0);
  const std::uint64_t dData = (*r)["deltas"]["xmit_data"]["delta"];
  // The set value minus the old one, plus the few MADs that crossed the port since the set.
  EXPECT_GE(dData, setData - xmit1);
  EXPECT_LE(dData, setData - xmit1 + 5000);
  EXPECT_DOUBLE_EQ((*r)["tx_bytes_per_s"].get<double>(), static_cast<double>(dData) * 4 / dt);
  EXPECT_EQ((*r)["deltas"]["symbol_errors"]["delta"], 7);
  EXPECT_DOUBLE_EQ((*r)["deltas"]["symbol_errors"]["per_s"].get<double>(), 7 / dt);
  EXPECT_EQ((*r)["deltas"]["rcv_errors"]["delta"], 3);
  const double waited = static_cast<double>(5'000'000 - wait1) * tick;
  EXPECT_NEAR((*r)["congestion"].get<double>(), std::min(1.0, waited / dt), 1e-12);
  // Utilization against the link's 4x data rate (ibsim: 4xSDR unless told otherwise).
  EXPECT_GT((*r)["tx_utilization"].get<double>(), 0.0);

  // No other port moved by more than MAD traffic (the client's own link carries every MAD), and no
  // other port has errors.
  for (const auto& p : rates) {
    if (p["node"] == "cleaf1" && p["port"] == 4) continue;
    const bool resetPort = p["node"] == "cleaf2" && p["port"] == 2;
    if (!resetPort) {
      EXPECT_EQ(p["deltas"]["symbol_errors"]["delta"], 0) << p.dump();
    }
    EXPECT_EQ(p["deltas"]["rcv_errors"]["delta"], 0) << p.dump();
    EXPECT_LT(p["deltas"]["xmit_data"]["delta"].get<std::uint64_t>(), 20000u) << p.dump();
  }

  // A 32-bit counter at 0xFFFFFFFF is saturated: unknown, no congestion number.
  const json* sat = port(rates, "cleaf2", 1);
  ASSERT_NE(sat, nullptr);
  EXPECT_EQ((*sat)["deltas"]["xmit_wait"]["state"], "unknown");
  EXPECT_TRUE((*sat)["congestion"].is_null());
  EXPECT_EQ((*sat)["saturated"], json::array({"xmit_wait"}));
  const json* raw = port(second["sweeps"][0]["ports"], "cleaf2", 1);
  EXPECT_EQ((*raw)["saturated"], json::array({"xmit_wait"}));

  // A counter set lower is a reset: no delta, no spike, an event.
  const json* reset = port(rates, "cleaf2", 2);
  ASSERT_NE(reset, nullptr);
  EXPECT_EQ((*reset)["deltas"]["symbol_errors"]["state"], "reset");
  EXPECT_FALSE((*reset)["deltas"]["symbol_errors"].contains("per_s"));
  EXPECT_EQ((*reset)["resets"], json::array({"symbol_errors"}));
  bool resetEvent = false;
  for (const auto& e : second["events"])
    if (e["type"] == "counter_reset" && e["node"] == "cleaf2" && e["port"] == 2) resetEvent = true;
  EXPECT_TRUE(resetEvent) << second["events"].dump();

  // Health: symbol errors at 7 per fraction of a second are far over 10/h.
  bool faulty = false;
  for (const auto& h : second["health"]) {
    if ((h["a"]["node"] == "cleaf1" && h["a"]["port"] == 4) ||
        (h["b"]["node"] == "cleaf1" && h["b"]["port"] == 4))
      faulty = h["state"] == "faulty";
  }
  EXPECT_TRUE(faulty) << second["health"].dump();
}

// The streamed document: well-formed, every linked port once per sweep with every counter, one
// record per line; two sweeps give one interval of rates for every port. The table prints a row
// per port, then the sweep's summary.
TEST_F(TelemetrySim, StreamedOutputIsCompleteAndWellFormed) {
  auto r = fabric_->run(
      {IBFABRIC_CLI_PATH, "counters", "--format", "json", "--count", "2", "--interval", "0.2"},
      120s);
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  ASSERT_EQ(j["sweeps"].size(), 2u);
  for (const auto& sweep : j["sweeps"]) {
    EXPECT_EQ(sweep["ports_polled"], 16);
    EXPECT_EQ(sweep["ports_ok"], 16);
    EXPECT_EQ(sweep["failed_requests"], 0);
    std::set<std::pair<std::string, int>> keys;
    for (const auto& p : sweep["ports"]) {
      keys.emplace(p["node_guid"].get<std::string>(), p["port"].get<int>());
      EXPECT_EQ(p["status"], "ok") << p.dump();
      EXPECT_EQ(p["counters"].size(), 17u) << p.dump();  // ibsim: every counter, ext + narrow
    }
    EXPECT_EQ(keys.size(), 16u) << sweep["ports"].dump();
    EXPECT_EQ(sweep["ports"].size(), 16u);
  }
  ASSERT_EQ(j["rates"].size(), 1u);
  EXPECT_EQ(j["rates"][0]["sequence"], 2);
  EXPECT_EQ(j["rates"][0]["ports"].size(), 16u);
  // (The engine's own totals also count the PortSamplesControl GETs ibsim leaves unanswered.)
  EXPECT_GT(j["engine"]["completed_ok"].get<int>(), 64);
  std::size_t recordLines = 0;
  for (std::size_t at = 0; (at = r.out.find("\n{\"at_ns\":", at)) != std::string::npos; ++at)
    ++recordLines;
  EXPECT_EQ(recordLines, 32u);  // one line per port record, 16 per sweep

  auto table = fabric_->run({IBFABRIC_CLI_PATH, "counters"}, 120s);
  ASSERT_EQ(table.exitCode, 0) << table.describe();
  const auto summary = table.out.find("sweep 1: 16/16 ports ok");
  ASSERT_NE(summary, std::string::npos) << table.out;
  const std::string rows = table.out.substr(0, summary);
  EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 17) << table.out;  // header + 16 rows
}

TEST_F(TelemetrySim, CountersEqualPerfquery) {
  set(R"(PerformanceSet "cleaf1"[1] PortCounters.SymbolErrorCounter=11)");
  set(R"(PerformanceSet "cleaf1"[1] PortCounters.LinkDownedCounter=2)");
  set(R"(PerformanceSet "cleaf1"[1] PortCounters.PortXmitWait=1234)");
  json j = counters({"--port", "1"});
  const json& ports = j["sweeps"][0]["ports"];
  const json* leaf = port(ports, "cleaf1", 1);
  ASSERT_NE(leaf, nullptr);
  const int lid = (*leaf)["lid"];
  auto pq = fabric_->run(
      {"sh", "-c",
       "perfquery -x " + std::to_string(lid) + " 1 && perfquery " + std::to_string(lid) + " 1"});
  ASSERT_EQ(pq.exitCode, 0) << pq.describe();
  auto field = [&](const std::string& name) -> std::uint64_t {
    std::smatch m;
    std::regex re(name + ":\\.*(\\d+)");
    if (!std::regex_search(pq.out, m, re)) return ~0ull;
    return std::stoull(m[1]);
  };
  const json& c = (*leaf)["counters"];
  EXPECT_EQ(c["symbol_errors"], field("SymbolErrorCounter"));
  EXPECT_EQ(c["link_downed"], field("LinkDownedCounter"));
  EXPECT_EQ(c["xmit_wait"], field("PortXmitWait"));
  EXPECT_EQ(c["rcv_errors"], field("PortRcvErrors"));
  // Data counters move with the MADs in between (perfquery's own crawl-free queries): a few
  // hundred units at most.
  for (const auto& [ours, theirs] :
       std::map<std::string, std::string>{{"xmit_data", "PortXmitData"},
                                          {"rcv_data", "PortRcvData"},
                                          {"xmit_pkts", "PortXmitPkts"},
                                          {"rcv_pkts", "PortRcvPkts"}}) {
    const auto a = c[ours].get<std::uint64_t>();
    const auto b = field(theirs);
    ASSERT_NE(b, ~0ull) << theirs << "\n" << pq.out;
    EXPECT_GE(b, a) << ours;
    EXPECT_LE(b - a, 2000u) << ours;
  }
}

TEST_F(TelemetrySim, SweepCompletesWhileIbsimDropsMads) {
  const std::string client = "chost2-2";
  // Drop 20% of the MADs on the client's link; --retries also applies to the crawl's SMPs.
  set(R"(Error "cleaf2"[2] 20)");
  auto r = fabric_->run({IBFABRIC_CLI_PATH, "counters", "--format", "json", "--count", "2",
                         "--interval", "0.2", "--retries", "6"},
                        120s, client);
  set(R"(Error "cleaf2"[2] 0)");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  json j = json::parse(r.out);
  ASSERT_EQ(j["sweeps"].size(), 2u);
  std::uint64_t retries = 0;
  for (const auto& s : j["sweeps"]) {
    // The crawl (libibnetdisc) may itself lose nodes or LIDs under drops, so the port count is
    // not checked here; every port the topology has is still reported with a status.
    EXPECT_EQ(s["ports"].size(), s["ports_polled"].get<std::size_t>());
    retries += s["retries"].get<std::uint64_t>();
  }
  EXPECT_GT(retries, 0u) << j["sweeps"].dump();
  EXPECT_EQ(j["engine"]["retries"].get<std::uint64_t>(), retries);
  // After the drops stop, a sweep needs no retries.
  auto clean = fabric_->run({IBFABRIC_CLI_PATH, "counters", "--format", "json"}, 120s, client);
  json k = json::parse(clean.out);
  EXPECT_EQ(k["sweeps"][0]["retries"], 0);
  EXPECT_EQ(k["sweeps"][0]["ports_ok"], 16);
}

// The uplink cleaf1[4] <-> cspine2[1]: a link_down event naming both ends (GUID, description,
// port), both ports gone (listed once, not polled, no rate); ReLink: link_up, all 16 ports again.
TEST_F(TelemetrySim, UnlinkedPortIsLinkDownAndNoLongerPolled) {
  const std::string before = (scratchDir() / "unlink-before.json").string();
  const std::string during = (scratchDir() / "unlink-during.json").string();
  json first = counters({"--save", before});
  ASSERT_EQ(first["sweeps"][0]["ports_ok"], 16);
  const json* leafPort = port(first["sweeps"][0]["ports"], "cleaf1", 4);
  const json* spinePort = port(first["sweeps"][0]["ports"], "cspine2", 1);
  ASSERT_NE(leafPort, nullptr);
  ASSERT_NE(spinePort, nullptr);
  const std::string leafGuid = (*leafPort)["node_guid"];
  const std::string spineGuid = (*spinePort)["node_guid"];
  set(R"(Unlink "cleaf1"[4])");

  auto isLinkEvent = [&](const json& e, const std::string& type) {
    return e["type"] == type && e["node_guid"] == leafGuid && e["node"] == "cleaf1" &&
           e["port"] == 4 && e.contains("remote") && e["remote"]["node_guid"] == spineGuid &&
           e["remote"]["node"] == "cspine2" && e["remote"]["port"] == 1;
  };
  json second = counters({"--baseline", before, "--save", during});
  int downs = 0;
  for (const auto& e : second["events"]) downs += isLinkEvent(e, "link_down");
  EXPECT_EQ(downs, 1) << second["events"].dump(1);
  const json& sweep = second["sweeps"][0];
  EXPECT_EQ(sweep["ports_polled"], 14);
  for (auto [node, num] : {std::pair{"cleaf1", 4}, std::pair{"cspine2", 1}}) {
    const json* p = port(sweep["ports"], node, num);
    ASSERT_NE(p, nullptr) << node;
    EXPECT_EQ((*p)["status"], "gone") << p->dump();
    EXPECT_EQ(port(second["rates"][0]["ports"], node, num), nullptr) << node;
    bool goneEvent = false;
    for (const auto& e : second["events"])
      goneEvent |= e["type"] == "port_gone" && e["node"] == node && e["port"] == num;
    EXPECT_TRUE(goneEvent) << node << "\n" << second["events"].dump(1);
  }
  // The table prints the event with both ends.
  auto table = fabric_->run({IBFABRIC_CLI_PATH, "counters", "--baseline", before}, 120s);
  ASSERT_EQ(table.exitCode, 0) << table.describe();
  EXPECT_TRUE(std::regex_search(table.out,
                                std::regex("event \\d+ link_down \"cleaf1\"\\[4\\] \\(" + leafGuid +
                                           "\\) <-> \"cspine2\"\\[1\\] \\(" + spineGuid + "\\)")))
      << table.out;

  // Swept on the topology without the link: the next run does not see the ports at all.
  json third = counters({"--baseline", during});
  EXPECT_EQ(port(third["sweeps"][0]["ports"], "cleaf1", 4), nullptr);
  EXPECT_EQ(third["sweeps"][0]["ports_polled"], 14);

  set(R"(ReLink "cleaf1"[4])");
  json fourth = counters({"--baseline", during});
  int ups = 0;
  for (const auto& e : fourth["events"]) ups += isLinkEvent(e, "link_up");
  EXPECT_EQ(ups, 1) << fourth["events"].dump(1);
  EXPECT_EQ(fourth["sweeps"][0]["ports_polled"], 16);
  // The subnet manager brings the relinked ports to Active: every port answers again.
  EXPECT_TRUE(waitFor(
      [&] {
        auto r = fabric_->run({IBFABRIC_CLI_PATH, "counters", "--format", "json"}, 60s);
        json j = json::parse(r.out, nullptr, false);
        return !j.is_discarded() && j["sweeps"][0]["ports_ok"] == 16;
      },
      60s, 500ms));
}

// --recrawl: a link that goes down between two sweeps of one run shows up the same way. The
// Unlink is sent once the first sweep has been printed (bounded wait on the output), well before
// the second sweep's re-crawl.
TEST_F(TelemetrySim, RecrawlSeesALinkGoDownMidRun) {
  const std::string out = (scratchDir() / "recrawl.out").string();
  const std::string script =
      std::string(IBFABRIC_CLI_PATH) +
      " counters --format table --count 2 --interval 5 --recrawl > " + out +
      " 2>&1 & pid=$!; i=0; while ! grep -q '^sweep 1:' " + out +
      "; do i=$((i+1)); [ $i -gt 300 ] && { kill $pid; exit 3; }; sleep 0.1; done; " +
      IBFABRIC_CLI_PATH + " sim cmd --name " + fabric_->name() +
      " 'Unlink \"cleaf2\"[3]' || exit 4; wait $pid; st=$?; cat " + out + "; exit $st";
  auto r = fabric_->run({"sh", "-c", script}, 120s);
  set(R"(ReLink "cleaf2"[3])");
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("event \\d+ link_down \"cleaf2\"\\[3\\] \\(0x[0-9a-f]+\\) <-> "
                        "\"cspine1\"\\[2\\]")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("event \\d+ port_gone \"cleaf2\"\\[3\\]")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("event \\d+ port_gone \"cspine1\"\\[2\\]")))
      << r.out;
  // Not in the interval's rates.
  const auto rates = r.out.substr(r.out.find("interval ending at sweep 2"));
  EXPECT_FALSE(std::regex_search(rates, std::regex("\ncleaf2 +3 "))) << rates;
  EXPECT_TRUE(waitFor(
      [&] {
        auto c = fabric_->run({IBFABRIC_CLI_PATH, "counters", "--format", "json"}, 60s);
        json j = json::parse(c.out, nullptr, false);
        return !j.is_discarded() && j["sweeps"][0]["ports_ok"] == 16;
      },
      60s, 500ms));
}

}  // namespace
}  // namespace ibfabric::testing
