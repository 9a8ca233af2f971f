// The streamed reports of `ibfabric counters`: the JSON report is one well-formed document with
// every port, rate, health record and event, and each port is in the output as soon as
// port() returns (before the sweep ends); the table prints a row per port before the summary.
#include "tools/ibfabric/counters/counters_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace ibfabric::cli {
namespace {

using nlohmann::json;
using namespace ibfabric::telemetry;

// A FILE the test can read back at any point (what a pipe's reader would have seen so far).
class Capture {
 public:
  Capture() : f_(std::tmpfile()) {}
  ~Capture() { std::fclose(f_); }
  std::FILE* file() { return f_; }
  std::string text() {
    std::fflush(f_);
    const long end = std::ftell(f_);
    std::string s(static_cast<std::size_t>(end), '\0');
    std::rewind(f_);
    const std::size_t n = std::fread(s.data(), 1, s.size(), f_);
    s.resize(n);
    std::fseek(f_, 0, SEEK_END);
    return s;
  }

 private:
  std::FILE* f_;
};

PortSample sample(std::uint64_t guid, int port, std::uint64_t xmit) {
  PortSample s;
  s.key = {Guid{guid}, PortNum(static_cast<std::uint8_t>(port))};
  s.nodeDescription = "node " + std::to_string(guid);
  s.lid = Lid(static_cast<std::uint16_t>(guid));
  s.counters.set(Counter::kXmitData, xmit, 64);
  s.counters.set(Counter::kSymbolErrors, 0xFFFF, 16);
  return s;
}

CounterSnapshotPtr snapshot(std::uint64_t sequence, std::vector<PortSample> ports) {
  auto snap = std::make_shared<CounterSnapshot>();
  snap->sequence = sequence;
  snap->ports = std::move(ports);  // sorted by key, as a sweeper publishes them
  std::sort(snap->ports.begin(), snap->ports.end(),
            [](const PortSample& a, const PortSample& b) { return a.key < b.key; });
  snap->stats.ports = snap->ports.size();
  snap->stats.portsOk = snap->ports.size();
  TargetFailure f;
  f.lid = Lid{9};
  f.reason = "PortCounters: timeout after 4 sends";
  snap->failures.push_back(f);
  return snap;
}

TEST(CountersReport, JsonIsOneDocumentWrittenPortByPort) {
  Capture out;
  auto report = makeJsonReport(out.file(), 8.0);
  const std::vector<PortSample> first = {sample(3, 1, 10), sample(2, 5, 20), sample(7, 2, 30)};
  for (int sweep = 1; sweep <= 2; ++sweep) {
    report->beginSweep(sweep == 1);
    for (const auto& s : first) {
      report->port(s);
      // Written before the sweep ends.
      EXPECT_NE(out.text().find("\"node " + std::to_string(s.key.node.value()) + "\""),
                std::string::npos);
    }
    if (sweep == 1) {
      EXPECT_EQ(out.text().find("ports_polled"), std::string::npos);
    }
    auto snap = snapshot(static_cast<std::uint64_t>(sweep), first);
    report->endSweep(*snap);
    if (sweep == 2) {
      PortRates r;
      r.key = first[0].key;
      r.intervalSeconds = 1.0;
      r.txBytesPerSecond = 4.0;
      report->rates(*snap, RatesTable(std::vector<PortRates>{r}));
    }
  }
  LinkHealthReport h;
  h.a = first[0].key;
  h.b = first[1].key;
  Event e;
  e.id = 1;
  e.type = EventType::kCounterReset;
  e.end = {first[0].key.node, "node 3", first[0].key.port};
  mad::MadEngineStats st;
  st.sent = 12;
  report->finish({h}, {e}, st);

  const json doc = json::parse(out.text(), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << out.text();
  EXPECT_EQ(doc["xmit_wait_tick_ns"], 8.0);
  ASSERT_EQ(doc["sweeps"].size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const json& sw = doc["sweeps"][i];
    EXPECT_EQ(sw["sequence"], i + 1);
    EXPECT_EQ(sw["ports_polled"], 3);
    ASSERT_EQ(sw["ports"].size(), 3u);
    for (std::size_t p = 0; p < 3; ++p) {  // in the order they were written
      EXPECT_EQ(sw["ports"][p]["node_guid"], toString(first[p].key.node));
      EXPECT_EQ(sw["ports"][p]["counters"]["xmit_data"], first[p].counters.get(Counter::kXmitData));
      EXPECT_EQ(sw["ports"][p]["saturated"], json::array({"symbol_errors"}));
    }
    ASSERT_EQ(sw["failures"].size(), 1u);
    EXPECT_EQ(sw["failures"][0]["lid"], 9);
  }
  ASSERT_EQ(doc["rates"].size(), 1u);
  EXPECT_EQ(doc["rates"][0]["sequence"], 2);
  ASSERT_EQ(doc["rates"][0]["ports"].size(), 1u);
  EXPECT_EQ(doc["rates"][0]["ports"][0]["node"], "node 3");
  EXPECT_EQ(doc["rates"][0]["ports"][0]["tx_bytes_per_s"], 4.0);
  ASSERT_EQ(doc["health"].size(), 1u);
  EXPECT_EQ(doc["health"][0]["b"]["port"], 5);
  EXPECT_EQ(doc["engine"]["sent"], 12);
  ASSERT_EQ(doc["events"].size(), 1u);
  EXPECT_EQ(doc["events"][0]["type"], "counter_reset");
}

TEST(CountersReport, JsonWithoutRatesOrEventsHasEmptyArrays) {
  Capture out;
  auto report = makeJsonReport(out.file(), 8.0);
  report->beginSweep(true);
  auto snap = snapshot(1, {});
  report->endSweep(*snap);
  report->finish({}, {}, {});
  const json doc = json::parse(out.text(), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << out.text();
  EXPECT_EQ(doc["sweeps"][0]["ports"], json::array());
  EXPECT_EQ(doc["rates"], json::array());
  EXPECT_EQ(doc["health"], json::array());
  EXPECT_EQ(doc["events"], json::array());
}

TEST(CountersReport, TablePrintsEachRowBeforeTheSummary) {
  Capture out;
  auto report = makeTableReport(out.file());
  report->beginSweep(true);
  report->port(sample(3, 1, 10));
  const std::string partial = out.text();
  EXPECT_NE(partial.find("node 3"), std::string::npos) << partial;
  EXPECT_NE(partial.find("SymbolErrorCounter=65535(sat)"), std::string::npos) << partial;
  EXPECT_EQ(partial.find("sweep 1:"), std::string::npos) << partial;
  auto snap = snapshot(1, {sample(3, 1, 10)});
  report->endSweep(*snap);
  const std::string done = out.text();
  EXPECT_NE(done.find("sweep 1: 1/1 ports ok"), std::string::npos) << done;
  EXPECT_NE(done.find("target lid 9"), std::string::npos) << done;
  // A sweep with one before it shows rates, not raw rows.
  report->beginSweep(false);
  report->port(sample(4, 1, 10));
  EXPECT_EQ(out.text().find("node 4"), std::string::npos);
}

}  // namespace
}  // namespace ibfabric::cli
