#include "discovery/topogen.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "tests/support/fabrics.h"

namespace ibfabric {
namespace {

using ::testing::HasSubstr;

bool startsWith(const std::string& s, std::string_view p) { return s.rfind(p, 0) == 0; }

// Ports of `n` grouped by remote node, for remotes whose id starts with `prefix`.
std::map<std::string, int> groups(const NetNode& n, std::string_view prefix) {
  std::map<std::string, int> g;
  for (const auto& p : n.ports)
    if (startsWith(p.remoteId, prefix)) ++g[p.remoteId];
  return g;
}

// Every switch whose id starts with `role` has `count` groups of `size` ports towards `towards`:
// the uniformity OpenSM's ftree needs.
void expectUniform(const NetFabric& f, std::string_view role, std::string_view towards,
                   std::size_t count, int size) {
  int seen = 0;
  for (const auto& n : f.nodes) {
    if (!startsWith(n.id, role)) continue;
    ++seen;
    auto g = groups(n, towards);
    ASSERT_EQ(g.size(), count) << n.id << " -> " << towards;
    for (const auto& [remote, ports] : g) EXPECT_EQ(ports, size) << n.id << " -> " << remote;
  }
  EXPECT_GT(seen, 0) << role;
}

std::set<std::string> hostNames(const NetFabric& f) {
  std::set<std::string> hosts;
  for (const auto& n : f.nodes)
    if (n.type == NodeType::kCa) hosts.insert(n.desc.substr(0, n.desc.find(' ')));
  return hosts;
}

int maxPortUsed(const NetNode& n) {
  int m = 0;
  for (const auto& p : n.ports) m = std::max(m, static_cast<int>(p.port.value()));
  return m;
}

TEST(TopoGen, TwoLevelCountsAndWiring) {
  TopoOptions o;
  o.leaves = 4;
  o.spines = 2;
  o.hostsPerLeaf = 3;
  o.linksPerSpine = 2;
  o.hcasPerHost = 2;
  GeneratedTopology g = generateTopology("two-level", o);
  const NetFabric& f = g.fabric;
  EXPECT_EQ(f.switchCount(), 6u);
  EXPECT_EQ(f.caCount(), 24u);
  EXPECT_EQ(f.linkCount(), 24u + 4 * 2 * 2);
  EXPECT_EQ(g.hosts, 12);
  EXPECT_EQ(hostNames(f).size(), 12u);
  EXPECT_EQ(g.model.name, "qm8790");  // 10 ports needed: the 40-port model
  for (const auto& n : f.nodes) {
    if (n.type == NodeType::kSwitch) {
      EXPECT_EQ(n.numPorts, 40);
      EXPECT_EQ(n.deviceId, 0xd2f0u);
    }
  }
  expectUniform(f, "leaf-", "spine-", 2, 2);
  expectUniform(f, "leaf-", "dgx", 6, 1);
  expectUniform(f, "spine-", "leaf-", 4, 2);
  // Hosts first on the leaf, then up-links: leaf-01 ports 1..6 hosts, 7..10 spines.
  const NetNode* leaf = f.find("leaf-01");
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->desc, "MF0;leaf-01:MQM8790-HS2F/U1");
  EXPECT_EQ(leaf->port(PortNum{1})->remoteId, "dgx0001-mlx5_0");
  EXPECT_EQ(leaf->port(PortNum{2})->remoteId, "dgx0001-mlx5_1");
  EXPECT_EQ(leaf->port(PortNum{3})->remoteId, "dgx0002-mlx5_0");
  EXPECT_EQ(leaf->port(PortNum{7})->remoteId, "spine-01");
  EXPECT_EQ(leaf->port(PortNum{9})->remoteId, "spine-02");
  EXPECT_EQ(maxPortUsed(*leaf), 10);
  const NetNode* hca = f.find("dgx0001-mlx5_1");
  ASSERT_NE(hca, nullptr);
  EXPECT_EQ(hca->desc, "dgx0001 mlx5_1");
  EXPECT_EQ(hca->numPorts, 1);
  EXPECT_EQ(hca->guid, Guid{0x100002});  // second CA: 0x100000 + 2
  EXPECT_EQ(hca->ports.at(0).portGuid, Guid{0x100003});
  EXPECT_EQ(f.find("leaf-01")->guid, Guid{0x200000});
  EXPECT_EQ(f.find("spine-02")->guid, Guid{0x200005});
  for (const auto& n : f.nodes) {
    for (const auto& p : n.ports) {
      EXPECT_EQ(p.rate, (LinkRate{LinkWidth::k4x, LinkSpeed::kHdr}));
    }
  }
}

TEST(TopoGen, TwoLevelWith2048HcasUses64PortSwitches) {
  TopoOptions o;
  o.leaves = 64;
  o.spines = 32;
  o.hostsPerLeaf = 32;
  GeneratedTopology g = generateTopology("two-level", o);
  EXPECT_EQ(g.fabric.caCount(), 2048u);
  EXPECT_EQ(g.fabric.switchCount(), 96u);
  EXPECT_EQ(g.fabric.linkCount(), 2048u + 64 * 32);
  EXPECT_EQ(g.model.ports, 64);
  EXPECT_EQ(g.fabric.find("leaf-64")->desc, "MF0;leaf-64:MQM9790-NS2F/U1");
  EXPECT_EQ(g.fabric.find("dgx2048-mlx5_0")->desc, "dgx2048 mlx5_0");
  EXPECT_EQ(g.ibsimNodes(), 2144);
  EXPECT_EQ(g.ibsimSwitches(), 96);
  EXPECT_EQ(g.ibsimPorts(), 96 * 65 + 2048);
  expectUniform(g.fabric, "spine-", "leaf-", 64, 1);
}

TEST(TopoGen, ThreeLevelK8FatTree) {
  TopoOptions o;
  o.pods = 8;
  o.leavesPerPod = 4;
  o.spinesPerPod = 4;
  o.cores = 16;
  o.hostsPerLeaf = 4;
  GeneratedTopology g = generateTopology("three-level", o);
  const NetFabric& f = g.fabric;
  EXPECT_EQ(f.switchCount(), 80u);
  EXPECT_EQ(f.caCount(), 128u);
  EXPECT_EQ(f.linkCount(), 128u + 8 * 4 * 4 + 8 * 4 * 4);
  EXPECT_EQ(g.leaves, 32);
  EXPECT_EQ(g.spines, 32);
  EXPECT_EQ(g.cores, 16);
  expectUniform(f, "leaf-p", "spine-p", 4, 1);
  expectUniform(f, "spine-p", "leaf-p", 4, 1);
  expectUniform(f, "spine-p", "core-", 4, 1);
  expectUniform(f, "core-", "spine-p", 8, 1);
  // Spine j of every pod reaches core group j; leaves stay inside their pod.
  auto cores = groups(*f.find("spine-p3-02"), "core-");
  EXPECT_EQ(cores.count("core-05"), 1u);
  EXPECT_EQ(cores.count("core-08"), 1u);
  EXPECT_EQ(groups(*f.find("leaf-p3-01"), "spine-p3-").size(), 4u);
  EXPECT_EQ(f.find("leaf-p1-01")->port(PortNum{1})->remoteId, "dgx0001-mlx5_0");
}

TEST(TopoGen, SuperpodFourSusIsRailOptimized) {
  TopoOptions o;
  o.sus = 4;
  GeneratedTopology g = generateTopology("superpod", o);
  const NetFabric& f = g.fabric;
  EXPECT_EQ(g.hosts, 128);
  EXPECT_EQ(g.hcasPerHost, 8);
  EXPECT_EQ(f.caCount(), 1024u);
  EXPECT_EQ(g.leaves, 32);
  EXPECT_EQ(g.spines, 16);
  EXPECT_EQ(g.cores, 0);
  EXPECT_EQ(f.switchCount(), 48u);
  EXPECT_EQ(f.linkCount(), 1024u + 32 * 32);
  EXPECT_EQ(hostNames(f).size(), 128u);
  // Full bisection: every leaf 32 down + 32 up (2 to each spine), every spine 64 down.
  expectUniform(f, "leaf-su", "dgx", 32, 1);
  expectUniform(f, "leaf-su", "spine-", 16, 2);
  expectUniform(f, "spine-", "leaf-su", 32, 2);
  for (const auto& n : f.nodes) {
    if (n.type == NodeType::kSwitch) {
      EXPECT_EQ(maxPortUsed(n), 64) << n.id;
    }
  }
  // Rails: HCA mlx5_r of every host sits on the rail-(r+1) leaf of its SU, port = node in SU.
  const NetNode* leaf = f.find("leaf-su2-r3");
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->desc, "MF0;leaf-su2-r3:MQM9790-NS2F/U1");
  EXPECT_EQ(leaf->port(PortNum{1})->remoteDesc, "dgx0033 mlx5_2");
  EXPECT_EQ(leaf->port(PortNum{32})->remoteDesc, "dgx0064 mlx5_2");
  for (int r = 0; r < 8; ++r) {
    const NetNode* hca = f.find("dgx0128-mlx5_" + std::to_string(r));
    ASSERT_NE(hca, nullptr);
    EXPECT_EQ(hca->ports.at(0).remoteId, "leaf-su4-r" + std::to_string(r + 1));
  }
}

TEST(TopoGen, SuperpodSmallSusKeepTwoLevels) {
  struct Row {
    int sus, spines, linksPerSpine;
  };
  for (Row r : {Row{1, 4, 8}, Row{2, 8, 4}, Row{3, 16, 2}, Row{8, 32, 1}}) {
    TopoOptions o;
    o.sus = r.sus;
    GeneratedTopology g = generateTopology("superpod", o);
    EXPECT_EQ(g.spines, r.spines) << r.sus;
    EXPECT_EQ(g.cores, 0) << r.sus;
    expectUniform(g.fabric, "leaf-su", "spine-", static_cast<std::size_t>(r.spines),
                  r.linksPerSpine);
    expectUniform(g.fabric, "spine-", "leaf-su", static_cast<std::size_t>(8 * r.sus),
                  r.linksPerSpine);
  }
}

TEST(TopoGen, Superpod40SusHas10240HcasAndACoreLayer) {
  TopoOptions o;
  o.sus = 40;
  GeneratedTopology g = generateTopology("superpod", o);
  const NetFabric& f = g.fabric;
  EXPECT_EQ(f.caCount(), 10240u);
  EXPECT_EQ(g.hosts, 1280);
  EXPECT_EQ(g.leaves, 320);
  EXPECT_EQ(g.spines, 320);
  EXPECT_EQ(g.cores, 256);
  EXPECT_EQ(f.switchCount(), 896u);
  EXPECT_EQ(f.linkCount(), 10240u + 320 * 32 + 320 * 32);
  expectUniform(f, "leaf-su", "spine-su", 8, 4);
  expectUniform(f, "spine-su", "leaf-su", 8, 4);
  expectUniform(f, "spine-su", "core-", 32, 1);
  expectUniform(f, "core-", "spine-su", 40, 1);
  EXPECT_EQ(groups(*f.find("leaf-su40-r8"), "spine-su40-").size(), 8u);
  EXPECT_EQ(f.find("dgx1280-mlx5_7")->ports.at(0).remoteId, "leaf-su40-r8");
  EXPECT_EQ(g.ibsimSwitches(), 896);
}

TEST(TopoGen, SuperpodNineSusSizesCoreGroups) {
  TopoOptions o;
  o.sus = 9;
  GeneratedTopology g = generateTopology("superpod", o);
  // 9 SUs: 8 cores per spine group (4 links each), 36 of a core's 64 ports used.
  EXPECT_EQ(g.cores, 64);
  expectUniform(g.fabric, "spine-su", "core-", 8, 4);
  expectUniform(g.fabric, "core-", "spine-su", 9, 4);
}

TEST(TopoGen, DegradeChangesBothEndsOfOneLink) {
  TopoOptions o;
  o.sus = 1;
  o.degrade = {"leaf-su1-r1[33]=1x", "\"leaf-su1-r2\"[1]=4xEDR"};
  GeneratedTopology g = generateTopology("superpod", o);
  const NetFabric& f = g.fabric;
  const NetPort* p = f.find("leaf-su1-r1")->port(PortNum{33});
  EXPECT_EQ(p->rate, (LinkRate{LinkWidth::k1x, LinkSpeed::kHdr}));
  const NetPort* back = f.find(p->remoteId)->port(p->remotePort);
  EXPECT_EQ(back->rate, (LinkRate{LinkWidth::k1x, LinkSpeed::kHdr}));
  EXPECT_EQ(f.find("dgx0001-mlx5_1")->ports[0].rate, (LinkRate{LinkWidth::k4x, LinkSpeed::kEdr}));
  int other = 0;
  for (const auto& n : f.nodes) {
    for (const auto& q : n.ports) {
      if (q.rate != LinkRate{LinkWidth::k4x, LinkSpeed::kHdr}) ++other;
    }
  }
  EXPECT_EQ(other, 4);  // two cables, two ends each
  ASSERT_EQ(g.degraded.size(), 2u);
  EXPECT_THAT(g.headerComment(),
              HasSubstr("# degraded: \"leaf-su1-r1\"[33] and its peer run at 1xHDR\n"));
  EXPECT_THAT(g.commandLine, HasSubstr("--degrade 'leaf-su1-r1[33]=1xHDR'"));
}

TEST(TopoGen, HeaderCommentNamesPresetOptionsAndCounts) {
  TopoOptions o;
  o.leaves = 2;
  o.spines = 1;
  o.hostsPerLeaf = 2;
  o.rate = "4xEDR";
  GeneratedTopology g = generateTopology("two-level", o);
  std::string h = g.headerComment();
  EXPECT_THAT(h, HasSubstr("# Generated by: ibfabric topo gen --preset two-level\n"));
  EXPECT_THAT(h, HasSubstr("--leaves 2 --spines 1 --hosts-per-leaf 2"));
  EXPECT_THAT(h, HasSubstr("# 3 switches (2 leaves, 1 spines, 0 cores; 40-port MQM8790-HS2F)\n"));
  EXPECT_THAT(h, HasSubstr("# 4 HCAs (4 hosts x 1), 6 links at 4xEDR\n"));
  EXPECT_THAT(h, HasSubstr("# ibsim sizing: -N 7 -S 3 -P 127"));
  // Every header line is a comment and short enough for ibsim.
  std::size_t pos = 0;
  while (pos < h.size()) {
    auto nl = h.find('\n', pos);
    std::string line = h.substr(pos, nl - pos);
    EXPECT_EQ(line.front(), '#');
    EXPECT_LE(line.size(), 100u);
    pos = nl + 1;
  }
}

TEST(TopoGen, OutputIsDeterministic) {
  TopoOptions o;
  o.pods = 2;
  o.leavesPerPod = 2;
  o.spinesPerPod = 2;
  o.cores = 2;
  o.hostsPerLeaf = 2;
  auto a = generateTopology("three-level", o);
  auto b = generateTopology("three-level", o);
  EXPECT_EQ(formatNetFile(a.fabric), formatNetFile(b.fabric));
  EXPECT_EQ(a.headerComment(), b.headerComment());
}

TEST(TopoGen, HostPrefixAndSwitchModel) {
  TopoOptions o;
  o.leaves = 1;
  o.spines = 1;
  o.hostsPerLeaf = 1;
  o.hostPrefix = "gpu";
  o.switchModel = "qm9790";
  auto g = generateTopology("two-level", o);
  EXPECT_NE(g.fabric.find("gpu0001-mlx5_0"), nullptr);
  EXPECT_EQ(g.fabric.find("leaf-01")->numPorts, 64);
}

struct BadOptions {
  const char* name;
  std::string preset;
  TopoOptions options;
  const char* expected;
};

TopoOptions twoLevel(int leaves, int spines, int hosts) {
  return testing::twoLevel(leaves, spines, hosts).options;
}

template <typename F>
TopoOptions with(TopoOptions o, F f) {
  f(o);
  return o;
}

class TopoGenErrors : public ::testing::TestWithParam<BadOptions> {};

TEST_P(TopoGenErrors, ClearOneLineMessage) {
  const BadOptions& c = GetParam();
  try {
    generateTopology(c.preset, c.options);
    FAIL() << "no error for " << c.name;
  } catch (const TopoGenError& e) {
    EXPECT_THAT(e.what(), HasSubstr(c.expected)) << c.name;
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(
    TopoGen, TopoGenErrors,
    ::testing::Values(
        BadOptions{"unknown preset", "fat", twoLevel(2, 2, 2),
                   "unknown preset 'fat' (two-level, three-level, superpod)"},
        BadOptions{"missing option", "two-level",
                   with(twoLevel(2, 2, 2), [](auto& o) { o.spines.reset(); }),
                   "preset two-level needs --spines"},
        BadOptions{"foreign option", "two-level",
                   with(twoLevel(2, 2, 2), [](auto& o) { o.sus = 1; }),
                   "preset two-level does not take --sus"},
        BadOptions{"zero leaves", "two-level", twoLevel(0, 2, 2),
                   "--leaves 0 is out of range (1..4096)"},
        BadOptions{"negative hosts", "two-level", twoLevel(2, 2, -1),
                   "--hosts-per-leaf -1 is out of range"},
        BadOptions{"too many ports", "two-level", twoLevel(100, 40, 2),
                   "switches would need 100 ports; the largest model (qm9790) has 64"},
        BadOptions{"model too small", "two-level",
                   with(twoLevel(2, 2, 40), [](auto& o) { o.switchModel = "qm8790"; }),
                   "switches need 42 ports; qm8790 has 40"},
        BadOptions{"unknown model", "two-level",
                   with(twoLevel(2, 2, 2), [](auto& o) { o.switchModel = "sb7800"; }),
                   "unknown switch model 'sb7800'"},
        BadOptions{"superpod sus range", "superpod", with({}, [](auto& o) { o.sus = 65; }),
                   "--sus 65 is out of range (1..64)"},
        BadOptions{"superpod small model", "superpod",
                   with({},
                        [](auto& o) {
                          o.sus = 1;
                          o.switchModel = "qm8790";
                        }),
                   "switches need 64 ports; qm8790 has 40"},
        BadOptions{"cores not multiple", "three-level",
                   with({},
                        [](auto& o) {
                          o.pods = 2;
                          o.leavesPerPod = 2;
                          o.spinesPerPod = 3;
                          o.cores = 4;
                          o.hostsPerLeaf = 1;
                        }),
                   "--cores 4 must be a multiple of --spines-per-pod 3"},
        BadOptions{"bad rate", "two-level",
                   with(twoLevel(2, 2, 2), [](auto& o) { o.rate = "fast"; }),
                   "--rate: 'fast' is not a link rate like 4xHDR"},
        BadOptions{"ndr", "two-level", with(twoLevel(2, 2, 2), [](auto& o) { o.rate = "4xNDR"; }),
                   "4xNDR is beyond HDR, which ibsim 0.10 cannot run"},
        BadOptions{"degrade syntax", "two-level",
                   with(twoLevel(2, 2, 2), [](auto& o) { o.degrade = {"leaf-01=1x"}; }),
                   "--degrade 'leaf-01=1x': missing [PORT]"},
        BadOptions{"degrade rate", "two-level",
                   with(twoLevel(2, 2, 2), [](auto& o) { o.degrade = {"leaf-01[3]=3x"}; }),
                   "'3x' is neither a width (1x) nor a rate (1xHDR)"},
        BadOptions{"degrade unknown node", "two-level",
                   with(twoLevel(2, 2, 2), [](auto& o) { o.degrade = {"leaf-09[3]=1x"}; }),
                   "no node \"leaf-09\""},
        BadOptions{"degrade unlinked port", "two-level",
                   with(twoLevel(2, 2, 2), [](auto& o) { o.degrade = {"leaf-01[9]=1x"}; }),
                   "port 9 is not linked"},
        BadOptions{"host prefix", "two-level",
                   with(twoLevel(2, 2, 2), [](auto& o) { o.hostPrefix = "a b"; }),
                   "--host-prefix 'a b'"}));

TEST(TopoGen, LidBudgetIsEnforced) {
  TopoOptions o;
  o.pods = 1024;
  o.leavesPerPod = 8;
  o.spinesPerPod = 1;
  o.cores = 1;
  o.hostsPerLeaf = 8;
  try {
    generateTopology("three-level", o);
    FAIL();
  } catch (const TopoGenError& e) {
    EXPECT_THAT(e.what(), HasSubstr("LIDs; a subnet has 49151"));
  }
}

}  // namespace
}  // namespace ibfabric
