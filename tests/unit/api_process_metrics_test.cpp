// The process collector: the daemon's resident memory, CPU and heap figures are the process's
// own — they follow a large allocation and its release.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <sstream>
#include <string>

#include "api/metrics/collectors.h"
#include "api/metrics/metric_writer.h"
#include "telemetry/event_log.h"

namespace ibfabric::api {
namespace {

/// The value of the sample line starting with `series` ("name" or "name{labels}"); -1 if none.
double valueOf(const std::string& page, const std::string& series) {
  std::istringstream in(page);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  return -1;
}

std::string scrape() {
  ServiceState state;
  telemetry::EventLog events;
  MetricsOptions options;
  std::string text;
  MetricWriter out(text);
  processCollector()->collect({state, events, options}, out);
  return text;
}

// Under AddressSanitizer malloc is the sanitizer's: glibc's arenas (what mallinfo2 reports) do
// not see the test's allocation.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kGlibcMalloc = false;
#else
constexpr bool kGlibcMalloc = true;
#endif

TEST(ApiProcessMetrics, FollowTheProcesssMemory) {
  const std::string before = scrape();
  for (const char* family :
       {"# TYPE process_resident_memory_bytes gauge", "# TYPE process_cpu_seconds_total counter",
        "# TYPE process_open_fds gauge", "# TYPE ibfabric_heap_bytes gauge"})
    EXPECT_NE(before.find(family), std::string::npos) << family;
  EXPECT_GT(valueOf(before, "process_threads"), 0);
  EXPECT_GT(valueOf(before, "process_open_fds"), 2);  // stdin, stdout, stderr at least

  constexpr std::size_t kBlock = 64 << 20;
  auto block = std::make_unique<char[]>(kBlock);
  std::memset(block.get(), 1, kBlock);  // resident, not just reserved
  const std::string during = scrape();
  if (kGlibcMalloc) {
    EXPECT_GE(valueOf(during, "ibfabric_heap_bytes{state=\"in_use\"}"),
              valueOf(before, "ibfabric_heap_bytes{state=\"in_use\"}") + kBlock * 0.99);
  }
  EXPECT_GE(valueOf(during, "process_resident_memory_bytes"),
            valueOf(before, "process_resident_memory_bytes") + kBlock * 0.9);
  EXPECT_GE(valueOf(during, "process_virtual_memory_bytes"),
            valueOf(during, "process_resident_memory_bytes"));
  block.reset();
  const std::string after = scrape();
  if (kGlibcMalloc) {
    EXPECT_LT(valueOf(after, "ibfabric_heap_bytes{state=\"in_use\"}"),
              valueOf(during, "ibfabric_heap_bytes{state=\"in_use\"}") - kBlock * 0.99);
  }
  EXPECT_GE(valueOf(after, "process_cpu_seconds_total"),
            valueOf(before, "process_cpu_seconds_total"));
}

}  // namespace
}  // namespace ibfabric::api
