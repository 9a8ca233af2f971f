// The operational configuration keys (clear_saturated_counters, expected_topology, metrics,
// tls) and the expected topology: loading a net file or discovery JSON, node presence, and the
// node_missing / node_returned events between two crawls.
#include "api/service/expected_topology.h"

#include <gtest/gtest.h>

#include "api/daemon/service_config.h"
#include "discovery/formats.h"
#include "discovery/netfile.h"
#include "tests/support/fabrics.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

TEST(ApiOpsConfig, OperationalKeys) {
  const auto net = testing::writeScratchFile("expected.net", testing::fatTreeText("e", 1, 1, 1));
  auto c = loadConfigText("clear_saturated_counters: true\nexpected_topology: " + net.string() +
                          "\nmetrics: {port_labels: minimal}\n");
  EXPECT_TRUE(c.clearSaturatedCounters);
  EXPECT_EQ(c.expectedTopology, net.string());
  EXPECT_EQ(c.metricsPortLabels, "minimal");
  EXPECT_THROW(loadConfigText("metrics: {port_labels: some}\n"), ConfigError);
  EXPECT_THROW(loadConfigText("metrics: {labels: full}\n"), ConfigError);
  EXPECT_THROW(loadConfigText("expected_topology: /nonexistent/fabric.net\n"), ConfigError);
  EXPECT_THROW(loadConfigText("tls: {cert: " + net.string() + "}\n"), ConfigError);  // no key
  EXPECT_THROW(loadConfigText("tls: {cert: /nonexistent.crt, key: /nonexistent.key}\n"),
               ConfigError);
  EXPECT_THROW(loadConfigText("clear_saturated_counters: maybe\n"), ConfigError);
}

TEST(ApiExpectedTopology, LoadsNetFilesAndDiscoveryJson) {
  const std::string text = testing::fatTreeText("e", 1, 2, 1);
  auto fromNet = loadExpectedTopology(testing::writeScratchFile("e.net", text));
  EXPECT_EQ(fromNet->fabric.nodes.size(), 5u);
  auto live = testing::crawledFatTreeTopology("e", 1, 2, 1);
  auto fromJson = loadExpectedTopology(testing::writeScratchFile("e.json", toJson(*live).dump()));
  EXPECT_EQ(fromJson->fabric.nodes.size(), 5u);
  EXPECT_THROW(loadExpectedTopology("/nonexistent.net"), std::runtime_error);
  EXPECT_THROW(loadExpectedTopology(testing::writeScratchFile("bad.net", "Switch x\n")),
               std::runtime_error);
}

TEST(ApiExpectedTopology, PresenceAndEvents) {
  const std::string text = testing::fatTreeText("e", 1, 2, 1);  // eleaf1-2, espine1, ehost1-1, 2-1
  ExpectedTopology expected{"e.net", parseNetText(text, "e.net")};
  auto full = testing::crawledFatTreeTopology("e", 1, 2, 1);
  // The same fabric without ehost2-1.
  auto partialText = text;
  const auto at = partialText.find("Hca 1 \"ehost2-1\"");
  ASSERT_NE(at, std::string::npos) << text;
  partialText.erase(at);
  partialText.replace(partialText.find("[1] \"ehost2-1\"[1]\n"), 18, "");
  auto partial = topologyAsCrawled(parseNetText(partialText, "live"));

  auto first = compareWithExpected(expected, *full);
  ASSERT_EQ(first->nodes.size(), 5u);  // the loop below checks every one, not none
  for (const auto& n : first->nodes) EXPECT_TRUE(n.present) << n.name;
  EXPECT_EQ(first->missingCas, 0u);
  auto second = compareWithExpected(expected, *partial);
  EXPECT_EQ(second->missingCas, 1u);
  EXPECT_EQ(second->missingSwitches, 0u);
  telemetry::EventLog log;
  appendPresenceEvents(log, nullptr, *first);
  EXPECT_EQ(log.lastId(), 0u);  // all present: nothing to say
  appendPresenceEvents(log, first.get(), *second);
  auto events = log.query();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, telemetry::EventType::kNodeMissing);
  EXPECT_EQ(events[0].end.description, "ehost2-1");
  appendPresenceEvents(log, second.get(), *first);
  events = log.query();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].type, telemetry::EventType::kNodeReturned);
}

}  // namespace
}  // namespace ibfabric::api
