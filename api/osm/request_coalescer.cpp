// RequestCoalescer: leading run, coalescing within `quiet`, trailing run, a run every `maxWait`
// in a long burst; one summary line per burst.
#include "api/osm/request_coalescer.h"

#include <spdlog/spdlog.h>

#include <vector>

namespace ibfabric::api {
namespace {

double seconds(RequestCoalescer::Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

RequestCoalescer::RequestCoalescer(Options options) : options_(std::move(options)) {}

RequestCoalescer::~RequestCoalescer() { stop(); }

void RequestCoalescer::offer(const std::string& key, Work work) {
  const auto now = options_.now();
  {
    std::lock_guard lock(mu_);
    ++counts_.events;
    auto it = active_.find(key);
    if (it != active_.end() && now - it->second.lastEvent < options_.quiet) {
      Burst& b = it->second;
      if (++b.events == 2) ++counts_.bursts;
      b.lastEvent = now;
      b.pending = std::move(work);
      return;
    }
    // Quiet (or a burst the timer has not ended yet: its trailing run is this one).
    if (it != active_.end()) active_.erase(it);
    active_[key] = Burst{now, now, now, 1, 1, {}};
    ++counts_.runs;
  }
  cv_.notify_all();  // a new deadline
  work();
}

std::optional<RequestCoalescer::Clock::time_point> RequestCoalescer::tick() {
  const auto now = options_.now();
  std::vector<Work> due;
  std::vector<std::string> ended;
  std::optional<Clock::time_point> next;
  {
    std::lock_guard lock(mu_);
    for (auto it = active_.begin(); it != active_.end();) {
      Burst& b = it->second;
      const bool over = now - b.lastEvent >= options_.quiet;
      if (b.pending && (over || now - b.lastRun >= options_.maxWait)) {
        due.push_back(std::move(b.pending));
        b.pending = nullptr;
        b.lastRun = now;
        ++b.runs;
        ++counts_.runs;
      }
      if (over) {
        if (b.events > 1)
          ended.push_back(it->first + ": " + std::to_string(b.events) + " events in " +
                          fmt::format("{:.1f}", seconds(b.lastEvent - b.start)) + " s, run " +
                          std::to_string(b.runs) + " times");
        it = active_.erase(it);
        continue;
      }
      auto at = b.lastEvent + options_.quiet;
      if (b.pending) at = std::min(at, b.lastRun + options_.maxWait);
      if (!next || at < *next) next = at;
      ++it;
    }
  }
  for (const auto& line : ended) spdlog::info("events coalesced: {}", line);
  for (auto& w : due) w();
  return next;
}

CoalescingCounts RequestCoalescer::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

void RequestCoalescer::start() {
  {
    std::lock_guard lock(mu_);
    stop_ = false;
  }
  thread_ = std::thread([this] { loop(); });
}

void RequestCoalescer::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RequestCoalescer::loop() {
  CoalescingCounts published;
  std::optional<Clock::time_point> next;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      // The deadlines are on options_.now()'s clock, the steady clock in the daemon.
      if (next)
        cv_.wait_until(lock, *next, [this] { return stop_; });
      else
        cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_ || !active_.empty(); });
      if (stop_) return;
    }
    next = tick();
    const CoalescingCounts now = counts();
    if (!(now == published) && options_.onCounts) options_.onCounts(now);
    published = now;
  }
}

}  // namespace ibfabric::api
