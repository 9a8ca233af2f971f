// A background thread lowers its own priority and no other thread's.
#include "telemetry/thread_priority.h"

#include <gtest/gtest.h>

#include <thread>

namespace ibfabric::telemetry {
namespace {

TEST(ThreadPriority, LowersOnlyTheCallingThread) {
  const int mine = thisThreadNice();
  int before = 0, after = 0;
  bool lowered = false;
  std::thread background([&] {
    before = thisThreadNice();
    lowered = lowerThisThreadPriority(3);
    after = thisThreadNice();
  });
  background.join();
  ASSERT_TRUE(lowered);
  EXPECT_EQ(before, mine);  // a new thread starts at its creator's value
  EXPECT_EQ(after, std::min(before + 3, 19));
  EXPECT_EQ(thisThreadNice(), mine);
  EXPECT_TRUE(lowerThisThreadPriority(0));  // nothing asked, nothing done
  EXPECT_EQ(thisThreadNice(), mine);
}

}  // namespace
}  // namespace ibfabric::telemetry
