#include "api/metrics/metrics_page.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "api/metrics/collectors.h"
#include "api/metrics/gzip.h"
#include "api/metrics/metrics.h"

namespace ibfabric::api {

MetricsBody::MetricsBody(RenderedMetricsPtr rendering, bool gzip, std::string tail)
    : rendering_(std::move(rendering)),
      gzip_(gzip),
      head_(gzip ? rendering_->gzip : rendering_->text),
      tail_(std::move(tail)) {}

std::string_view MetricsBody::chunk(std::size_t offset, std::size_t max) const {
  const std::string_view part = offset < head_.size() ? head_ : std::string_view(tail_);
  const std::size_t at = offset < head_.size() ? offset : offset - head_.size();
  return part.substr(at, std::min(max, part.size() - at));
}

MetricsPage::MetricsPage(FabricService& service, MetricsOptions options,
                         std::vector<CollectorPtr> live)
    : MetricsPage(service, options, stateCollectors(), std::move(live)) {}

MetricsPage::MetricsPage(FabricService& service, MetricsOptions options,
                         std::vector<CollectorPtr> state, std::vector<CollectorPtr> live,
                         std::chrono::milliseconds poll)
    : service_(service),
      options_(options),
      state_(std::move(state)),
      live_(std::move(live)),
      poll_(poll) {
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

RenderedMetricsPtr MetricsPage::render(const ServiceStatePtr& state, std::uint64_t eventId,
                                       std::size_t sizeHint) const {
  using Clock = std::chrono::steady_clock;
  auto r = std::make_shared<RenderedMetrics>();
  const auto t0 = Clock::now();
  // A little room over the last size: a fabric that grew by a few ports still fits.
  StateRendering s =
      renderState(state_, *state, service_.events(), options_, sizeHint + sizeHint / 16);
  r->text = std::move(s.text);
  r->collectors = std::move(s.collectors);
  r->fabricReads = std::move(s.fabricReads);
  const auto t1 = Clock::now();
  r->gzip = gzipCompress(r->text);
  const auto t2 = Clock::now();
  r->state = state;
  r->lastEventId = eventId;
  r->renderSeconds = std::chrono::duration<double>(t1 - t0).count();
  r->gzipSeconds = std::chrono::duration<double>(t2 - t1).count();
  return r;
}

std::string MetricsPage::renderTail(const RenderedMetrics& rendering) const {
  std::string tail;
  const auto state = service_.state();  // the live collectors read their services, not this
  const CollectContext context{*state, service_.events(), options_};
  std::vector<CollectorResult> results = rendering.collectors;
  for (auto& r : runCollectors(live_, context, tail)) results.push_back(std::move(r));
  MetricWriter out(tail);
  writeCollectorStatus(out, rendering.fabricReads, results);
  return tail;
}

MetricsBody MetricsPage::body(bool acceptGzip) {
  auto m = latest();
  std::string tail = renderTail(*m);
  if (acceptGzip && !m->gzip.empty()) {
    std::string gz = gzipCompress(tail);
    if (!gz.empty()) return MetricsBody(std::move(m), true, std::move(gz));
  }
  return MetricsBody(std::move(m), false, std::move(tail));
}

RenderedMetricsPtr MetricsPage::latest() {
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
  auto r = render(service_.state(), eventId, 0);
  std::lock_guard lock(mu_);
  if (!latest_) latest_ = r;
  return latest_;
}

void MetricsPage::loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, poll_, [&] { return stopping_; });
    if (stopping_) break;
    auto state = service_.state();
    const std::uint64_t eventId = service_.events().lastId();
    if (latest_ && latest_->state.lock() == state && latest_->lastEventId == eventId) continue;
    const std::size_t sizeHint = latest_ ? latest_->text.size() : 0;
    lock.unlock();
    RenderedMetricsPtr r;
    try {
      std::lock_guard renderLock(renderMu_);
      r = render(state, eventId, sizeHint);
    } catch (const std::exception& e) {
      // Scrapes keep the last page; the next change (or poll) tries again.
      spdlog::error("metrics: rendering failed, serving the last page: {}", e.what());
      lock.lock();
      continue;
    }
    spdlog::debug("metrics rendered: {} bytes in {:.3f} s, gzip {} bytes in {:.3f} s",
                  r->text.size(), r->renderSeconds, r->gzip.size(), r->gzipSeconds);
    lock.lock();
    latest_ = std::move(r);
  }
}

}  // namespace ibfabric::api
