#include "api/metrics/metrics_cache.h"

#include <spdlog/spdlog.h>
#include <zlib.h>

#include "api/metrics/metrics.h"

namespace ibfabric::api {

std::string gzipCompress(std::string_view data, int level) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out;
  out.resize(deflateBound(&z, static_cast<uLong>(data.size())) + 64);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  // Inputs above 4 GiB do not occur here (avail_in is 32-bit): /metrics is far below.
  const int rc = deflate(&z, Z_FINISH);
  const auto written = out.size() - z.avail_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return {};
  out.resize(written);
  return out;
}

MetricsCache::MetricsCache(FabricService& service, MetricsOptions options,
                           std::chrono::milliseconds poll)
    : service_(service), options_(options), poll_(poll) {
  thread_ = std::thread([this] { loop(); });
}

MetricsCache::~MetricsCache() { stop(); }

void MetricsCache::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

RenderedMetricsPtr MetricsCache::render(const ServiceStatePtr& state, std::uint64_t eventId) const {
  using Clock = std::chrono::steady_clock;
  auto r = std::make_shared<RenderedMetrics>();
  const auto t0 = Clock::now();
  r->text = renderMetrics(*state, service_.events(), options_);
  const auto t1 = Clock::now();
  r->gzip = gzipCompress(r->text);
  const auto t2 = Clock::now();
  r->state = state;
  r->lastEventId = eventId;
  r->renderSeconds = std::chrono::duration<double>(t1 - t0).count();
  r->gzipSeconds = std::chrono::duration<double>(t2 - t1).count();
  return r;
}

RenderedMetricsPtr MetricsCache::latest() {
  {
    std::lock_guard lock(mu_);
    if (latest_) return latest_;
  }
  // Nothing rendered yet: render now (once; concurrent first scrapes share it).
  std::lock_guard renderLock(renderMu_);
  {
    std::lock_guard lock(mu_);
    if (latest_) return latest_;
  }
  const std::uint64_t eventId = service_.events().lastId();
  auto r = render(service_.state(), eventId);
  std::lock_guard lock(mu_);
  if (!latest_) latest_ = r;
  return latest_;
}

void MetricsCache::loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, poll_, [&] { return stopping_; });
    if (stopping_) break;
    auto state = service_.state();
    const std::uint64_t eventId = service_.events().lastId();
    if (latest_ && latest_->state.lock() == state && latest_->lastEventId == eventId) continue;
    lock.unlock();
    RenderedMetricsPtr r;
    {
      std::lock_guard renderLock(renderMu_);
      r = render(state, eventId);
    }
    spdlog::debug("metrics rendered: {} bytes in {:.3f} s, gzip {} bytes in {:.3f} s",
                  r->text.size(), r->renderSeconds, r->gzip.size(), r->gzipSeconds);
    lock.lock();
    latest_ = std::move(r);
  }
}

}  // namespace ibfabric::api
