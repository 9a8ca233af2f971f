#include "discovery/netfile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "discovery/topogen.h"
#include "tests/support/test_paths.h"

namespace ibfabric {
namespace {

using ::testing::HasSubstr;

// ibnetdiscover output of a small real-looking fabric: Mellanox GUIDs, a 2-port ConnectX-5 with
// one port cabled, an EDR link, a leaf-spine link.
constexpr std::string_view kIbnetdiscover = R"(#
# Topology file: generated on Tue Mar  5 10:00:00 2024
#
# Initiated from node 0c42a10300d1e2f0 port 0c42a10300d1e2f1

vendid=0x2c9
devid=0xd2f0
sysimgguid=0x98039b0300a1b2c3
switchguid=0x98039b0300a1b2c3(98039b0300a1b2c3)
Switch	40 "S-98039b0300a1b2c3"		# "MF0;leaf-01:MQM8790-HS2F/U1" enhanced port 0 lid 1 lmc 0
[1]	"H-0c42a10300d1e2f0"[1](c42a10300d1e2f1) 		# "dgx0001 mlx5_0" lid 3 4xHDR
[2]	"H-0c42a10300d1e3a0"[2](c42a10300d1e3a2) 		# "dgx0002 mlx5_1" lid 4 4xEDR
[33]	"S-98039b0300a1b400"[1]		# "MF0;spine-01:MQM8790-HS2F/U1" lid 2 4xHDR

vendid=0x2c9
devid=0xd2f0
sysimgguid=0x98039b0300a1b400
switchguid=0x98039b0300a1b400(98039b0300a1b400)
Switch	40 "S-98039b0300a1b400"		# "MF0;spine-01:MQM8790-HS2F/U1" enhanced port 0 lid 2 lmc 0
[1]	"S-98039b0300a1b2c3"[33]		# "MF0;leaf-01:MQM8790-HS2F/U1" lid 1 4xHDR

vendid=0x2c9
devid=0x101b
sysimgguid=0xc42a10300d1e2f0
caguid=0xc42a10300d1e2f0
Ca	1 "H-0c42a10300d1e2f0"		# "dgx0001 mlx5_0"
[1](c42a10300d1e2f1) 	"S-98039b0300a1b2c3"[1]		# lid 3 lmc 0 "MF0;leaf-01:MQM8790-HS2F/U1" lid 1 4xHDR

vendid=0x2c9
devid=0x1017
sysimgguid=0xc42a10300d1e3a0
caguid=0xc42a10300d1e3a0
Ca	2 "H-0c42a10300d1e3a0"		# "dgx0002 mlx5_1"
[2](c42a10300d1e3a2) 	"S-98039b0300a1b2c3"[2]		# lid 4 lmc 0 "MF0;leaf-01:MQM8790-HS2F/U1" lid 1 4xEDR
)";

TEST(NetFile, ParsesIbnetdiscoverOutput) {
  NetFabric f = parseNetText(kIbnetdiscover, "disc.net");
  ASSERT_EQ(f.nodes.size(), 4u);
  EXPECT_EQ(f.switchCount(), 2u);
  EXPECT_EQ(f.caCount(), 2u);
  EXPECT_EQ(f.linkCount(), 3u);

  const NetNode* leaf = f.find("S-98039b0300a1b2c3");
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->type, NodeType::kSwitch);
  EXPECT_EQ(leaf->numPorts, 40);
  EXPECT_EQ(leaf->desc, "MF0;leaf-01:MQM8790-HS2F/U1");
  EXPECT_EQ(leaf->name(), "MF0;leaf-01:MQM8790-HS2F/U1");
  EXPECT_EQ(leaf->guid, Guid{0x98039b0300a1b2c3});
  EXPECT_EQ(leaf->sysImageGuid, Guid{0x98039b0300a1b2c3});
  EXPECT_EQ(leaf->vendorId, 0x2c9u);
  EXPECT_EQ(leaf->deviceId, 0xd2f0u);
  EXPECT_EQ(leaf->lid, Lid{1});
  EXPECT_EQ(leaf->enhancedPort0, true);
  EXPECT_EQ(leaf->line, 10);
  ASSERT_EQ(leaf->ports.size(), 3u);

  const NetPort* p1 = leaf->port(PortNum{1});
  ASSERT_NE(p1, nullptr);
  EXPECT_EQ(p1->remoteId, "H-0c42a10300d1e2f0");
  EXPECT_EQ(p1->remotePort, PortNum{1});
  EXPECT_EQ(p1->remotePortGuid, Guid{0x0c42a10300d1e2f1});
  EXPECT_EQ(p1->remoteDesc, "dgx0001 mlx5_0");
  EXPECT_EQ(p1->remoteLid, Lid{3});
  EXPECT_EQ(p1->rate, (LinkRate{LinkWidth::k4x, LinkSpeed::kHdr}));
  EXPECT_EQ(p1->line, 11);
  EXPECT_EQ(leaf->port(PortNum{2})->rate, (LinkRate{LinkWidth::k4x, LinkSpeed::kEdr}));
  const NetPort* up = leaf->port(PortNum{33});
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->remoteId, "S-98039b0300a1b400");
  EXPECT_EQ(up->remotePortGuid, std::nullopt);
  EXPECT_EQ(leaf->port(PortNum{3}), nullptr);

  const NetNode* ca = f.find("H-0c42a10300d1e3a0");
  ASSERT_NE(ca, nullptr);
  EXPECT_EQ(ca->type, NodeType::kCa);
  EXPECT_EQ(ca->numPorts, 2);
  EXPECT_EQ(ca->desc, "dgx0002 mlx5_1");
  EXPECT_EQ(ca->guid, Guid{0x0c42a10300d1e3a0});
  EXPECT_EQ(ca->deviceId, 0x1017u);
  EXPECT_EQ(ca->lid, std::nullopt);
  ASSERT_EQ(ca->ports.size(), 1u);
  const NetPort& cp = ca->ports[0];
  EXPECT_EQ(cp.port, PortNum{2});
  EXPECT_EQ(cp.portGuid, Guid{0x0c42a10300d1e3a2});
  EXPECT_EQ(cp.lid, Lid{4});
  EXPECT_EQ(cp.remoteLid, Lid{1});
  EXPECT_EQ(cp.remoteDesc, "MF0;leaf-01:MQM8790-HS2F/U1");
  EXPECT_EQ(cp.rate, (LinkRate{LinkWidth::k4x, LinkSpeed::kEdr}));
}

// Captured from `ibnetdiscover` run through umad2sim against ibsim, on a file written by
// `ibfabric topo gen --preset two-level --leaves 2 --spines 2 --hosts-per-leaf 2
// --degrade 'leaf-01[3]=1x'`.
TEST(NetFile, ParsesCapturedIbsimDiscovery) {
  NetFabric f = parseNetFile(testing::testDataDir() / "ibnetdiscover-two-level-degraded.net");
  EXPECT_EQ(f.switchCount(), 4u);
  EXPECT_EQ(f.caCount(), 4u);
  EXPECT_EQ(f.linkCount(), 8u);
  const NetNode* leaf1 = f.find("S-0000000000200000");
  ASSERT_NE(leaf1, nullptr);
  EXPECT_EQ(leaf1->desc, "MF0;leaf-01:MQM8790-HS2F/U1");
  EXPECT_EQ(leaf1->port(PortNum{3})->rate, (LinkRate{LinkWidth::k1x, LinkSpeed::kHdr}));
  EXPECT_EQ(leaf1->port(PortNum{4})->rate, (LinkRate{LinkWidth::k4x, LinkSpeed::kHdr}));
  const NetNode* host = f.find("H-0000000000100000");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->desc, "dgx0001 mlx5_0");
  EXPECT_EQ(host->ports.at(0).portGuid, Guid{0x100001});
}

TEST(NetFile, ParsesHandWrittenIbsimFile) {
  constexpr std::string_view kText = R"(# hand-written, ibsim style
Switch 8 "MF0;leaf 1:MQM8790/U1"
[1] "host01 mlx5_0"[1]
[2]	"host02"[2]
[3] "sw2"[3]

Switch	8 "sw2" # spine switch
[3] "MF0;leaf 1:MQM8790/U1"[3]

Hca 1 "host01 mlx5_0"
[1] "MF0;leaf 1:MQM8790/U1"[1]

Hca	2 "host02"
[2]	"MF0;leaf 1:MQM8790/U1"[2]
)";
  NetFabric f = parseNetText(kText, "hand.net");
  ASSERT_EQ(f.nodes.size(), 4u);
  EXPECT_EQ(f.linkCount(), 3u);
  const NetNode* leaf = f.find("MF0;leaf 1:MQM8790/U1");
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->desc, "");
  EXPECT_EQ(leaf->name(), "MF0;leaf 1:MQM8790/U1");
  EXPECT_EQ(leaf->port(PortNum{1})->remoteId, "host01 mlx5_0");
  EXPECT_EQ(leaf->port(PortNum{1})->rate, std::nullopt);
  EXPECT_EQ(f.find("sw2")->desc, "spine switch");
  // GUIDs as ibsim assigns them: switches count up from 0x200000, CAs step by ports + 1.
  EXPECT_EQ(leaf->guid, Guid{0x200000});
  EXPECT_EQ(f.find("sw2")->guid, Guid{0x200001});
  EXPECT_EQ(f.find("host01 mlx5_0")->guid, Guid{0x100000});
  EXPECT_EQ(f.find("host02")->guid, Guid{0x100002});
  EXPECT_EQ(f.find("host02")->type, NodeType::kCa);
}

TEST(NetFile, RatesFollowWhatBothEndsEnable) {
  constexpr std::string_view kText = R"(width=3
speed=7
extspeed=4
Switch 4 "s1"
[1] "h1"[1]
[2] "h2"[1] w=1
[3] "h3"[1]		# "h3" lid 0 4xHDR

Hca 1 "h1"
[1] "s1"[1]

Hca 1 "h2"
[1] "s1"[2]

Hca 1 "h3"
[1] "s1"[3]		# lid 0 lmc 0 "s1" lid 0 1xHDR
)";
  NetFabric f = parseNetText(kText, "rates.net");
  const NetNode* s1 = f.find("s1");
  EXPECT_EQ(s1->port(PortNum{1})->rate, (LinkRate{LinkWidth::k4x, LinkSpeed::kHdr}));
  // w=1 on one end: 1x is the only width both enable.
  EXPECT_EQ(s1->port(PortNum{2})->rate, (LinkRate{LinkWidth::k1x, LinkSpeed::kHdr}));
  EXPECT_EQ(f.find("h2")->ports[0].rate, (LinkRate{LinkWidth::k1x, LinkSpeed::kHdr}));
  // 4xHDR against 1xHDR comes up 1x (as in ibsim); both ends carry the result.
  EXPECT_EQ(s1->port(PortNum{3})->rate, (LinkRate{LinkWidth::k1x, LinkSpeed::kHdr}));
  EXPECT_EQ(f.find("h3")->ports[0].rate, (LinkRate{LinkWidth::k1x, LinkSpeed::kHdr}));
}

TEST(NetFile, IbnetdiscoverFullInfoOptionsAreRead) {
  constexpr std::string_view kText = R"(Switch 4 "s"		# "sw" enhanced port 0 lid 1 lmc 0
[1]	"h"[1](101) 		# "host" lid 2 4xEDR s=4 w=2 v=4 e=2

Ca 1 "h"		# "host"
[1](101) 	"s"[1]		# lid 2 lmc 0 "sw" lid 1 4xEDR s=4 w=2 v=4 e=2
)";
  NetFabric f = parseNetText(kText, "full.net");
  EXPECT_EQ(f.find("s")->ports[0].rate, (LinkRate{LinkWidth::k4x, LinkSpeed::kEdr}));
}

struct BadCase {
  const char* name;
  std::string text;
  const char* expected;  // substring of what()
};

class NetFileErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(NetFileErrors, NameSourceLineAndProblem) {
  const BadCase& c = GetParam();
  try {
    parseNetText(c.text, "bad.net");
    FAIL() << "no error for " << c.name;
  } catch (const NetFileError& e) {
    EXPECT_THAT(e.what(), HasSubstr(c.expected)) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    NetFile, NetFileErrors,
    ::testing::Values(
        BadCase{"unknown node", "Switch 4 \"s\"\n[1] \"h\"[1]\n\nHca 1 \"x\"\n[1] \"s\"[1]\n",
                "bad.net:2: unknown node \"h\""},
        BadCase{"port out of range", "Switch 4 \"s\"\n[1] \"h\"[1]\n[5] \"h\"[2]\n",
                "bad.net:3: port 5 out of range: \"s\" has 4 ports"},
        BadCase{"remote port out of range",
                "Switch 4 \"s\"\n[1] \"h\"[2]\n\nHca 1 \"h\"\n[1] \"s\"[1]\n",
                "bad.net:2: remote port 2 out of range: \"h\" has 1 ports"},
        BadCase{"duplicate id",
                "Switch 4 \"s\"\n[1] \"h\"[1]\n\nHca 1 \"h\"\n[1] \"s\"[1]\n\nHca 1 \"s\"\n",
                "bad.net:7: duplicate node id \"s\" (first defined at line 1)"},
        BadCase{"port used twice",
                "Switch 4 \"s\"\n[1] \"h\"[1]\n\nHca 1 \"h\"\n[1] \"s\"[1]\n[1] \"s\"[2]\n",
                "bad.net:6: port 1 of \"h\" is used twice (line 5)"},
        BadCase{"ends disagree",
                "Switch 4 \"s\"\n[1] \"a\"[1]\n[2] \"b\"[1]\n\nHca 1 \"a\"\n[1] \"s\"[2]\n\n"
                "Hca 1 \"b\"\n[1] \"s\"[2]\n",
                "bad.net:2: link \"s\"[1] -> \"a\"[1], but line 6 links \"a\"[1] -> \"s\"[2]"},
        BadCase{"one-sided link", "Switch 4 \"s\"\n[1] \"h\"[1]\n\nHca 1 \"h\"\n",
                "bad.net:2: link \"s\"[1] -> \"h\"[1], but \"h\" lists no link on port 1"},
        BadCase{"duplicate guid", "caguid=0x10\nCa 1 \"a\"\n\ncaguid=0x10\nCa 1 \"b\"\n",
                "bad.net:5: duplicate GUID 0x0000000000000010 (also node \"a\" at line 2)"},
        BadCase{"port outside record", "Switch 4 \"s\"\n\n[1] \"h\"[1]\n",
                "bad.net:3: port line outside a node record"},
        BadCase{"port 0", "Switch 4 \"s\"\n[0] \"h\"[1]\n", "bad.net:2: port 0 cannot be linked"},
        BadCase{"self link", "Switch 4 \"s\"\n[1] \"s\"[1]\n",
                "bad.net:2: \"s\"[1] is linked to itself"},
        BadCase{"bad rate", "Switch 4 \"s\"\n[1] \"h\"[1]\t# \"h\" lid 0 4xFOO\n",
                "bad.net:2: unknown link rate '4xFOO'"},
        BadCase{"no common width",
                "Switch 4 \"s\"\n[1] \"h\"[1] w=1\n\nHca 1 \"h\"\n[1] \"s\"[1] w=2\n",
                "bad.net:2: link \"s\"[1] -> \"h\"[1]: the ends share no enabled width"},
        BadCase{"reserved char in id", "Switch 4 \"a#b\"\n", "bad.net:1: node id \"a#b\""},
        BadCase{"missing port count", "Switch \"s\"\n", "bad.net:1: expected a port count"},
        BadCase{"space before remote port", "Switch 4 \"s\"\n[1] \"h\" [1]\n",
                "bad.net:2: the remote [port] must follow"},
        BadCase{"garbage line", "Switch 4 \"s\"\nhello world\n",
                "bad.net:2: unrecognized line: hello world"},
        BadCase{"bad width keyword", "width=99\n", "bad.net:1: width=99 is not a width mask"},
        BadCase{"include", "include \"other.net\"\n",
                "bad.net:1: ibsim directive 'include' is not supported"},
        BadCase{"line too long", "# " + std::string(300, 'x') + "\n",
                "bad.net:1: line is 302 characters long"},
        // Found by tests/fuzz/netfile_fuzz.cpp: both were accepted, and formatNetFile() wrote
        // them back into files that read back otherwise (a shorter description) or not at all
        // (a line over 255 characters).
        BadCase{"quote in an unquoted description", "Ca 1 \"h\"\t# h\"1 mlx5_0\n",
                "bad.net:1: a '\"' inside an unquoted node description"},
        BadCase{"description too long", "Ca 1 \"0\"# " + std::string(243, 'd') + "\n",
                "bad.net:1: a description of 243 characters; ibsim reads 63 at most"},
        BadCase{"remote description too long",
                "Switch 4 \"s\"\n[1] \"h\"[1]\t# \"" + std::string(64, 'r') + "\" lid 0 4xHDR\n",
                "bad.net:2: a description of 64 characters"}));

TEST(NetFile, MissingFileIsAnError) {
  try {
    parseNetFile("/nonexistent/fabric.net");
    FAIL();
  } catch (const NetFileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/fabric.net:0: cannot open file"));
  }
}

TEST(NetFile, IbnetdiscoverOutputRoundTrips) {
  NetFabric f = parseNetText(kIbnetdiscover, "disc.net");
  std::string text = formatNetFile(f);
  NetFabric again = parseNetText(text, "formatted.net");
  EXPECT_EQ(again, f);
  EXPECT_EQ(formatNetFile(again), text);
  // The writer keeps ibnetdiscover's shapes that ibsim reads.
  EXPECT_THAT(text, HasSubstr("switchguid=0x98039b0300a1b2c3(98039b0300a1b2c3)\n"
                              "Switch\t40 \"S-98039b0300a1b2c3\"\t\t# "
                              "\"MF0;leaf-01:MQM8790-HS2F/U1\" enhanced port 0 lid 1 lmc 0\n"
                              "[1]\t\"H-0c42a10300d1e2f0\"[1](c42a10300d1e2f1) \t\t# "
                              "\"dgx0001 mlx5_0\" lid 3 4xHDR\n"));
  EXPECT_THAT(text, HasSubstr("[2](c42a10300d1e3a2) \t\"S-98039b0300a1b2c3\"[2]\t\t# lid 4 lmc 0 "
                              "\"MF0;leaf-01:MQM8790-HS2F/U1\" lid 1 4xEDR\n"));
}

TEST(NetFile, GeneratedFabricRoundTrips) {
  TopoOptions o;
  o.sus = 1;
  o.degrade = {"leaf-su1-r1[33]=1x"};
  GeneratedTopology g = generateTopology("superpod", o);
  std::string text = g.headerComment() + formatNetFile(g.fabric);
  NetFabric f = parseNetText(text, "gen.net");
  EXPECT_EQ(f, g.fabric);
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    if (!(f.nodes[i] == g.fabric.nodes[i])) {
      NetFabric a, b;
      a.nodes = {f.nodes[i]};
      b.nodes = {g.fabric.nodes[i]};
      ADD_FAILURE() << "first difference:\n" << formatNetFile(a) << "vs\n" << formatNetFile(b);
      break;
    }
  }
  EXPECT_EQ(f.linkCount(), g.fabric.linkCount());
  EXPECT_EQ(f.find("leaf-su1-r1")->port(PortNum{33})->rate,
            (LinkRate{LinkWidth::k1x, LinkSpeed::kHdr}));
}

TEST(NetFile, HandWrittenFileRoundTripsWithIbsimGuids) {
  constexpr std::string_view kText =
      "devid=0x1\nSwitch 2 \"s\"\n[1] \"h\"[1]\n\nHca 1 \"h\"\n[1] \"s\"[1]\n\nRt 1 \"r\"\n";
  NetFabric f = parseNetText(kText, "hand.net");
  // devid stays in force for later records, as in ibsim.
  EXPECT_EQ(f.find("h")->deviceId, 1u);
  EXPECT_EQ(f.find("r")->type, NodeType::kRouter);
  EXPECT_EQ(f.find("r")->guid, std::nullopt);
  NetFabric again = parseNetText(formatNetFile(f), "again.net");
  EXPECT_EQ(again, f);
}

TEST(NetFile, LongestIdsAndDescriptionsRoundTripWithinTheLineLimit) {
  // Every field at its longest: each line formatNetFile() writes must stay readable.
  const std::string s(kNetFileMaxId, 's'), h(kNetFileMaxId, 'h');
  const std::string sd(kNetFileMaxDesc, 'S'), hd(kNetFileMaxDesc, 'H');
  const std::string text = "switchguid=0xffffffffffffffff\nSwitch 254 \"" + s + "\" # \"" + sd +
                           "\" enhanced port 0 lid 49151 lmc 0\n[254] \"" + h +
                           "\"[254](fffffffffffffffe) # \"" + hd +
                           "\" lid 49150 4xHDR\n\ncaguid=0xfffffffffffffff0\nCa 254 \"" + h +
                           "\" # \"" + hd + "\"\n[254](fffffffffffffffe) \"" + s +
                           "\"[254] # lid 49150 lmc 0 \"" + sd + "\" lid 49151 4xHDR\n";
  const NetFabric f = parseNetText(text, "long.net");
  const std::string written = formatNetFile(f);
  EXPECT_EQ(parseNetText(written, "rewritten.net"), f) << written;
}

TEST(NetFile, LinkCountCountsEachCableOnce) {
  NetFabric f = parseNetText(
      "Switch 4 \"a\"\n[1] \"b\"[1]\n[2] \"b\"[2]\n\nSwitch 4 \"b\"\n[1] \"a\"[1]\n[2] \"a\"[2]\n",
      "x.net");
  EXPECT_EQ(f.linkCount(), 2u);
  EXPECT_EQ(f.switchCount(), 2u);
  EXPECT_EQ(f.caCount(), 0u);
  EXPECT_EQ(f.find("zz"), nullptr);
}

}  // namespace
}  // namespace ibfabric
