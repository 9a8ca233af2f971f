// MetricsCache: /metrics rendered off the request path. A background thread renders the
// exposition text (and its gzip form) as soon as a new ServiceState is published or an event is
// appended; scrapes serve the last rendering without waiting (only the very first scrape, before
// any rendering exists, renders on the spot).
//
// Owned by RestServer. Thread-safe: latest() from any thread; the constructor starts the thread,
// the destructor (or stop()) joins it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "api/metrics/metrics_text.h"
#include "api/service/fabric_service.h"

namespace ibfabric::api {

struct RenderedMetrics {
  std::string text;
  std::string gzip;  ///< text, gzip-compressed (empty when compression failed)
  std::weak_ptr<const ServiceState> state;
  std::uint64_t lastEventId = 0;
  double renderSeconds = 0;  ///< text
  double gzipSeconds = 0;
};
using RenderedMetricsPtr = std::shared_ptr<const RenderedMetrics>;

/// gzip (RFC 1952) of `data` at zlib level `level`; empty on failure.
std::string gzipCompress(std::string_view data, int level = 1);

class MetricsCache {
 public:
  MetricsCache(FabricService& service, MetricsOptions options,
               std::chrono::milliseconds poll = std::chrono::milliseconds(100));
  ~MetricsCache();
  MetricsCache(const MetricsCache&) = delete;
  MetricsCache& operator=(const MetricsCache&) = delete;

  /// The newest rendering (never null).
  RenderedMetricsPtr latest();
  void stop();

 private:
  RenderedMetricsPtr render(const ServiceStatePtr& state, std::uint64_t eventId) const;
  void loop();

  FabricService& service_;
  const MetricsOptions options_;
  const std::chrono::milliseconds poll_;
  std::mutex mu_;  // guards latest_ and stopping_
  std::condition_variable cv_;
  RenderedMetricsPtr latest_;
  bool stopping_ = false;
  std::mutex renderMu_;  // one rendering at a time
  std::thread thread_;
};

}  // namespace ibfabric::api
