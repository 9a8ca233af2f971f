// The OpenSM plugin's delivery path without OpenSM: the bounded queue drops and counts instead
// of blocking, the sender reconnects with backoff through a fake connector, every line it writes
// parses with the daemon's parser (one wire format on both sides), and report() stays fast while
// the connection is stuck.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "api/osm/osm_events.h"
#include "tests/support/subprocess.h"
#include "tools/osm_plugin/event_queue.h"
#include "tools/osm_plugin/event_sender.h"
#include "tools/osm_plugin/plugin_event.h"

namespace ibfabric::osm {
namespace {

using namespace std::chrono_literals;
using testing::waitFor;

TEST(OsmPluginQueue, DropsAndCountsWhenFullNeverWaits) {
  BoundedQueue<int> q(3);
  EXPECT_TRUE(q.tryPush(1));
  EXPECT_TRUE(q.tryPush(2));
  EXPECT_TRUE(q.tryPush(3));
  EXPECT_FALSE(q.tryPush(4));
  EXPECT_FALSE(q.tryPush(5));
  EXPECT_EQ(q.dropped(), 2u);
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(q.popFor(0ms), 1);
  EXPECT_TRUE(q.tryPush(6));
  EXPECT_EQ(q.dropAll(), 3u);
  EXPECT_EQ(q.dropped(), 5u);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(q.popFor(20ms));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 20ms);
  q.close();
  EXPECT_FALSE(q.tryPush(7));
  EXPECT_EQ(q.dropped(), 6u);
  EXPECT_FALSE(q.popFor(10s));  // closed: returns at once
}

TEST(OsmPluginSender, BackoffDoublesWithinBounds) {
  SenderOptions o;
  o.backoffMin = 100ms;
  o.backoffMax = 1000ms;
  EXPECT_EQ(nextBackoff(0ms, o), 100ms);
  EXPECT_EQ(nextBackoff(100ms, o), 200ms);
  EXPECT_EQ(nextBackoff(800ms, o), 1000ms);
  EXPECT_EQ(nextBackoff(1000ms, o), 1000ms);
}

/// Records what the sender writes; can be told to fail or to block.
struct FakeWire {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::vector<std::string>> connections;  // lines per connection
  int refuse = 0;                                     // refuse this many connection attempts
  int attempts = 0;
  bool breakNext = false;  // the next send fails
  bool block = false;      // sends wait until block is false

  Connector connector() {
    return [this]() -> ConnectionPtr {
      std::lock_guard lock(mu);
      ++attempts;
      if (refuse > 0) {
        --refuse;
        return nullptr;
      }
      connections.emplace_back();
      return std::make_unique<Conn>(*this, connections.size() - 1);
    };
  }
  struct Conn final : Connection {
    Conn(FakeWire& w, std::size_t i) : wire(w), index(i) {}
    bool send(std::string_view data) override {
      std::unique_lock lock(wire.mu);
      wire.cv.wait(lock, [&] { return !wire.block; });
      if (wire.breakNext) {
        wire.breakNext = false;
        return false;
      }
      wire.connections[index].emplace_back(data);
      return true;
    }
    FakeWire& wire;
    std::size_t index;
  };
  std::size_t lines(std::size_t conn) {
    std::lock_guard lock(mu);
    return conn < connections.size() ? connections[conn].size() : 0;
  }
  std::string line(std::size_t conn, std::size_t i) {
    std::lock_guard lock(mu);
    return connections.at(conn).at(i);
  }
};

PluginEvent trap128(std::uint16_t lid) {
  PluginEvent e;
  e.type = PluginEventType::kTrap;
  e.time = 1700000000.25;
  e.trapNumber = 128;
  e.issuerLid = lid;
  e.lid = lid;
  return e;
}

SenderOptions fast() {
  SenderOptions o;
  o.queueCapacity = 8;
  o.backoffMin = 1ms;
  o.backoffMax = 4ms;
  return o;
}

PluginEvent hello() {
  PluginEvent h;
  h.osmVersion = "OpenSM 3.3.23";
  h.smState = "master";
  return h;
}

TEST(OsmPluginSender, DropsWhileNobodyListensThenSendsHelloAndEvents) {
  FakeWire wire;
  wire.refuse = 3;
  EventSender sender(wire.connector(), fast(), hello);
  sender.report(trap128(1));  // queued before the sender runs: dropped (nobody listens)
  sender.start();
  ASSERT_TRUE(waitFor([&] { return sender.connected(); }, 5s));
  EXPECT_GE(wire.attempts, 4);
  EXPECT_EQ(sender.dropped(), 1u);
  sender.report(trap128(5));
  ASSERT_TRUE(waitFor([&] { return wire.lines(0) == 2; }, 5s));

  auto h = api::parseOsmEvent(wire.line(0, 0).substr(0, wire.line(0, 0).size() - 1));
  EXPECT_EQ(h.type, api::OsmEventType::kHello);
  EXPECT_EQ(h.osmVersion, "OpenSM 3.3.23");
  EXPECT_EQ(h.dropped, 1u);
  const std::string raw = wire.line(0, 1);
  ASSERT_EQ(raw.back(), '\n');
  auto t = api::parseOsmEvent(std::string_view(raw).substr(0, raw.size() - 1));
  EXPECT_EQ(t.type, api::OsmEventType::kTrap);
  EXPECT_EQ(t.trapSwitchLid(), Lid{5});
  EXPECT_EQ(h.seq, 2u);  // seq 1 was the dropped trap
  EXPECT_EQ(t.seq, 3u);
  EXPECT_EQ(t.dropped, 1u);
  sender.stop();
}

TEST(OsmPluginSender, ReconnectsAfterABrokenWrite) {
  FakeWire wire;
  EventSender sender(wire.connector(), fast(), hello);
  sender.start();
  ASSERT_TRUE(waitFor([&] { return wire.lines(0) == 1; }, 5s));  // hello
  {
    std::lock_guard lock(wire.mu);
    wire.breakNext = true;
  }
  sender.report(trap128(2));  // lost with the connection, counted
  ASSERT_TRUE(waitFor([&] { return wire.lines(1) == 1; }, 5s));  // the new hello
  sender.report(trap128(3));
  ASSERT_TRUE(waitFor([&] { return wire.lines(1) == 2; }, 5s));
  EXPECT_EQ(sender.dropped(), 1u);
  EXPECT_EQ(sender.connections(), 2u);
  auto t = api::parseOsmEvent(wire.line(1, 1).substr(0, wire.line(1, 1).size() - 1));
  EXPECT_EQ(t.trapSwitchLid(), Lid{3});
  EXPECT_EQ(t.dropped, 1u);
  sender.stop();
}

TEST(OsmPluginSender, ReportNeverBlocksOnAStuckConnection) {
  FakeWire wire;
  EventSender sender(wire.connector(), fast(), hello);
  sender.start();
  ASSERT_TRUE(waitFor([&] { return wire.lines(0) == 1; }, 5s));
  {
    std::lock_guard lock(wire.mu);
    wire.block = true;  // the daemon stopped reading
  }
  const auto t0 = std::chrono::steady_clock::now();
  int accepted = 0;
  for (int i = 0; i < 10000; ++i) accepted += sender.report(trap128(7)) ? 1 : 0;
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(took, 2s);     // 10,000 reports against a blocked writer
  EXPECT_LE(accepted, 9);  // the queue (8) plus the one being written
  EXPECT_GE(sender.dropped(), 10000u - 9u);
  {
    std::lock_guard lock(wire.mu);
    wire.block = false;
  }
  wire.cv.notify_all();
  ASSERT_TRUE(waitFor([&] { return wire.lines(0) >= 1u + accepted; }, 5s));
  sender.stop();
  EXPECT_FALSE(sender.report(trap128(1)));  // stopped: dropped, not blocked
}

TEST(OsmPluginFormat, EveryTypeRoundTripsThroughTheDaemonParser) {
  std::vector<PluginEvent> all;
  PluginEvent e;
  e.time = 5;
  e.seq = 9;
  e.type = PluginEventType::kHello;
  e.osmVersion = "OpenSM 3.3.23";
  e.smState = smStateName(3);
  all.push_back(e);
  all.push_back(trap128(12));
  e = {};
  e.type = PluginEventType::kSubnetUp;
  all.push_back(e);
  e.type = PluginEventType::kHeavySweepDone;
  all.push_back(e);
  e.type = PluginEventType::kUcastRoutingDone;
  e.reason = "reroute";
  all.push_back(e);
  e = {};
  e.type = PluginEventType::kLftChange;
  e.switchGuid = 0x200001;
  e.block = 3;
  all.push_back(e);
  e = {};
  e.type = PluginEventType::kStateChange;
  e.smState = smStateName(2);
  all.push_back(e);
  e = {};
  e.type = PluginEventType::kPortErrors;
  e.nodeGuid = 0x100001;
  e.port = 1;
  e.nodeName = "host \"1\"\xff";  // quotes and invalid UTF-8 survive as valid JSON
  e.counters[0] = 7;
  e.intervalSeconds = 10;
  all.push_back(e);

  for (const auto& ev : all) {
    const std::string line = formatEventLine(ev, 42);
    ASSERT_FALSE(line.empty());
    ASSERT_EQ(line.back(), '\n');
    ASSERT_EQ(line.find('\n'), line.size() - 1);
    api::OsmEvent parsed;
    ASSERT_NO_THROW(parsed = api::parseOsmEvent(std::string_view(line).substr(0, line.size() - 1)))
        << line;
    EXPECT_EQ(std::string(api::toString(parsed.type)), toString(ev.type));
    EXPECT_EQ(parsed.dropped, 42u);
  }
  auto pe = api::parseOsmEvent(formatEventLine(all.back(), 0));
  EXPECT_EQ(pe.counters.at("symbol_errors"), 7u);
  EXPECT_EQ(pe.nodeGuid, Guid{0x100001});
  auto lft = api::parseOsmEvent(formatEventLine(all[5], 0));
  EXPECT_EQ(lft.switchGuid, Guid{0x200001});
  EXPECT_EQ(lft.block, 3u);
  EXPECT_EQ(api::parseOsmEvent(formatEventLine(all[6], 0)).smState, "standby");
}

}  // namespace
}  // namespace ibfabric::osm
