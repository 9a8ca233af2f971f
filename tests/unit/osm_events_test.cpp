// The daemon's side of the OpenSM plugin: the NDJSON parser (every event type, clear errors for
// malformed lines), the line splitter, and the Unix-socket listener on a real socket.
#include "api/osm/osm_events.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <mutex>
#include <vector>

#include "api/daemon/service_config.h"
#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;
using testing::waitFor;

std::string errorOf(std::string_view line) {
  try {
    parseOsmEvent(line);
  } catch (const OsmEventError& e) {
    return e.what();
  }
  return "(parsed)";
}

TEST(OsmEventParser, ParsesEveryEventType) {
  auto hello = parseOsmEvent(
      R"({"type":"hello","seq":1,"time":1700000000.5,"dropped":3,"osm_version":"OpenSM 3.3.23",)"
      R"("plugin_version":"ibfabric_osm 1","sm_state":"master"})");
  EXPECT_EQ(hello.type, OsmEventType::kHello);
  EXPECT_EQ(hello.seq, 1u);
  EXPECT_DOUBLE_EQ(hello.time, 1700000000.5);
  EXPECT_EQ(hello.dropped, 3u);
  EXPECT_EQ(hello.osmVersion, "OpenSM 3.3.23");
  EXPECT_EQ(hello.smState, "master");

  auto trap = parseOsmEvent(
      R"({"type":"trap","seq":2,"time":1,"dropped":0,"trap":128,"issuer_lid":7,"lid":5})");
  EXPECT_EQ(trap.type, OsmEventType::kTrap);
  EXPECT_EQ(trap.trapNumber, 128);
  EXPECT_EQ(trap.issuerLid, Lid{7});
  EXPECT_EQ(trap.trapSwitchLid(), Lid{5});
  auto issuerOnly =
      parseOsmEvent(R"({"type":"trap","seq":2,"time":1,"dropped":0,"trap":128,"issuer_lid":7})");
  EXPECT_EQ(issuerOnly.trapSwitchLid(), Lid{7});
  auto trap129 = parseOsmEvent(
      R"({"type":"trap","seq":3,"time":1,"dropped":0,"trap":129,"issuer_lid":7,"lid":9,"port":4})");
  ASSERT_TRUE(trap129.port);
  EXPECT_EQ(*trap129.port, PortNum{4});

  EXPECT_EQ(parseOsmEvent(R"({"type":"subnet_up","seq":4,"time":1,"dropped":0})").type,
            OsmEventType::kSubnetUp);
  EXPECT_EQ(parseOsmEvent(R"({"type":"heavy_sweep_done","seq":5,"time":1,"dropped":0})").type,
            OsmEventType::kHeavySweepDone);
  auto routing = parseOsmEvent(
      R"({"type":"ucast_routing_done","seq":6,"time":1,"dropped":0,"reason":"reroute"})");
  EXPECT_EQ(routing.reason, "reroute");
  auto lft = parseOsmEvent(
      R"({"type":"lft_change","seq":7,"time":1,"dropped":0,"switch_guid":"0x0000000000200001",)"
      R"("block":2})");
  EXPECT_EQ(lft.switchGuid, Guid{0x200001});
  EXPECT_EQ(lft.block, 2u);
  EXPECT_FALSE(lft.lftTop);
  auto state = parseOsmEvent(
      R"({"type":"state_change","seq":8,"time":1,"dropped":0,"sm_state":"standby","extra":1})");
  EXPECT_EQ(state.smState, "standby");
  auto pe = parseOsmEvent(
      R"({"type":"port_errors","seq":9,"time":1,"dropped":0,"node_guid":"0x0000000000100001",)"
      R"("port":1,"node":"host1 mlx5_0","counters":{"symbol_errors":7,"link_downed":1},)"
      R"("interval_s":10})");
  EXPECT_EQ(pe.nodeGuid, Guid{0x100001});
  EXPECT_EQ(pe.counters.at("symbol_errors"), 7u);
  EXPECT_EQ(pe.intervalSeconds, 10);
}

TEST(OsmEventParser, MalformedLinesGiveClearErrors) {
  EXPECT_EQ(errorOf("{not json"), "not JSON");
  EXPECT_EQ(errorOf("[1,2]"), "not a JSON object");
  EXPECT_EQ(errorOf(R"({"seq":1,"time":1,"dropped":0})"), "missing field \"type\"");
  EXPECT_EQ(errorOf(R"({"type":"party","seq":1,"time":1,"dropped":0})"),
            "unknown event type \"party\"");
  EXPECT_EQ(errorOf(R"({"type":"subnet_up","seq":-1,"time":1,"dropped":0})"),
            "field \"seq\" must be a non-negative integer, got -1");
  EXPECT_EQ(errorOf(R"({"type":"subnet_up","seq":"1","time":1,"dropped":0})"),
            "field \"seq\" must be a non-negative integer, got \"1\"");
  EXPECT_EQ(errorOf(R"({"type":"subnet_up","seq":1,"time":"now","dropped":0})"),
            "field \"time\" must be a number, got \"now\"");
  EXPECT_EQ(errorOf(R"({"type":"subnet_up","seq":1,"time":1})"), "missing field \"dropped\"");
  EXPECT_EQ(errorOf(R"({"type":"trap","seq":1,"time":1,"dropped":0,"trap":128})"),
            "missing field \"issuer_lid\"");
  EXPECT_EQ(errorOf(R"({"type":"trap","seq":1,"time":1,"dropped":0,"trap":70000,"issuer_lid":1})"),
            "field \"trap\" out of range (70000 > 65535)");
  EXPECT_EQ(errorOf(R"({"type":"lft_change","seq":1,"time":1,"dropped":0,"switch_guid":"zz"})"),
            "field \"switch_guid\" is not a GUID: \"zz\"");
  EXPECT_EQ(errorOf(R"({"type":"ucast_routing_done","seq":1,"time":1,"dropped":0,"reason":"fun"})"),
            "field \"reason\" must be heavy_sweep, reroute or none, got \"fun\"");
  EXPECT_EQ(errorOf(""), "not JSON");
}

TEST(OsmLineSplitter, SplitsAcrossReadsAndSkipsOverlongLines) {
  LineSplitter s(16);
  auto a = s.feed("{\"a\":1}\n{\"b\"");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(*a[0], "{\"a\":1}");
  auto b = s.feed(":2}\r\n\n");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(*b[0], "{\"b\":2}");
  auto c = s.feed("0123456789abcdef0123");  // longer than 16: skipped up to its newline
  EXPECT_TRUE(c.empty());
  auto d = s.feed("456\nok\n");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_FALSE(d[0].has_value());
  EXPECT_EQ(*d[1], "ok");
}

int connectTo(const std::filesystem::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void sendAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
    ASSERT_GT(n, 0);
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

TEST(OsmEventListener, ReceivesEventsCountsMalformedLinesAndFollowsReconnects) {
  const auto path = testing::scratchDir() / "osm-listener.sock";
  std::mutex mu;
  std::vector<OsmEvent> events;
  std::atomic<int> statusUpdates{0};
  OsmLinkStatus last;
  OsmEventListener listener(
      path,
      [&](const OsmEvent& e) {
        std::lock_guard lock(mu);
        events.push_back(e);
      },
      [&](const OsmLinkStatus& s) {
        std::lock_guard lock(mu);
        last = s;
        ++statusUpdates;
      });
  listener.start();
  EXPECT_TRUE(listener.status().enabled);
  EXPECT_FALSE(listener.status().connected);

  int fd = connectTo(path);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(waitFor([&] { return listener.status().connected; }, 5s));
  sendAll(fd,
          "{\"type\":\"hello\",\"seq\":1,\"time\":1,\"dropped\":0,\"osm_version\":\"OpenSM 3\","
          "\"sm_state\":\"master\"}\n{\"type\":\"trap\",\"seq\":2,\"time\":1,\"dropped\":0,");
  sendAll(fd, "\"trap\":128,\"issuer_lid\":4}\nnot json at all\n");
  ASSERT_TRUE(waitFor([&] { return listener.status().malformed == 1; }, 5s));
  {
    std::lock_guard lock(mu);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[1].trapSwitchLid(), Lid{4});
  }
  auto st = listener.status();
  EXPECT_EQ(st.eventsByType.at("hello"), 1u);
  EXPECT_EQ(st.eventsByType.at("trap"), 1u);
  EXPECT_EQ(st.osmVersion, "OpenSM 3");
  EXPECT_EQ(st.smState, "master");
  EXPECT_EQ(st.lastSeq, 2u);
  EXPECT_NE(st.lastError.find("not JSON"), std::string::npos) << st.lastError;

  // The plugin reconnects (OpenSM restarted): the new connection replaces the old one.
  int fd2 = connectTo(path);
  ASSERT_GE(fd2, 0);
  ASSERT_TRUE(waitFor([&] { return listener.status().connections == 2; }, 5s));
  sendAll(fd2, "{\"type\":\"subnet_up\",\"seq\":1,\"time\":1,\"dropped\":5}\n");
  ASSERT_TRUE(waitFor([&] { return listener.status().pluginDropped == 5; }, 5s));
  ::close(fd);
  ::close(fd2);
  ASSERT_TRUE(waitFor([&] { return !listener.status().connected; }, 5s));
  // The sink hears about the disconnection too (just after the status changed).
  EXPECT_TRUE(waitFor(
      [&] {
        std::lock_guard lock(mu);
        return !last.connected && last.connections == 2;
      },
      5s));
  EXPECT_GT(statusUpdates.load(), 3);
  listener.stop();
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(OsmEventListener, RefusesAPathThatIsNotASocket) {
  const auto path = testing::writeScratchFile("osm-not-a-socket", "data");
  OsmEventListener listener(path, nullptr, nullptr);
  try {
    listener.start();
    FAIL() << "started on a regular file";
  } catch (const OsmEventError& e) {
    EXPECT_NE(std::string(e.what()).find("not a socket"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::filesystem::exists(path));  // left alone
  OsmEventListener tooLong(std::string(200, 'x'), nullptr, nullptr);
  EXPECT_THROW(tooLong.start(), OsmEventError);
}

TEST(OsmEventsConfig, OffByDefaultAndSetByTheYamlKey) {
  EXPECT_TRUE(ServiceConfig{}.osmEvents.empty());
  EXPECT_EQ(loadConfigText("osm_events: /run/ibfabric/osm.sock\n").osmEvents,
            "/run/ibfabric/osm.sock");
  EXPECT_THROW(loadConfigText("osm_event: /x\n"), ConfigError);  // typo: unknown key
}

}  // namespace
}  // namespace ibfabric::api
