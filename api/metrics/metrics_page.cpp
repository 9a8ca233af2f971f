#include "api/metrics/metrics_page.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "api/metrics/collectors.h"
#include "api/metrics/gzip.h"
#include "api/metrics/metrics.h"
#include "telemetry/heap_tuning.h"
#include "telemetry/thread_priority.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kPageBytes{
    "ibfabric_metrics_page_bytes",
    "Bytes of the renderings of the state families this page keeps (one per whole or sharded "
    "variant scraped recently), by encoding: only gzip is kept",
    "gauge"};
constexpr MetricFamily kPageRenderings{
    "ibfabric_metrics_page_renderings",
    "Renderings this page keeps: the whole page and each shard=I&shards=N scraped recently",
    "gauge"};

}  // namespace

MetricsPage::MetricsPage(FabricService& service, MetricsOptions options,
                         std::vector<CollectorPtr> live)
    : MetricsPage(service, options, stateCollectors(), std::move(live)) {}

MetricsPage::MetricsPage(FabricService& service, MetricsOptions options,
                         std::vector<CollectorPtr> state, std::vector<CollectorPtr> live,
                         std::chrono::milliseconds poll)
    : MetricsPage(service, options, std::move(state), std::move(live),
                  MetricsPageLimits{.poll = poll}) {}

MetricsPage::MetricsPage(FabricService& service, MetricsOptions options,
                         std::vector<CollectorPtr> state, std::vector<CollectorPtr> live,
                         MetricsPageLimits limits)
    : service_(service),
      options_(options),
      state_(std::move(state)),
      live_(std::move(live)),
      limits_(limits),
      clock_(limits.clock ? limits.clock : &steady_) {
  // The whole page counts as scraped now: rendered from the start, as before any shard is asked.
  variants_[keyOf({})] = Variant{MetricsShard{}, nullptr, now(), false};
  thread_ = std::thread([this] { loop(); });
}

MetricsPage::~MetricsPage() { stop(); }

void MetricsPage::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

MetricsPage::Key MetricsPage::keyOf(MetricsShard shard) {
  return shard.whole() ? Key{1, 0} : Key{shard.count, shard.index};
}

RenderedMetricsPtr MetricsPage::render(const ServiceStatePtr& state, std::uint64_t eventId,
                                       MetricsShard shard) const {
  using Clock = std::chrono::steady_clock;
  auto r = std::make_shared<RenderedMetrics>();
  const auto t0 = Clock::now();
  const CollectContext context{*state, service_.events(), options_, shard};
  r->page = renderGzip(state_, context);
  r->fabricReads = fabricReadResults(*state);
  r->shard = shard;
  r->state = state;
  r->lastEventId = eventId;
  r->renderSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

std::size_t MetricsPage::heldBytesLocked() const {
  std::size_t bytes = 0;
  for (const auto& [key, v] : variants_)
    if (v.latest) bytes += v.latest->page.bytes;
  return bytes;
}

std::size_t MetricsPage::heldBytes() const {
  std::lock_guard lock(mu_);
  return heldBytesLocked();
}

std::size_t MetricsPage::renderings() const {
  std::lock_guard lock(mu_);
  return static_cast<std::size_t>(std::count_if(variants_.begin(), variants_.end(),
                                                [](const auto& kv) { return kv.second.latest; }));
}

void MetricsPage::store(const Key& key, RenderedMetricsPtr r) {
  auto it = variants_.find(key);
  if (it == variants_.end()) return;  // dropped meanwhile (not scraped for keepFor)
  spdlog::debug(
      "metrics rendered (shard {}/{}): text {} bytes, gzip {} bytes in {} chunks, {:.3f} s, "
      "scratch {} bytes; the page keeps {} gzip bytes",
      r->shard.index, r->shard.count, r->page.textBytes, r->page.bytes, r->page.chunks.size(),
      r->renderSeconds, r->page.scratchBytes,
      heldBytesLocked() - (it->second.latest ? it->second.latest->page.bytes : 0) + r->page.bytes);
  it->second.latest = std::move(r);
}

RenderedMetricsPtr MetricsPage::latest(MetricsShard shard, std::string& error) {
  const Key key = keyOf(shard);
  std::unique_lock lock(mu_);
  auto it = variants_.find(key);
  if (it == variants_.end()) {
    const auto shards = static_cast<std::size_t>(std::count_if(
        variants_.begin(), variants_.end(), [](const auto& kv) { return kv.first.first > 1; }));
    if (key.first > 1 && shards >= limits_.maxShardVariants) {
      error = "too many shard variants of /metrics scraped in the last " +
              std::to_string(limits_.keepFor.count() / 1000) + " s (at most " +
              std::to_string(limits_.maxShardVariants) + ")";
      return nullptr;
    }
    it = variants_.emplace(key, Variant{shard, nullptr, now(), false}).first;
  }
  it->second.lastScrape = now();
  if (it->second.latest) return it->second.latest;
  // No rendering of this variant yet: its first scrape renders it; concurrent ones share that.
  // Looked up again after the wait: the renderer may have dropped the variant meanwhile.
  rendered_.wait(lock, [&] {
    auto f = variants_.find(key);
    return f == variants_.end() || f->second.latest || !f->second.rendering;
  });
  it = variants_.find(key);
  if (it == variants_.end())
    it = variants_.emplace(key, Variant{shard, nullptr, now(), false}).first;
  Variant& v = it->second;  // never erased while it is rendering
  if (v.latest) return v.latest;
  v.rendering = true;
  const ServiceStatePtr state = service_.state();
  const std::uint64_t eventId = service_.events().lastId();
  lock.unlock();
  RenderedMetricsPtr r;
  try {
    r = render(state, eventId, shard);
  } catch (...) {
    lock.lock();
    v.rendering = false;
    rendered_.notify_all();
    throw;
  }
  lock.lock();
  v.rendering = false;
  if (!v.latest) store(key, r);
  rendered_.notify_all();
  return v.latest;
}

RenderedMetricsPtr MetricsPage::latest() {
  std::string error;
  return latest(MetricsShard{}, error);  // the whole page is never refused
}

std::string MetricsPage::renderTail(const RenderedMetrics& rendering) const {
  std::string tail;
  const auto state = service_.state();  // the live collectors read their services, not this
  const CollectContext context{*state, service_.events(), options_, rendering.shard};
  std::vector<CollectorResult> results = rendering.page.collectors;
  for (auto& r : runCollectors(live_, context, tail)) results.push_back(std::move(r));
  MetricWriter out(tail);
  std::size_t held = 0, kept = 0;
  {
    std::lock_guard lock(mu_);
    held = heldBytesLocked();
    for (const auto& [key, v] : variants_) kept += v.latest ? 1 : 0;
  }
  out.family(kPageBytes);
  out.sampleU(kPageBytes.name, Labels("encoding", "gzip"), held);
  out.family(kPageRenderings);
  out.sampleU(kPageRenderings.name, "", kept);
  writeCollectorStatus(out, rendering.fabricReads, results);
  return tail;
}

MetricsBody MetricsPage::makeBody(RenderedMetricsPtr m, bool acceptGzip) const {
  std::string tail = renderTail(*m);
  if (acceptGzip) {
    std::string gz = gzipCompress(tail);
    if (!gz.empty()) return MetricsBody(std::move(m), true, std::move(gz));
  }
  return MetricsBody(std::move(m), false, std::move(tail));
}

std::optional<MetricsBody> MetricsPage::body(bool acceptGzip, MetricsShard shard,
                                             std::string& error) {
  auto m = latest(shard, error);
  if (!m) return std::nullopt;
  return makeBody(std::move(m), acceptGzip);
}

MetricsBody MetricsPage::body(bool acceptGzip) { return makeBody(latest(), acceptGzip); }

std::vector<MetricsPage::Key> MetricsPage::dueForRendering(const ServiceStatePtr& state,
                                                           std::uint64_t eventId) {
  const auto t = now();
  std::vector<Key> due;
  for (auto it = variants_.begin(); it != variants_.end();) {
    Variant& v = it->second;
    if (!v.rendering && t - v.lastScrape > limits_.keepFor) {
      spdlog::debug("metrics: shard {}/{} not scraped for {} s: its rendering is dropped",
                    v.shard.index, v.shard.count, limits_.keepFor.count() / 1000);
      it = variants_.erase(it);
      continue;
    }
    const bool current =
        v.latest && v.latest->state.lock() == state && v.latest->lastEventId == eventId;
    if (!v.rendering && !current) due.push_back(it->first);
    ++it;
  }
  return due;
}

void MetricsPage::loop() {
  telemetry::lowerThisThreadPriority();  // scrapes are served the last page; requests go first
  std::unique_lock lock(mu_);
  auto lastTrim = std::chrono::steady_clock::time_point{};
  while (!stopping_) {
    cv_.wait_for(lock, limits_.poll, [&] { return stopping_; });
    if (stopping_) break;
    const ServiceStatePtr state = service_.state();
    const std::uint64_t eventId = service_.events().lastId();
    bool renderedAny = false;
    for (const Key& key : dueForRendering(state, eventId)) {
      auto it = variants_.find(key);
      if (stopping_ || it == variants_.end() || it->second.rendering) continue;
      it->second.rendering = true;
      const MetricsShard shard = it->second.shard;
      lock.unlock();
      RenderedMetricsPtr r;
      try {
        r = render(state, eventId, shard);
      } catch (const std::exception& e) {
        // Scrapes keep the last rendering; the next change (or poll) tries again.
        spdlog::error("metrics: rendering failed, serving the last page: {}", e.what());
      }
      lock.lock();
      it = variants_.find(key);
      if (it == variants_.end()) continue;
      it->second.rendering = false;
      renderedAny = renderedAny || r != nullptr;
      if (r) store(key, std::move(r));
      rendered_.notify_all();
    }
    // The renderings' working buffers and the pages they replaced; at most every few seconds
    // (an event storm re-renders at every poll).
    if (renderedAny && std::chrono::steady_clock::now() - lastTrim >= std::chrono::seconds(5)) {
      lastTrim = std::chrono::steady_clock::now();
      lock.unlock();
      telemetry::releaseFreeHeap();
      lock.lock();
    }
  }
}

}  // namespace ibfabric::api
