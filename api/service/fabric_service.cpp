#include "api/service/fabric_service.h"

#include "api/service/link_load_fold.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <limits>
#include <map>
#include <utility>

#include "api/service/route_breaks.h"
#include "api/service/routing_state.h"
#include "api/service/sweep_suspects.h"
#include "discovery/topology_delta.h"
#include "telemetry/heap_tuning.h"

namespace ibfabric::api {
namespace {

using Clock = std::chrono::steady_clock;
using SysClock = std::chrono::system_clock;

}  // namespace

struct FabricService::ClearJob {
  telemetry::PortKey key;
  std::promise<ClearCountersResult> done;
};

FabricService::FabricService(TopologySourcePtr topologySource, CounterSourceFactory counterSources,
                             FabricServiceOptions options)
    : topologySource_(std::move(topologySource)),
      counterSources_(std::move(counterSources)),
      options_(std::move(options)),
      events_(options_.eventCapacity),
      history_(options_.historyDepth, options_.rates),
      crawlChecker_(options_.crawlCheck) {
  auto initial = std::make_shared<ServiceState>();
  initial->started = SysClock::now();
  if (options_.waitForSubnet) {
    initial->subnet.waiting = true;
    initial->subnet.reason = "local port not read yet";
  }
  initial->ha.mode = options_.haMode;
  initial->ha.since = initial->started;
  initial->subnetId.name = options_.subnetName;
  if (options_.haMode != HaMode::kAlways) {  // standby until decided: never two sweepers
    initial->ha.role = HaRole::kStandby;
    initial->ha.reason = "role not decided yet";
    standby_ = true;
  }
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

void FabricService::setStoreStatus(const StoreStatus& store) {
  publish([&](ServiceState& s) { s.store = store; });
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
  Clock::duration took{};
  TopologyPtr topology;
  std::string error;
  try {
    topology = discoverTimed(took);
  } catch (const std::exception& e) {
    error = e.what();
  }
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

  bool suspect = false;
  std::string suspectReason;
  std::size_t removed = 0;
  topology = checkCrawl(state()->topology, std::move(topology), suspect, suspectReason, removed);
  std::lock_guard editLock(topologyEditMu_);
  TopologyPtr before = state()->topology;
  if (suspect) {
    publish([&](ServiceState& s) {
      s.crawlCheck.suspect = true;
      s.crawlCheck.reason = suspectReason;
      s.crawlCheck.suspectTotal++;
      s.crawlCheck.removalsKept += removed;
      s.crawlCheck.lastSuspect = SysClock::now();
    });
  } else if (state()->crawlCheck.suspect) {
    publish([&](ServiceState& s) { s.crawlCheck.suspect = false; });
  }
  if (before && topology == before) {  // a suspect crawl, nothing confirmed removed
    publish([&](ServiceState& s) {
      s.crawl.succeeded(attempt, std::chrono::duration_cast<std::chrono::nanoseconds>(took));
      s.crawl.inProgressSince.reset();
    });
    return true;
  }
  const TopologyPtr previous = before ? before : remembered_;
  const TopologyPtr crawled = topology;  // what answered: the expected topology's comparison
  topology = remember(before, std::move(topology), attempt);
  if (previous) {
    TopologyDelta delta(previous, topology);
    if (!delta.empty()) {
      spdlog::info("topology changed: {} change(s)", delta.size());
      for (const auto& line : delta.describeAll()) spdlog::debug("  {}", line);
    }
    telemetry::appendTopologyEvents(events_, delta);
  }
  TopologyComparisonPtr comparison;
  if (options_.expected) {
    comparison = compareWithExpected(*options_.expected, *crawled);
    appendPresenceEvents(events_, state()->comparison.get(), *comparison);
  }
  spdlog::debug("crawl: {} switches, {} CAs, {} links in {:.3f} s", topology->switchCount(),
                topology->caCount(), topology->links().size(),
                std::chrono::duration<double>(took).count());
  publish([&](ServiceState& s) {
    s.topology = topology;
    if (comparison) s.comparison = comparison;
    s.crawl.succeeded(attempt, std::chrono::duration_cast<std::chrono::nanoseconds>(took));
    s.crawl.inProgressSince.reset();
  });
  {
    std::lock_guard lock(mu_);
    latestTopology_ = topology;
    ++crawlGeneration_;
  }
  cv_.notify_all();
  return true;
}

TopologyPtr FabricService::discoverTimed(Clock::duration& took) {
  const auto t0 = Clock::now();
  TopologyPtr t = topologySource_->discover();
  took = Clock::now() - t0;
  return t;
}

TopologyPtr FabricService::checkCrawl(const TopologyPtr& before, TopologyPtr crawled, bool& suspect,
                                      std::string& reason, std::size_t& removed) {
  if (!before || !options_.crawlCheck.enabled) return crawled;
  CrawlVerdict v = judgeCrawl(*before, *crawled, options_.crawlCheck);
  if (!v.plausible && !stopping_) {
    spdlog::warn("crawl implausible, crawling again: {}", v.reason);
    publish([](ServiceState& s) { s.crawlCheck.retries++; });
    try {
      Clock::duration took{};
      TopologyPtr again = discoverTimed(took);
      CrawlVerdict v2 = judgeCrawl(*before, *again, options_.crawlCheck);
      crawled = std::move(again);
      v = std::move(v2);
    } catch (const std::exception& e) {
      spdlog::warn("crawl retry failed: {}", e.what());
    }
  }
  if (v.plausible) {
    crawlChecker_.believed();
    return crawled;
  }
  suspect = true;
  reason = v.reason;
  auto kept = crawlChecker_.keep(before, *crawled);
  removed = kept.cablesRemoved;
  spdlog::warn("suspect crawl: keeping the last believed topology{}: {}",
               removed ? " less " + std::to_string(removed) + " confirmed cable removal(s)" : "",
               reason);
  return kept.topology;
}

void FabricService::discoveryLoop() {
  std::unique_lock lock(mu_);
  // Nothing is crawled before the subnet is usable (the sweep thread watches the local port).
  cv_.wait(lock, [&] { return stopping_ || subnetReady_ || !options_.waitForSubnet; });
  while (!stopping_) {
    crawlRequested_ = false;
    lock.unlock();
    const bool ok = crawlOnce();
    telemetry::releaseFreeHeap();  // the crawl's text and the replaced topology
    const auto st = state();
    lock.lock();
    // A standby crawls rarely: a warm snapshot, not a live view. The delay follows the role
    // while waiting: a daemon made standby in the middle of an active interval crawls at the
    // standby interval from then on (setRole wakes this wait).
    const auto ended = Clock::now();
    const auto delay = [&] {
      const auto interval = standby_ ? options_.standbyCrawlInterval : options_.crawlInterval;
      return ok ? interval : backoff(st->crawl.consecutiveFailures, interval);
    };
    const auto first = delay();
    lock.unlock();
    publish([&](ServiceState& s) { s.crawl.nextAttempt = SysClock::now() + first; });
    lock.lock();
    while (!stopping_ && !crawlRequested_) {
      const auto next = ended + delay();
      if (Clock::now() >= next) break;
      cv_.wait_until(lock, next);
    }
  }
}

// ---- sweeps ----

ClearCountersResult FabricService::clearCounters(telemetry::PortKey key,
                                                 std::chrono::milliseconds timeout) {
  using Status = ClearCountersResult::Status;
  if (!state()->counters) return {Status::kNotReady, false, "no counter sweep has completed yet"};
  auto job = std::make_shared<ClearJob>();
  job->key = key;
  auto done = job->done.get_future();
  {
    std::lock_guard lock(mu_);
    if (stopping_) return {Status::kNotReady, false, "the service is stopping"};
    if (standby_) return {Status::kNotReady, false, "this daemon is standby: ask the active one"};
    clearJobs_.push_back(job);
  }
  cv_.notify_all();
  if (done.wait_for(timeout) != std::future_status::ready) {
    return {Status::kTimeout, false,
            "the sweep thread did not answer within " + std::to_string(timeout.count()) + " ms"};
  }
  return done.get();
}

void FabricService::runClear(ClearJob& job, CounterSource* source, const TopologyPtr& swept) {
  using Status = ClearCountersResult::Status;
  ClearCountersResult result;
  const Node* node = swept ? swept->findNode(job.key.node) : nullptr;
  const Port* port = node ? node->port(job.key.port) : nullptr;
  if (!source) {
    result = {Status::kNotReady, false, "no counter source (the last sweeps failed)"};
  } else if (!port || !port->remote) {
    result = {Status::kUnknownPort, false,
              "no linked port " + std::to_string(job.key.port.value()) + " on " +
                  toString(job.key.node) + " in the swept topology"};
  } else {
    const Lid lid = node->isSwitch() ? node->lid() : port->lid;
    try {
      result = source->clearCounters(job.key, lid);
    } catch (const std::exception& e) {
      result = {Status::kTimeout, false, e.what()};
    }
  }
  if (result.status == Status::kOk) {
    rebaseline_.insert(job.key);
    const Node& remote = swept->node(port->remote->node);
    events_.append(
        telemetry::EventType::kCountersCleared, {node->guid, node->description, job.key.port},
        telemetry::EventEnd{remote.guid, remote.description, port->remote->port},
        result.extended ? "PortCounters and PortCountersExtended cleared" : "PortCounters cleared");
    publish([](ServiceState&) {});  // counts the event
    spdlog::info("cleared the counters of {} port {}", node->description, job.key.port.value());
  } else {
    spdlog::warn("clearing the counters of {} port {} failed: {}", toString(job.key.node),
                 job.key.port.value(), result.message);
  }
  job.done.set_value(std::move(result));
}

void FabricService::refuseClearJobs(const std::string& why) {
  for (auto& job : std::exchange(clearJobs_, {}))
    job->done.set_value({ClearCountersResult::Status::kNotReady, false, why});
}

bool FabricService::sweepOnce(TopologyPtr& sweptTopology, CounterSourcePtr& source,
                              telemetry::SweepAnalyzer& analyzer) {
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
    std::string error;
    if (!createSource(source, error)) return fail(error);
    sweptTopology.reset();
    if (const auto& previous = analyzer.previous()) source->continueAfter(*previous);
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
    spdlog::warn("sweep: re-creating the counter source ({}) at the next attempt",
                 source->describe());
    dropSource(source);  // re-created (umad reopened) on a later attempt
    return fail(e.what());
  }
  const auto took = Clock::now() - t0;
  if (!snap) return fail("sweep returned nothing");
  // Nothing answered: no port read, or (no port to read yet) every request failed.
  if ((snap->stats.ports > 0 && snap->stats.portsOk == 0) ||
      (snap->stats.ports == 0 && snap->stats.requests > 0 &&
       snap->stats.failedRequests == snap->stats.requests)) {
    // A transport that answers nothing any more (the simulator or the driver restarted) does
    // not come back by itself: after a few such sweeps, reopen it.
    if (state()->sweep.consecutiveFailures + 1 >= options_.recreateSourceAfter) {
      spdlog::warn("sweep: {} consecutive failures, re-creating the counter source ({})",
                   state()->sweep.consecutiveFailures + 1, source->describe());
      dropSource(source);
    }
    return fail("no port answered (" + std::to_string(snap->stats.ports) + " polled, " +
                std::to_string(snap->stats.failedRequests) + " requests failed)");
  }

  // Rates, history, health and events (telemetry/sweep_analysis.h); ports cleared since the
  // previous sweep start over: no rate (and no reset) this time.
  std::shared_ptr<const telemetry::RatesTable> rates;
  std::shared_ptr<std::vector<telemetry::LinkHealthReport>> health;
  {
    telemetry::SweepAnalysis found = analyzer.analyze(snap, events_, rebaseline_);
    rebaseline_.clear();
    rates = std::make_shared<const telemetry::RatesTable>(std::move(found.rates));
    health = std::make_shared<std::vector<telemetry::LinkHealthReport>>(std::move(found.health));
  }

  // Only this thread writes linkLoad, so the previous model can be read outside the lock.
  auto linkLoad = foldSweepIntoLinkLoad(*snap, *rates, *health, state()->linkLoad.get());
  // What the sweep saw change (a port gone silent, LinkDowned up, a missing cable to re-check):
  // those switches' PortInfo is read right after it (api/service/sweep_suspects.h).
  std::set<Lid> suspects;
  if (options_.sweepProbes && sweptTopology) {
    const auto before = state();
    suspects = sweepSuspects(*sweptTopology, before->counters.get(), *snap, *rates);
    // Lost destinations: where their routes break (api/service/route_breaks.h).
    if (before->forwarding && before->subnet.localLid != 0) {
      const auto lost = lostLids(before->counters.get(), *snap);
      const auto probes = routeBreakProbes(*before->forwarding, Lid(before->subnet.localLid), lost);
      suspects.merge(probeRouteBreaks(*source, *sweptTopology, probes));
    }
  }
  sourceFailures_ = 0;  // the source works: a later failure starts the backoff over
  auto engine = source->engineStats();
  std::string sourceName = source->describe();
  publish([&](ServiceState& s) {
    s.counters = snap;
    s.rates = rates;
    s.health = health;
    s.linkLoad = linkLoad;
    s.engine = engine;
    s.sweepSource = sourceName;
    s.sweep.succeeded(attempt, std::chrono::duration_cast<std::chrono::nanoseconds>(took));
  });
  // The suspects are probed now; every probe asked for later (a trap's, a switch whose port is
  // still coming up) runs between the slices of the table read below and of the next sweep
  // (createSource's hook): after an SM's routing pass that read is long, and a cable that came
  // back must not wait for it.
  for (const Lid lid : suspects) requestPortProbe(lid, true);
  runAskedProbes(source.get());
  // Forwarding tables ride on the same MAD engine (api/service/routing_state.h); never fails the
  // sweep.
  const auto before = state();
  // After the SM reported a routing pass (requestRouteRefresh) the tables are read in full.
  const bool forceRead = routeRefreshRequested_.exchange(false);
  auto routes = updateRoutes(*source, sweptTopology, forceRead ? nullptr : before->forwarding,
                             forceRead ? nullptr : before->routeAnalysis);
  if (routes.attempted) publish([&](ServiceState& s) { applyRoutesUpdate(s, routes); });
  return true;
}

bool FabricService::createSource(CounterSourcePtr& source, std::string& error) {
  if (Clock::now() < nextSourceAt_) {
    error = "counter source re-created too recently; next attempt in " +
            std::to_string(
                std::chrono::duration_cast<std::chrono::milliseconds>(nextSourceAt_ - Clock::now())
                    .count()) +
            " ms";
    return false;
  }
  publish([](ServiceState& s) {
    if (s.counterSourceStarts++ > 0) s.counterSourceRestarts++;
  });
  try {
    source = counterSources_();
  } catch (const std::exception& e) {
    error = e.what();
    CounterSourcePtr none;
    dropSource(none);
    return false;
  }
  spdlog::info("counter source: {}", source->describe());
  source->setBetweenSlices([this, s = source.get()] { runAskedProbes(s); });
  return true;
}

void FabricService::runAskedProbes(CounterSource* source) {
  std::set<Lid> lids;
  {
    std::lock_guard lock(mu_);
    const auto now = Clock::now();
    if (!pendingUp_.empty() && now >= nextPendingProbe_) {
      probeRequests_.merge(pendingUp_);
      pendingUp_.clear();
    }
    if (probeRequests_.empty()) return;
    lids = std::exchange(probeRequests_, {});
    nextPendingProbe_ = now + pendingEvery_;
  }
  if (!stopping_) probeSwitches(lids, source);
}

void FabricService::dropSource(CounterSourcePtr& source) {
  source.reset();  // closes its umad port; a MAD proxy child is reaped here
  auto delay = options_.retryBase;
  for (std::uint64_t i = 0; i < sourceFailures_ && delay < options_.sourceRestartCap; ++i)
    delay *= 2;
  delay = std::min(delay, options_.sourceRestartCap);
  ++sourceFailures_;
  nextSourceAt_ = Clock::now() + delay;
}

std::string FabricService::subnetBlocker(CounterSourcePtr& source, bool& cannotTell) {
  std::string error;
  if (!source && !createSource(source, error)) return error;
  if (!source->readsLocalPort()) {
    cannotTell = true;
    return "";
  }
  std::optional<mad::PortInfo> info;
  try {
    info = source->localPortInfo();
  } catch (const std::exception& e) {
    dropSource(source);
    return e.what();
  }
  if (!info) return "the local port does not answer";
  publish([&](ServiceState& s) {
    s.subnet.localLid = info->lid;
    s.subnet.smLid = info->masterSmLid;
    s.subnet.portState = std::string(toString(static_cast<PortState>(info->portState)));
    s.subnet.gidPrefix = info->gidPrefix;
    if (info->gidPrefix) s.subnetId.gidPrefix = info->gidPrefix;
  });
  if (info->portState != static_cast<std::uint8_t>(PortState::kActive))
    return "port state " + std::string(toString(static_cast<PortState>(info->portState)));
  if (info->lid == 0) return "no LID";
  if (info->masterSmLid == 0) return "no SM LID";
  return "";
}

void FabricService::waitForSubnet(CounterSourcePtr& source) {
  std::string last;
  while (!stopping_) {
    bool cannotTell = false;
    const std::string why = subnetBlocker(source, cannotTell);
    if (why.empty()) break;
    if (why != last) spdlog::info("waiting for the subnet: {}", why);
    last = why;
    publish([&](ServiceState& s) {
      s.subnet.waiting = true;
      s.subnet.reason = why;
    });
    auto until = Clock::now() + options_.subnetPoll;
    if (!source) until = std::max(until, nextSourceAt_);
    std::unique_lock lock(mu_);
    cv_.wait_until(lock, until, [&] { return stopping_.load(); });
  }
  if (stopping_) return;
  spdlog::info("subnet ready{}", last.empty() ? "" : " (waited: " + last + ")");
  publish([](ServiceState& s) {
    s.subnet.waiting = false;
    s.subnet.reason.clear();
    s.subnet.readySince = SysClock::now();
  });
}

void FabricService::sweepLoop() {
  CounterSourcePtr source;
  TopologyPtr sweptTopology;
  telemetry::SweepAnalyzer analyzer(history_, {options_.thresholds, options_.rates});
  if (options_.waitForSubnet) waitForSubnet(source);
  {
    std::lock_guard lock(mu_);
    subnetReady_ = true;
  }
  cv_.notify_all();
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return stopping_ || latestTopology_ != nullptr; });
  // Clear-counters requests wait in clearJobs_; they are run here, between sweeps.
  auto runClears = [&] {
    auto jobs = std::move(clearJobs_);
    clearJobs_.clear();
    lock.unlock();
    for (auto& job : jobs) runClear(*job, source.get(), sweptTopology);
    lock.lock();
  };
  while (!stopping_) {
    if (standby_) {  // no sweeps, probes or table reads: the local port only
      standbyWait(source, lock);
      continue;
    }
    const auto generation = crawlGeneration_;
    lock.unlock();
    const auto started = Clock::now();
    refreshLocalPort(source);  // the SM may have moved (follow_sm); the subnet's identity
    const bool ok = sweepOnce(sweptTopology, source, analyzer);
    telemetry::releaseFreeHeap();  // the sweep's requests, results and the replaced state
    const auto st = state();
    lock.lock();
    const auto interval = options_.sweepInterval;
    const auto delay = ok ? interval : backoff(st->sweep.consecutiveFailures, interval);
    auto next = (ok ? started : Clock::now()) + delay;
    if (!source) next = std::max(next, nextSourceAt_);  // the source's own backoff
    lock.unlock();
    publish(
        [&](ServiceState& s) { s.sweep.nextAttempt = SysClock::now() + (next - Clock::now()); });
    lock.lock();
    // A crawled topology is swept at once: its ports (and those that left) are news.
    for (;;) {
      // Switches with ports still coming up or silent are probed again soon (pendingEvery_).
      const auto until = pendingUp_.empty() ? next : std::min(next, nextPendingProbe_);
      cv_.wait_until(lock, until, [&] {
        return stopping_ || standby_ || crawlGeneration_ != generation || !clearJobs_.empty() ||
               !probeRequests_.empty() || (ok && routeRefreshRequested_);
      });
      if (standby_) break;
      if (stopping_) break;
      if (!clearJobs_.empty()) runClears();
      lock.unlock();
      runAskedProbes(source.get());
      lock.lock();
      if (stopping_ || crawlGeneration_ != generation || Clock::now() >= next ||
          (ok && routeRefreshRequested_))
        break;
    }
  }
  refuseClearJobs("the service is stopping");
  lock.unlock();
  source.reset();
}

}  // namespace ibfabric::api
