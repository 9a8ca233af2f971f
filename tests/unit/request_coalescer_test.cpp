// RequestCoalescer (api/osm/request_coalescer.h) driven by a fake clock: a storm of 19,800 events
// over 10 s for 12 keys runs each key's work a bounded number of times (leading run at once, one
// every maxWait, one trailing run), the trailing run does the latest event's work, quiet keys run
// every time, bursts and coalesced events are counted; the timer thread runs the trailing work.
#include "api/osm/request_coalescer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>

#include "tests/support/subprocess.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;
using Clock = RequestCoalescer::Clock;

struct FakeClock {
  Clock::time_point t{std::chrono::hours(1)};
  std::function<Clock::time_point()> fn() {
    return [this] { return t; };
  }
};

RequestCoalescer::Options fakeOptions(FakeClock& clock) {
  RequestCoalescer::Options o;
  o.quiet = 1s;
  o.maxWait = 5s;
  o.now = clock.fn();
  return o;
}

TEST(RequestCoalescer, AStormOfTrapsRunsEachKeysWorkABoundedNumberOfTimes) {
  FakeClock clock;
  RequestCoalescer c(fakeOptions(clock));
  std::map<std::string, int> runs;
  std::mt19937 rng(7);
  const auto start = clock.t;
  // 19,800 events in 10 s (one every ~505 us), for 11 switches and the crawl.
  for (int i = 0; i < 19800; ++i) {
    clock.t = start + std::chrono::microseconds(i * 10'000'000LL / 19800);
    const int k = static_cast<int>(rng() % 12);
    const std::string key = k == 11 ? "crawl" : "probe of LID " + std::to_string(k + 1);
    c.offer(key, [&runs, key] { ++runs[key]; });
    if (i % 20 == 0) c.tick();  // the timer thread, every ~10 ms
  }
  // Every key ran at once (its leading run) and at most once per maxWait during the storm.
  ASSERT_EQ(runs.size(), 12u);
  for (const auto& [key, n] : runs) EXPECT_LE(n, 1 + 10 / 5) << key;
  // The storm ends: one trailing run per key once it has been quiet for 1 s.
  clock.t += 500ms;
  c.tick();
  clock.t += 600ms;
  EXPECT_FALSE(c.tick()) << "nothing left to do";
  int total = 0;
  for (const auto& [key, n] : runs) {
    EXPECT_GE(n, 2) << key;           // leading and trailing
    EXPECT_LE(n, 2 + 10 / 5) << key;  // 2 + T / maxWait
    total += n;
  }
  const CoalescingCounts counts = c.counts();
  EXPECT_EQ(counts.events, 19800u);
  EXPECT_EQ(counts.runs, static_cast<std::uint64_t>(total));
  EXPECT_EQ(counts.coalesced(), 19800u - total);
  EXPECT_EQ(counts.bursts, 12u);
}

TEST(RequestCoalescer, TheTrailingRunDoesTheLatestEventsWork) {
  FakeClock clock;
  RequestCoalescer c(fakeOptions(clock));
  std::vector<int> done;
  for (int i = 1; i <= 50; ++i) {
    c.offer("route refresh", [&done, i] { done.push_back(i); });
    clock.t += 10ms;
  }
  EXPECT_EQ(done, std::vector<int>({1}));
  clock.t += 1s;
  c.tick();
  EXPECT_EQ(done, std::vector<int>({1, 50}));
}

TEST(RequestCoalescer, ALongBurstRunsEveryMaxWaitWhileItLasts) {
  FakeClock clock;
  RequestCoalescer c(fakeOptions(clock));
  int runs = 0;
  const auto start = clock.t;
  while (clock.t - start < 12s) {
    c.offer("crawl", [&runs] { ++runs; });
    clock.t += 100ms;
    c.tick();
  }
  EXPECT_EQ(runs, 3);  // at 0, 5 and 10 s: a change inside the storm waits at most 5 s
  clock.t += 1s;
  c.tick();
  EXPECT_EQ(runs, 4);
  EXPECT_EQ(c.counts().bursts, 1u);
}

TEST(RequestCoalescer, EventsFurtherApartThanQuietRunEveryTime) {
  FakeClock clock;
  RequestCoalescer c(fakeOptions(clock));
  int runs = 0;
  for (int i = 0; i < 5; ++i) {
    c.offer("probe of LID 3", [&runs] { ++runs; });
    clock.t += 1500ms;
    c.tick();
  }
  EXPECT_EQ(runs, 5);
  EXPECT_EQ(c.counts().bursts, 0u);
  EXPECT_EQ(c.counts().coalesced(), 0u);
}

TEST(RequestCoalescer, TheTimerThreadRunsTheTrailingWorkAndPublishesTheCounts) {
  RequestCoalescer::Options o;
  o.quiet = 50ms;
  o.maxWait = 1s;
  std::atomic<std::uint64_t> published{0};
  o.onCounts = [&published](const CoalescingCounts& c) { published = c.runs; };
  RequestCoalescer c(o);
  c.start();
  std::atomic<int> runs{0};
  for (int i = 0; i < 10; ++i) c.offer("crawl", [&runs] { ++runs; });
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(testing::waitFor([&] { return runs == 2 && published == 2; }, 5s, 5ms));
  c.stop();
  EXPECT_EQ(c.counts().bursts, 1u);
}

}  // namespace
}  // namespace ibfabric::api
