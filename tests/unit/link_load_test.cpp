// LinkLoadModel: capacity, smoothed utilization/congestion, health and residual per direction.
#include "routing/link_load.h"

#include <gtest/gtest.h>

#include "tests/support/fabrics.h"

namespace ibfabric::routing {
namespace {

TopologyPtr smallFabric() { return testing::netfileTopology(testing::twoLevel(2, 1, 1)); }

telemetry::PortKey keyOf(const Topology& t, PortRef r) {
  return telemetry::PortKey{t.node(r.node).guid, r.port};
}

telemetry::PortRates ratesFor(telemetry::PortKey key, std::optional<double> tx,
                              std::optional<double> rx, std::optional<double> congestion) {
  telemetry::PortRates r;
  r.key = key;
  r.txUtilization = tx;
  r.rxUtilization = rx;
  r.congestion = congestion;
  return r;
}

telemetry::RatesTable tableOf(const std::map<telemetry::PortKey, telemetry::PortRates>& rates) {
  std::vector<telemetry::PortRates> all;
  for (const auto& [key, r] : rates) all.push_back(r);
  return telemetry::RatesTable(all);
}

constexpr double kHdrBytes = 200e9 / 8;

TEST(LinkLoad, IdleModelHasCapacityAndFullResidual) {
  auto topo = smallFabric();
  LinkLoadModel m(topo);
  ASSERT_EQ(m.size(), topo->links().size() * 2);
  for (DirectedLinkId d = 0; d < m.size(); ++d) {
    EXPECT_DOUBLE_EQ(m.at(d).capacityBytesPerSecond, kHdrBytes);
    EXPECT_DOUBLE_EQ(m.at(d).residualBytesPerSecond(), kHdrBytes);
    EXPECT_EQ(m.at(d).health, telemetry::LinkState::kOk);
  }
  const Link& l0 = topo->links()[0];
  EXPECT_EQ(m.transmitting(l0.a), directedLink(0, false));
  EXPECT_EQ(m.transmitting(l0.b), directedLink(0, true));
  EXPECT_EQ(m.sender(directedLink(0, true)), l0.b);
  EXPECT_EQ(m.receiver(directedLink(0, true)), l0.a);
  EXPECT_THROW(LinkLoadModel(nullptr), std::invalid_argument);
}

TEST(LinkLoad, SweepsAreSmoothedByTransmittingPort) {
  auto topo = smallFabric();
  const Link& l0 = topo->links()[0];
  std::map<telemetry::PortKey, telemetry::PortRates> first, second;
  first[keyOf(*topo, l0.a)] = ratesFor(keyOf(*topo, l0.a), 0.8, 0.1, 0.2);
  // The b end has no tx number: the a end's rx utilization stands in for b -> a.
  const auto firstTable = tableOf(first);
  LinkLoadModel m1 = LinkLoadModel::fromSweep(topo, &firstTable, nullptr, nullptr);
  EXPECT_DOUBLE_EQ(m1.at(directedLink(0, false)).utilization, 0.8);
  EXPECT_DOUBLE_EQ(m1.at(directedLink(0, false)).congestion, 0.2);
  EXPECT_NEAR(m1.at(directedLink(0, false)).residualBytesPerSecond(), 0.2 * kHdrBytes, 1.0);
  EXPECT_DOUBLE_EQ(m1.at(directedLink(0, true)).utilization, 0.1);
  EXPECT_EQ(m1.sweeps(), 1);

  second[keyOf(*topo, l0.a)] = ratesFor(keyOf(*topo, l0.a), 0.0, std::nullopt, 0.0);
  second[keyOf(*topo, l0.b)] = ratesFor(keyOf(*topo, l0.b), 0.6, std::nullopt, std::nullopt);
  LinkLoadOptions half;
  half.alpha = 0.5;
  // A new snapshot of the same fabric: the average follows the ports.
  auto topo2 = smallFabric();
  const auto secondTable = tableOf(second);
  LinkLoadModel m2 = LinkLoadModel::fromSweep(topo2, &secondTable, nullptr, &m1, half);
  EXPECT_DOUBLE_EQ(m2.at(directedLink(0, false)).utilization, 0.4);
  EXPECT_DOUBLE_EQ(m2.at(directedLink(0, false)).congestion, 0.1);
  EXPECT_DOUBLE_EQ(m2.at(directedLink(0, true)).utilization, 0.35);
  EXPECT_EQ(m2.sweeps(), 2);
}

TEST(LinkLoad, RxStandsInWhenTheSenderHasNoRates) {
  auto topo = smallFabric();
  const Link& l0 = topo->links()[0];
  std::map<telemetry::PortKey, telemetry::PortRates> rates;
  rates[keyOf(*topo, l0.a)] = ratesFor(keyOf(*topo, l0.a), std::nullopt, 0.5, std::nullopt);
  const auto table = tableOf(rates);
  LinkLoadModel m = LinkLoadModel::fromSweep(topo, &table, nullptr, nullptr);
  EXPECT_DOUBLE_EQ(m.at(directedLink(0, true)).utilization, 0.5);
}

TEST(LinkLoad, HealthComesFromReportsMatchedByPorts) {
  auto topo = smallFabric();
  std::vector<telemetry::LinkHealthReport> health(2);
  health[0].link = 999;  // index from another snapshot: ignored, ports decide
  health[0].a = keyOf(*topo, topo->links()[1].a);
  health[0].b = keyOf(*topo, topo->links()[1].b);
  health[0].state = telemetry::LinkState::kFaulty;
  health[1].a = keyOf(*topo, topo->links()[2].a);
  health[1].b = keyOf(*topo, topo->links()[2].b);
  health[1].state = telemetry::LinkState::kDegraded;
  LinkLoadModel m = LinkLoadModel::fromSweep(topo, nullptr, &health, nullptr);
  EXPECT_EQ(m.at(directedLink(1, false)).health, telemetry::LinkState::kFaulty);
  EXPECT_EQ(m.at(directedLink(1, true)).health, telemetry::LinkState::kFaulty);
  EXPECT_DOUBLE_EQ(m.at(directedLink(1, true)).residualBytesPerSecond(), 0.0);
  EXPECT_EQ(m.at(directedLink(2, false)).health, telemetry::LinkState::kDegraded);
  EXPECT_DOUBLE_EQ(m.at(directedLink(2, false)).residualBytesPerSecond(), kHdrBytes);
  EXPECT_EQ(m.at(directedLink(0, false)).health, telemetry::LinkState::kOk);
  m.setHealth(0, telemetry::LinkState::kDown);
  EXPECT_DOUBLE_EQ(m.at(directedLink(0, false)).residualBytesPerSecond(), 0.0);
  m.setUtilization(directedLink(0, true), 1.7);
  EXPECT_DOUBLE_EQ(m.at(directedLink(0, true)).utilization, 1.0);
}

}  // namespace
}  // namespace ibfabric::routing
