// `ibfabric discover` on simulated fabrics: for each `topo gen` preset, our crawler (run through
// `sim run`) sees exactly the nodes and links the real `ibnetdiscover` sees, the generated levels,
// hosts and rails, and its ibnetdiscover output loads back into ibsim and rediscovers to the
// same model. Without a simulator it fails with a clear message.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "discovery/net_topology.h"
#include "discovery/netfile.h"
#include "discovery/topogen.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_paths.h"

namespace ibfabric::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

struct Preset {
  std::string name;
  std::vector<std::string> args;
  TopoOptions options;  // the same, for the expected in-memory model
};

void PrintTo(const Preset& p, std::ostream* os) { *os << p.name; }

using NodeKey = std::tuple<std::string, std::string, int>;  // guid, description, ports
using LinkEnd = std::pair<std::string, int>;                // guid, port
using LinkKey = std::pair<LinkEnd, LinkEnd>;

std::set<NodeKey> nodeSet(const NetFabric& f) {
  std::set<NodeKey> out;
  for (const auto& n : f.nodes) out.emplace(n.guid ? toString(*n.guid) : n.id, n.desc, n.numPorts);
  return out;
}

std::set<LinkKey> linkSet(const NetFabric& f) {
  std::set<LinkKey> out;
  for (const auto& n : f.nodes) {
    for (const auto& p : n.ports) {
      const NetNode* r = f.find(p.remoteId);
      if (!r) continue;
      LinkEnd a{n.guid ? toString(*n.guid) : n.id, p.port.value()};
      LinkEnd b{r->guid ? toString(*r->guid) : r->id, p.remotePort.value()};
      out.emplace(std::min(a, b), std::max(a, b));
    }
  }
  return out;
}

std::set<NodeKey> nodeSet(const json& j) {
  std::set<NodeKey> out;
  for (const auto& n : j["nodes"])
    out.emplace(n["guid"].get<std::string>(), n["description"].get<std::string>(),
                n["num_ports"].get<int>());
  return out;
}

std::set<LinkKey> linkSet(const json& j) {
  std::set<LinkKey> out;
  for (const auto& l : j["links"]) {
    LinkEnd a{l["a"]["guid"].get<std::string>(), l["a"]["port"].get<int>()};
    LinkEnd b{l["b"]["guid"].get<std::string>(), l["b"]["port"].get<int>()};
    out.emplace(std::min(a, b), std::max(a, b));
  }
  return out;
}

// description -> (level, rail, host name or "")
using FatTreeKey = std::map<std::string, std::tuple<int, int, std::string>>;

FatTreeKey fatTree(const json& j) {
  FatTreeKey out;
  const auto& hosts = j["hosts"];
  for (const auto& n : j["nodes"]) {
    std::string host =
        n["host"].is_null() ? "" : hosts[n["host"].get<int>()]["name"].get<std::string>();
    out[n["description"].get<std::string>()] = {n["level"].get<int>(), n["rail"].get<int>(), host};
  }
  return out;
}

FatTreeKey fatTree(const Topology& t) {
  FatTreeKey out;
  for (const Node& n : t.nodes())
    out[n.description] = {n.level, n.rail, n.host ? t.hosts()[*n.host].name : ""};
  return out;
}

json discoverJson(const SimFabric& fabric) {
  auto r = fabric.run({cliPath().string(), "discover", "--format", "json"}, 180s);
  EXPECT_EQ(r.exitCode, 0) << r.describe();
  return json::parse(r.out);
}

class DiscoverSim : public ::testing::TestWithParam<Preset> {};

TEST_P(DiscoverSim, MatchesIbnetdiscoverAndTheGeneratedFabric) {
  const Preset& preset = GetParam();
  const auto file = scratchDir() / ("disc-" + preset.name + ".net");
  std::vector<std::string> gen{"topo", "gen", "--preset", preset.name, "-o", file.string()};
  gen.insert(gen.end(), preset.args.begin(), preset.args.end());
  const auto g = runCli(gen);
  ASSERT_EQ(g.exitCode, 0) << g.describe();
  const NetFabric generated = parseNetFile(file);
  const TopologyPtr expected = topologyFromNetFabric(generated);

  SimFabric fabric(file, "disc-" + preset.name);
  const auto ibnd = fabric.run({"ibnetdiscover"}, 180s);
  ASSERT_EQ(ibnd.exitCode, 0) << ibnd.describe();
  const NetFabric seen = parseNetText(ibnd.out, "ibnetdiscover");

  const json ours = discoverJson(fabric);
  ASSERT_EQ(ours["schema"], "ibfabric.topology/1");
  EXPECT_EQ(ours["counts"]["switches"].get<std::size_t>(), seen.switchCount());
  EXPECT_EQ(ours["counts"]["cas"].get<std::size_t>(), seen.caCount());
  EXPECT_EQ(ours["counts"]["links"].get<std::size_t>(), seen.linkCount());
  EXPECT_EQ(nodeSet(ours), nodeSet(seen));
  EXPECT_EQ(linkSet(ours), linkSet(seen));
  EXPECT_GT(ours["crawl"]["mads"].get<int>(), 0);

  // Levels, hosts and rails exactly as generated.
  EXPECT_EQ(fatTree(ours), fatTree(*expected));
  EXPECT_EQ(ours["rails"].size(), expected->rails().size());
  EXPECT_EQ(ours["groups"].size(), expected->groups().size());
  EXPECT_EQ(ours["hosts"].size(), expected->hosts().size());
  for (const auto& l : ours["links"]) EXPECT_EQ(l["rate"], "4xHDR");

  // Round trip: our ibnetdiscover text loads into ibsim and rediscovers to the same model.
  const auto rt = fabric.run({cliPath().string(), "discover", "--format", "ibnetdiscover"}, 180s);
  ASSERT_EQ(rt.exitCode, 0) << rt.describe();
  const auto rtFile = writeScratchFile("disc-rt-" + preset.name + ".net", rt.out);
  fabric.down();
  SimFabric again(rtFile, "disc-rt-" + preset.name);
  const json back = discoverJson(again);
  EXPECT_EQ(nodeSet(back), nodeSet(ours));
  EXPECT_EQ(linkSet(back), linkSet(ours));
  EXPECT_EQ(fatTree(back), fatTree(ours));
}

INSTANTIATE_TEST_SUITE_P(Presets, DiscoverSim,
                         ::testing::Values(Preset{"two-level",
                                                  {"--leaves", "4", "--spines", "2",
                                                   "--hosts-per-leaf", "4", "--hcas-per-host", "2"},
                                                  {}},
                                           Preset{"three-level",
                                                  {"--pods", "2", "--leaves-per-pod", "2",
                                                   "--spines-per-pod", "2", "--cores", "2",
                                                   "--hosts-per-leaf", "2"},
                                                  {}},
                                           Preset{"superpod", {"--sus", "2"}, {}}),
                         [](const auto& param) {
                           std::string n = param.param.name;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(DiscoverSim, OtherFormatsAndNodeNameMap) {
  const auto file = writeScratchFile("disc-small.net", fatTreeText("d", 2, 2, 2));
  SimFabric fabric(file, "disc-fmt");
  auto s = fabric.run({cliPath().string(), "discover"}, 120s);
  ASSERT_EQ(s.exitCode, 0) << s.describe();
  EXPECT_NE(s.out.find("Fabric: 4 switches, 4 CAs, 8 links"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("Switch levels: spine 2 leaf 2"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("MADs"), std::string::npos) << s.out;

  auto d = fabric.run({cliPath().string(), "discover", "--format", "dot"}, 120s);
  ASSERT_EQ(d.exitCode, 0) << d.describe();
  EXPECT_EQ(d.out.rfind("graph fabric {", 0), 0u);
  EXPECT_NE(d.out.find("rank=same"), std::string::npos);

  // A node-name map with one garbage line: warned about, the rest applied.
  const json j = discoverJson(fabric);
  std::string leafGuid;
  for (const auto& n : j["nodes"])
    if (n["level"] == 1) leafGuid = n["guid"];
  ASSERT_FALSE(leafGuid.empty());
  const auto map =
      writeScratchFile("disc.map", "garbage here\n" + leafGuid + " \"renamed-leaf\"\n");
  auto m = fabric.run(
      {cliPath().string(), "discover", "--format", "json", "--node-name-map", map.string()}, 120s);
  ASSERT_EQ(m.exitCode, 0) << m.describe();
  EXPECT_NE(m.err.find("disc.map:1:"), std::string::npos) << m.err;
  bool renamed = false;
  const json mapped = json::parse(m.out);
  for (const auto& n : mapped["nodes"])
    if (n["guid"] == leafGuid) renamed = n["description"] == "renamed-leaf";
  EXPECT_TRUE(renamed);

  // Knobs are accepted; -o writes a file.
  const auto out = scratchDir() / "disc-knobs.json";
  auto k = fabric.run({cliPath().string(), "discover", "--format", "json", "--max-smps", "4",
                       "--timeout-ms", "500", "--retries", "1", "--hops", "8", "-o", out.string()},
                      120s);
  ASSERT_EQ(k.exitCode, 0) << k.describe();
  EXPECT_TRUE(std::filesystem::exists(out));
}

TEST(DiscoverNoSim, ClearErrorWithoutDevice) {
  // No simulator, no umad2sim, no HCA on a build machine: one clear line, non-zero exit.
  auto r = runCli({"discover"}, 60s, {{"LD_PRELOAD", ""}});
  EXPECT_NE(r.exitCode, 0) << r.describe();
  EXPECT_NE(r.err.find("ibfabric: error: no InfiniBand device"), std::string::npos) << r.err;
}

TEST(DiscoverNoSim, UnknownSimulatorIsAnError) {
  auto r = runCli(
      {"sim", "run", "--name", "disc-no-such-fabric", "--", cliPath().string(), "discover"}, 60s);
  EXPECT_NE(r.exitCode, 0) << r.describe();
  EXPECT_FALSE(r.err.empty());
}

}  // namespace
}  // namespace ibfabric::testing
