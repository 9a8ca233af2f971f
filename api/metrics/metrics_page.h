// MetricsPage: the served /metrics, whole or one shard of it (`?shard=I&shards=N`,
// api/metrics/metrics_shard.h). The state collectors (collectors.h) render off the request path:
// a background thread renders every variant (whole page, or one shard) scraped in the last
// `keepFor`, straight into gzip (api/metrics/gzip_rendering.h: no uncompressed copy of the page
// ever exists), as soon as a new ServiceState is published or an event is appended. Only the
// compressed rendering is kept, one per variant; a variant not scraped for `keepFor` is dropped
// with its rendering, and at most `maxShardVariants` shard variants are kept (the whole page is
// always served).
//
// Scrapes never wait for a render: a scrape gets the variant's latest finished rendering, even
// while a newer one is being made. The only scrape that renders is the first of a variant that
// has no rendering at all (the whole page at start-up, before the thread's first rendering; a
// shard the first time it is asked for, or after it was dropped): it renders that variant on its
// own thread, and concurrent first scrapes of the same variant share that rendering. No lock is
// held while rendering: scrapes of other variants go on.
//
// The live collectors (placement, pool), the page's own size and the status of every collector
// (ibfabric_collector_success / _duration_seconds) render per scrape, after the state families
// (MetricsBody, metrics_body.h: a gzip scrape gets the stored members and its tail as one more
// member; a plain-text scrape inflates the stored members on the fly).
//
// Owned by RestServer. Thread-safe: latest(), body() and the accessors from any thread; the
// constructor starts the thread, the destructor (or stop()) joins it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "api/metrics/collector.h"
#include "api/metrics/metrics_body.h"
#include "api/service/fabric_service.h"
#include "telemetry/clock.h"

namespace ibfabric::api {

/// How many renderings a MetricsPage keeps, and for how long.
struct MetricsPageLimits {
  /// Shard variants kept at once; a scrape of one more is refused (the whole page always works).
  std::size_t maxShardVariants = 64;
  /// A variant not scraped for this long is no longer re-rendered, and is dropped.
  std::chrono::milliseconds keepFor = std::chrono::minutes(5);
  /// How often the thread looks for a new state.
  std::chrono::milliseconds poll = std::chrono::milliseconds(100);
  /// The time source of keepFor (the steady clock when null); must outlive the page.
  const mad::Clock* clock = nullptr;
};

class MetricsPage {
 public:
  /// The daemon's state collectors (stateCollectors()) and `live`.
  MetricsPage(FabricService& service, MetricsOptions options, std::vector<CollectorPtr> live);
  MetricsPage(FabricService& service, MetricsOptions options, std::vector<CollectorPtr> state,
              std::vector<CollectorPtr> live,
              std::chrono::milliseconds poll = std::chrono::milliseconds(100));
  MetricsPage(FabricService& service, MetricsOptions options, std::vector<CollectorPtr> state,
              std::vector<CollectorPtr> live, MetricsPageLimits limits);
  ~MetricsPage();
  MetricsPage(const MetricsPage&) = delete;
  MetricsPage& operator=(const MetricsPage&) = delete;

  /// The newest rendering of `shard` (rendered here when the variant has none yet); null, with
  /// `error` saying why, when `shard` would be one shard variant more than the limit.
  RenderedMetricsPtr latest(MetricsShard shard, std::string& error);
  /// The newest rendering of the whole page (never null).
  RenderedMetricsPtr latest();
  /// The body to send for `shard`: gzip when `acceptGzip`, else plain text; nullopt with `error`
  /// when the variant is refused (latest()).
  std::optional<MetricsBody> body(bool acceptGzip, MetricsShard shard, std::string& error);
  /// The whole page.
  MetricsBody body(bool acceptGzip);

  /// Compressed bytes of the renderings the page keeps (older ones a scrape still sends are not
  /// counted).
  std::size_t heldBytes() const;
  /// Variants with a rendering.
  std::size_t renderings() const;
  void stop();

 private:
  using Key = std::pair<unsigned, unsigned>;  // (count, index)
  struct Variant {
    MetricsShard shard;
    RenderedMetricsPtr latest;  // null until rendered
    mad::Clock::time_point lastScrape;
    bool rendering = false;  // a rendering of it is under way
  };

  static Key keyOf(MetricsShard shard);
  mad::Clock::time_point now() const { return clock_->now(); }
  RenderedMetricsPtr render(const ServiceStatePtr& state, std::uint64_t eventId,
                            MetricsShard shard) const;
  /// Stores `r` as the variant's latest (mu_ held); logs the page's holdings.
  void store(const Key& key, RenderedMetricsPtr r);
  std::size_t heldBytesLocked() const;
  /// The live collectors' families, the page's size and every collector's status, for one scrape.
  std::string renderTail(const RenderedMetrics& rendering) const;
  MetricsBody makeBody(RenderedMetricsPtr rendering, bool acceptGzip) const;
  /// Drops variants not scraped for keepFor; the stale ones still scraped, to render (mu_ held).
  std::vector<Key> dueForRendering(const ServiceStatePtr& state, std::uint64_t eventId);
  void loop();

  FabricService& service_;
  const MetricsOptions options_;
  const std::vector<CollectorPtr> state_;
  const std::vector<CollectorPtr> live_;
  const MetricsPageLimits limits_;
  const mad::SteadyClock steady_;
  const mad::Clock* const clock_;
  mutable std::mutex mu_;             // guards variants_ and stopping_; never held while rendering
  std::condition_variable cv_;        // the thread's wake-up
  std::condition_variable rendered_;  // a first rendering of a variant is done
  std::map<Key, Variant> variants_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ibfabric::api
