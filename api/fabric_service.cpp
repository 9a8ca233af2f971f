#include "api/fabric_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "discovery/topology_delta.h"

namespace ibfabric::api {
namespace {

using Clock = std::chrono::steady_clock;
using SysClock = std::chrono::system_clock;

}  // namespace

FabricService::FabricService(TopologySourcePtr topologySource, CounterSourceFactory counterSources,
                             FabricServiceOptions options)
    : topologySource_(std::move(topologySource)),
      counterSources_(std::move(counterSources)),
      options_(std::move(options)),
      events_(options_.eventCapacity),
      history_(options_.historyDepth) {
  auto initial = std::make_shared<ServiceState>();
  initial->started = SysClock::now();
  state_ = std::move(initial);
}

FabricService::~FabricService() { stop(); }

void FabricService::start() {
  discovery_ = std::thread([this] { discoveryLoop(); });
  sweeper_ = std::thread([this] { sweepLoop(); });
}

void FabricService::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !discovery_.joinable() && !sweeper_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (cancelCrawl_) cancelCrawl_();
  if (discovery_.joinable()) discovery_.join();
  if (sweeper_.joinable()) sweeper_.join();
}

ServiceStatePtr FabricService::state() const {
  std::lock_guard lock(stateMu_);
  return state_;
}

void FabricService::requestCrawl() {
  {
    std::lock_guard lock(mu_);
    crawlRequested_ = true;
  }
  cv_.notify_all();
}

void FabricService::setIntervals(std::chrono::milliseconds crawl, std::chrono::milliseconds sweep) {
  {
    std::lock_guard lock(mu_);
    options_.crawlInterval = crawl;
    options_.sweepInterval = sweep;
  }
  cv_.notify_all();
}

template <typename Fn>
void FabricService::publish(Fn&& change) {
  std::lock_guard publishLock(publishMu_);
  auto next = std::make_shared<ServiceState>(*state());
  change(*next);
  // Count the events appended since the last publish (both threads append, both publish).
  telemetry::EventQuery q;
  q.sinceId = eventsCounted_;
  q.limit = std::numeric_limits<std::size_t>::max();
  for (const auto& e : events_.query(q)) {
    ++next->eventsByType[std::string(telemetry::toString(e.type))];
    eventsCounted_ = e.id;
  }
  std::lock_guard lock(stateMu_);
  state_ = std::move(next);
}

void FabricService::publishChange(const std::function<void(ServiceState&)>& change) {
  publish(change);
}

std::chrono::milliseconds FabricService::backoff(std::uint64_t failures,
                                                 std::chrono::milliseconds interval) const {
  auto delay = options_.retryBase;
  for (std::uint64_t i = 1; i < failures && delay < interval; ++i) delay *= 2;
  return std::min(delay, interval);
}

// ---- discovery ----

bool FabricService::crawlOnce() {
  const auto attempt = SysClock::now();
  publish([&](ServiceState& s) { s.crawl.inProgressSince = attempt; });
  const auto t0 = Clock::now();
  TopologyPtr topology;
  std::string error;
  try {
    topology = topologySource_->discover();
  } catch (const std::exception& e) {
    error = e.what();
  }
  const auto took = Clock::now() - t0;
  if (!topology) {
    if (stopping_) return false;
    spdlog::warn("crawl failed ({}): {}", topologySource_->describe(), error);
    publish([&](ServiceState& s) {
      s.crawl.failures++;
      s.crawl.consecutiveFailures++;
      s.crawl.lastAttempt = attempt;
      s.crawl.lastError = error;
      s.crawl.inProgressSince.reset();
    });
    return false;
  }

  std::lock_guard editLock(topologyEditMu_);
  TopologyPtr before = state()->topology;
  if (before) {
    TopologyDelta delta(before, topology);
    if (!delta.empty()) {
      spdlog::info("topology changed: {} change(s)", delta.size());
      for (const auto& line : delta.describeAll()) spdlog::debug("  {}", line);
    }
    telemetry::appendTopologyEvents(events_, delta);
  }
  spdlog::debug("crawl: {} switches, {} CAs, {} links in {:.3f} s", topology->switchCount(),
                topology->caCount(), topology->links().size(),
                std::chrono::duration<double>(took).count());
  publish([&](ServiceState& s) {
    s.topology = topology;
    s.crawl.runs++;
    s.crawl.consecutiveFailures = 0;
    s.crawl.lastAttempt = attempt;
    s.crawl.lastSuccess = SysClock::now();
    s.crawl.lastDuration = std::chrono::duration_cast<std::chrono::nanoseconds>(took);
    s.crawl.lastError.clear();
    s.crawl.inProgressSince.reset();
  });
  {
    std::lock_guard lock(mu_);
    latestTopology_ = topology;
    ++topologyGeneration_;
  }
  cv_.notify_all();
  return true;
}

void FabricService::discoveryLoop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    crawlRequested_ = false;
    lock.unlock();
    const bool ok = crawlOnce();
    const auto st = state();
    lock.lock();
    const auto interval = options_.crawlInterval;
    const auto delay = ok ? interval : backoff(st->crawl.consecutiveFailures, interval);
    const auto next = Clock::now() + delay;
    lock.unlock();
    publish([&](ServiceState& s) { s.crawl.nextAttempt = SysClock::now() + delay; });
    lock.lock();
    cv_.wait_until(lock, next, [&] { return stopping_ || crawlRequested_; });
  }
}

// ---- sweeps ----

bool FabricService::sweepOnce(TopologyPtr& sweptTopology, CounterSourcePtr& source,
                              telemetry::CounterSnapshotPtr& previous,
                              telemetry::HealthEventTracker& tracker) {
  const auto attempt = SysClock::now();
  auto fail = [&](const std::string& error) {
    spdlog::warn("sweep failed: {}", error);
    publish([&](ServiceState& s) {
      s.sweep.failures++;
      s.sweep.consecutiveFailures++;
      s.sweep.lastAttempt = attempt;
      s.sweep.lastError = error;
    });
    return false;
  };

  TopologyPtr topology;
  {
    std::lock_guard lock(mu_);
    topology = latestTopology_;
  }
  if (!source) {
    try {
      source = counterSources_();
      sweptTopology.reset();
      spdlog::info("counter source: {}", source->describe());
    } catch (const std::exception& e) {
      return fail(e.what());
    }
  }
  const auto t0 = Clock::now();
  telemetry::CounterSnapshotPtr snap;
  try {
    if (topology != sweptTopology) {
      source->setTopology(topology);
      sweptTopology = topology;
    }
    snap = source->sweep();
  } catch (const std::exception& e) {
    source.reset();  // re-created (umad reopened) on the next attempt
    return fail(e.what());
  }
  const auto took = Clock::now() - t0;
  if (!snap) return fail("sweep returned nothing");
  if (snap->stats.ports > 0 && snap->stats.portsOk == 0) {
    return fail("no port answered (" + std::to_string(snap->stats.ports) + " polled, " +
                std::to_string(snap->stats.failedRequests) + " requests failed)");
  }

  std::vector<telemetry::PortRates> rateList;
  if (previous) rateList = telemetry::computeRates(*previous, *snap, options_.rates);
  history_.add(*snap);
  tracker.observeSweep(*snap, rateList, events_);

  auto rates = std::make_shared<std::map<telemetry::PortKey, telemetry::PortRates>>();
  for (auto& r : rateList) rates->emplace(r.key, std::move(r));

  std::map<telemetry::PortKey, telemetry::PortWindow> windows;
  for (const auto& p : snap->ports) {
    if (p.status == telemetry::PortStatus::kGone) continue;
    windows[p.key] = telemetry::summarize(history_.samples(p.key), options_.thresholds.errorWindow,
                                          options_.thresholds.flapWindow, options_.rates);
  }
  auto health =
      std::make_shared<std::vector<telemetry::LinkHealthReport>>(telemetry::evaluateLinkHealth(
          *snap->topology,
          [&](telemetry::PortKey k) -> const telemetry::PortWindow* {
            auto it = windows.find(k);
            return it == windows.end() ? nullptr : &it->second;
          },
          options_.thresholds));
  std::erase_if(*health, [&](const telemetry::LinkHealthReport& r) {
    return !snap->find(r.a) && !snap->find(r.b);
  });
  if (previous) tracker.observeHealth(*health, events_);
  previous = snap;

  auto engine = source->engineStats();
  std::string sourceName = source->describe();
  publish([&](ServiceState& s) {
    s.counters = snap;
    s.rates = rates;
    s.health = health;
    s.engine = engine;
    s.sweepSource = sourceName;
    s.sweep.runs++;
    s.sweep.consecutiveFailures = 0;
    s.sweep.lastAttempt = attempt;
    s.sweep.lastSuccess = SysClock::now();
    s.sweep.lastDuration = std::chrono::duration_cast<std::chrono::nanoseconds>(took);
    s.sweep.lastError.clear();
  });
  return true;
}

void FabricService::sweepLoop() {
  CounterSourcePtr source;
  TopologyPtr sweptTopology;
  telemetry::CounterSnapshotPtr previous;
  telemetry::HealthEventTracker tracker;
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return stopping_ || latestTopology_ != nullptr; });
  while (!stopping_) {
    const auto generation = topologyGeneration_;
    lock.unlock();
    const auto started = Clock::now();
    const bool ok = sweepOnce(sweptTopology, source, previous, tracker);
    const auto st = state();
    lock.lock();
    const auto interval = options_.sweepInterval;
    const auto delay = ok ? interval : backoff(st->sweep.consecutiveFailures, interval);
    const auto next = (ok ? started : Clock::now()) + delay;
    lock.unlock();
    publish(
        [&](ServiceState& s) { s.sweep.nextAttempt = SysClock::now() + (next - Clock::now()); });
    lock.lock();
    // A new topology is swept at once: its ports (and those that left) are news.
    for (;;) {
      // Switches with ports still coming up or silent are probed again within 200 ms.
      const auto until =
          pendingUp_.empty() ? next : std::min(next, Clock::now() + std::chrono::milliseconds(200));
      cv_.wait_until(lock, until, [&] {
        return stopping_ || topologyGeneration_ != generation || !probeRequests_.empty();
      });
      if (probeRequests_.empty() && !pendingUp_.empty() && Clock::now() < next) {
        probeRequests_.merge(pendingUp_);
        pendingUp_.clear();
      }
      if (stopping_ || probeRequests_.empty()) break;
      const auto lids = std::exchange(probeRequests_, {});
      lock.unlock();
      probeSwitches(lids, source.get());
      lock.lock();
    }
  }
  lock.unlock();
  source.reset();
}

}  // namespace ibfabric::api
