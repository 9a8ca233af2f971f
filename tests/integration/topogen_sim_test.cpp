// Generated fabrics load in the simulator as generated: for each `topo gen` preset (small
// sizes), `sim up` the file and check that `ibnetdiscover`, run on the fabric through
// `sim run`, finds exactly the generated nodes and links.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <chrono>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "discovery/netfile.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using namespace std::chrono_literals;

struct Preset {
  std::string name;
  std::vector<std::string> args;
};

void PrintTo(const Preset& p, std::ostream* os) { *os << p.name; }

using NodeKey = std::tuple<std::string, std::string, int>;  // type, description, ports
using LinkEnd = std::pair<std::string, int>;                // description, port
using LinkKey = std::pair<LinkEnd, LinkEnd>;                // ends in order

std::set<NodeKey> nodeSet(const NetFabric& f) {
  std::set<NodeKey> out;
  for (const auto& n : f.nodes) out.emplace(std::string(toString(n.type)), n.name(), n.numPorts);
  return out;
}

std::set<LinkKey> linkSet(const NetFabric& f) {
  std::set<LinkKey> out;
  for (const auto& n : f.nodes) {
    for (const auto& p : n.ports) {
      const NetNode* remote = f.find(p.remoteId);
      EXPECT_NE(remote, nullptr) << p.remoteId;
      if (remote == nullptr) continue;
      LinkEnd a{n.name(), p.port.value()};
      LinkEnd b{remote->name(), p.remotePort.value()};
      out.emplace(std::min(a, b), std::max(a, b));
    }
  }
  return out;
}

class TopogenSim : public ::testing::TestWithParam<Preset> {};

TEST_P(TopogenSim, IbnetdiscoverFindsExactlyTheGeneratedFabric) {
  const Preset& preset = GetParam();
  const auto file = scratchDir() / (preset.name + ".net");
  std::vector<std::string> gen{"topo", "gen", "--preset", preset.name, "-o", file.string()};
  gen.insert(gen.end(), preset.args.begin(), preset.args.end());
  const auto g = runCli(gen);
  ASSERT_EQ(g.exitCode, 0) << g.describe();
  const NetFabric expected = parseNetFile(file);
  ASSERT_GT(expected.caCount(), 0u);

  SimFabric fabric(file, "gen-" + preset.name);

  // OpenSM's ftree engine took the fabric as a fat tree and routed every switch (it logs an
  // AB0A error and falls back to minhop when the wiring is not a pure fat tree).
  std::ifstream logFile(fabric.stateDir() / "opensm.log");
  ASSERT_TRUE(logFile) << "no OpenSM log in " << fabric.stateDir();
  const std::string log((std::istreambuf_iterator<char>(logFile)), {});
  EXPECT_NE(log.find("FatTree rank"), std::string::npos) << log;
  EXPECT_NE(log.find("ftree tables configured on all switches"), std::string::npos) << log;
  EXPECT_EQ(log.find("AB0A"), std::string::npos) << log;

  const auto r = fabric.run({"ibnetdiscover"}, 180s);
  ASSERT_EQ(r.exitCode, 0) << r.describe();
  const NetFabric seen = parseNetText(r.out, "ibnetdiscover");

  EXPECT_EQ(seen.switchCount(), expected.switchCount());
  EXPECT_EQ(seen.caCount(), expected.caCount());
  EXPECT_EQ(seen.linkCount(), expected.linkCount());
  EXPECT_EQ(nodeSet(seen), nodeSet(expected));
  EXPECT_EQ(linkSet(seen), linkSet(expected));
}

INSTANTIATE_TEST_SUITE_P(
    Presets, TopogenSim,
    ::testing::Values(Preset{"two-level",
                             {"--leaves", "4", "--spines", "2", "--hosts-per-leaf", "4"}},
                      Preset{"three-level",
                             {"--pods", "2", "--leaves-per-pod", "2", "--spines-per-pod", "2",
                              "--cores", "2", "--hosts-per-leaf", "4"}},
                      Preset{"superpod", {"--sus", "1"}}),
    [](const ::testing::TestParamInfo<Preset>& param) {
      std::string n = param.param.name;
      for (auto& c : n) {
        if (c == '-') c = '_';
      }
      return n;
    });

}  // namespace
}  // namespace ibfabric::testing
