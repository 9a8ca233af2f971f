// MetricsPage: the served /metrics, whole. The state collectors (collectors.h) render off the
// request path: a background thread renders them, text and gzip, as soon as a new ServiceState
// is published or an event is appended (only a scrape before any rendering renders on the spot).
// The live collectors (placement, pool) and the status of every collector
// (ibfabric_collector_success / _duration_seconds) render per scrape, after the state families.
// body() gives the exact bytes to send: the cached state text and the scrape's tail, or, for a
// gzip scrape, the pre-compressed state member followed by the tail as a second gzip member
// (RFC 1952 allows concatenated members).
//
// Owned by RestServer. Thread-safe: latest() and body() from any thread; the constructor starts
// the thread, the destructor (or stop()) joins it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/metrics/collector.h"
#include "api/service/fabric_service.h"

namespace ibfabric::api {

struct RenderedMetrics {
  std::string text;  ///< the state collectors' families
  std::string gzip;  ///< text, gzip-compressed (empty when compression failed)
  std::vector<CollectorResult> collectors;
  std::vector<CollectorResult> fabricReads;
  std::weak_ptr<const ServiceState> state;
  std::uint64_t lastEventId = 0;
  double renderSeconds = 0;  ///< text
  double gzipSeconds = 0;
};
using RenderedMetricsPtr = std::shared_ptr<const RenderedMetrics>;

/// One scrape's response body: a cached head and a tail rendered for this scrape.
class MetricsBody {
 public:
  MetricsBody(RenderedMetricsPtr rendering, bool gzip, std::string tail);
  /// Content-Encoding gzip.
  bool gzip() const { return gzip_; }
  std::size_t size() const { return head_.size() + tail_.size(); }
  /// Up to `max` bytes from `offset` (< size()), without a copy.
  std::string_view chunk(std::size_t offset, std::size_t max) const;

 private:
  RenderedMetricsPtr rendering_;  // owns head_
  bool gzip_;
  std::string_view head_;
  std::string tail_;
};

class MetricsPage {
 public:
  /// The daemon's state collectors (stateCollectors()) and `live`.
  MetricsPage(FabricService& service, MetricsOptions options, std::vector<CollectorPtr> live);
  MetricsPage(FabricService& service, MetricsOptions options, std::vector<CollectorPtr> state,
              std::vector<CollectorPtr> live,
              std::chrono::milliseconds poll = std::chrono::milliseconds(100));
  ~MetricsPage();
  MetricsPage(const MetricsPage&) = delete;
  MetricsPage& operator=(const MetricsPage&) = delete;

  /// The newest rendering of the state collectors (never null).
  RenderedMetricsPtr latest();
  /// The page to send: gzip when `acceptGzip` and compression works, else plain text.
  MetricsBody body(bool acceptGzip);
  void stop();

 private:
  /// `sizeHint`: the previous rendering's size (0 for none).
  RenderedMetricsPtr render(const ServiceStatePtr& state, std::uint64_t eventId,
                            std::size_t sizeHint) const;
  /// The live collectors' families and every collector's status, for one scrape.
  std::string renderTail(const RenderedMetrics& rendering) const;
  void loop();

  FabricService& service_;
  const MetricsOptions options_;
  const std::vector<CollectorPtr> state_;
  const std::vector<CollectorPtr> live_;
  const std::chrono::milliseconds poll_;
  std::mutex mu_;  // guards latest_ and stopping_
  std::condition_variable cv_;
  RenderedMetricsPtr latest_;
  bool stopping_ = false;
  std::mutex renderMu_;  // one rendering at a time
  std::thread thread_;
};

}  // namespace ibfabric::api
