#include "telemetry/event_log.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <utility>

namespace ibfabric::telemetry {
namespace {

// One per type, in enum order (a type without a name here gets "", which the tests catch).
constexpr std::array<std::string_view, kEventTypeCount> kNames = {
    "link_down",
    "link_up",
    "link_degraded",
    "link_recovered",
    "flapping",
    "error_threshold",
    "congestion_high",
    "congestion_cleared",
    "counter_reset",
    "port_unreachable",
    "port_gone",
    "counters_cleared",
    "node_missing",
    "node_returned",
    "pool_allocation_degraded",
    "unreachable_traffic",
    "hardware_forgotten",
    "link_active",
    "job_congested",
};

EventEnd endOf(const LinkEnd& e) { return EventEnd{e.node.guid, e.node.description, e.port}; }

LinkActivity activityOf(const LinkSnapshot& l) {
  if (l.missing) return LinkActivity::kDown;
  return linkActivity(l.a.state, l.a.physState, l.b.state, l.b.physState);
}

/// The event of a cable's activity change (none when it did not change): link_up when it is
/// physically linked again (saying so when not yet Active), link_active when a linked cable
/// becomes Active, link_down when it loses its physical link or its ports leave Active.
void appendActivityChange(EventLog& log, const LinkSnapshot& at, LinkActivity was, LinkActivity is,
                          std::string what) {
  if (was == is) return;
  EventType type = EventType::kLinkDown;
  if (is == LinkActivity::kDown) {
    type = EventType::kLinkDown;
  } else if (was == LinkActivity::kDown) {
    type = EventType::kLinkUp;
    if (is == LinkActivity::kInit)
      what +=
          " — physically linked, not yet Active: no traffic until the subnet manager "
          "activates it (link_active)";
  } else if (is == LinkActivity::kActive) {
    type = EventType::kLinkActive;
  } else {
    what += " — the ports left Active: no traffic until the subnet manager activates them again";
  }
  log.append(type, endOf(at.a), endOf(at.b), std::move(what));
}

}  // namespace

std::string_view toString(EventType t) { return kNames[static_cast<std::size_t>(t)]; }

std::optional<EventType> parseEventType(std::string_view text) {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == text) return static_cast<EventType>(i);
  return std::nullopt;
}

EventLog::EventLog(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {}

std::uint64_t EventLog::append(EventType type, EventEnd end, std::optional<EventEnd> remote,
                               std::string message) {
  std::uint64_t id;
  {
    std::lock_guard lock(mu_);
    Event e;
    e.id = id = nextId_++;
    e.type = type;
    e.time = std::chrono::system_clock::now();
    e.steadyTime = std::chrono::steady_clock::now();
    e.end = std::move(end);
    e.remote = std::move(remote);
    e.message = std::move(message);
    events_.push_back(std::move(e));
    while (events_.size() > capacity_) {
      events_.pop_front();
      ++dropped_;
    }
  }
  cv_.notify_all();
  return id;
}

void EventLog::restore(std::vector<Event> events, std::uint64_t lastId) {
  {
    std::lock_guard lock(mu_);
    if (nextId_ != 1) throw std::logic_error("EventLog::restore: events were appended already");
    if (events.size() > capacity_)
      events.erase(events.begin(), events.end() - static_cast<std::ptrdiff_t>(capacity_));
    const auto wallNow = std::chrono::system_clock::now();
    const auto steadyNow = std::chrono::steady_clock::now();
    std::uint64_t last = lastId;
    for (Event& e : events) {
      if (!events_.empty() && e.id <= events_.back().id)
        throw std::invalid_argument("EventLog::restore: event ids must increase");
      // The steady clock does not survive a restart: place the event as far back as its age.
      e.steadyTime = steadyNow - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     wallNow - e.time);
      last = std::max(last, e.id);
      events_.push_back(std::move(e));
    }
    nextId_ = last + 1;
  }
  cv_.notify_all();
}

std::vector<Event> EventLog::query(const EventQuery& q) const {
  std::lock_guard lock(mu_);
  std::vector<Event> out;
  // Ids increase along the deque (restored ones may have gaps): find the first after sinceId.
  const auto first = std::upper_bound(events_.begin(), events_.end(), q.sinceId,
                                      [](std::uint64_t id, const Event& e) { return id < e.id; });
  for (auto it = first; it != events_.end() && out.size() < q.limit; ++it) {
    const Event& e = *it;
    if (!q.types.empty() && !q.types.count(e.type)) continue;
    out.push_back(e);
  }
  return out;
}

bool EventLog::waitForNewer(std::uint64_t afterId, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return nextId_ - 1 > afterId; });
}

std::uint64_t EventLog::lastId() const {
  std::lock_guard lock(mu_);
  return nextId_ - 1;
}

std::uint64_t EventLog::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

std::size_t EventLog::size() const {
  std::lock_guard lock(mu_);
  return events_.size();
}

void appendTopologyEvents(EventLog& log, const TopologyDelta& delta) {
  delta.forEachLinkChange(
      [&](const LinkAdded& c) {
        appendActivityChange(log, c.link, LinkActivity::kDown, activityOf(c.link), describe(c));
      },
      [&](const LinkRemoved& c) {
        log.append(EventType::kLinkDown, endOf(c.link.a), endOf(c.link.b), describe(c));
      },
      [&](const LinkChanged& c) {
        if (!c.stateChanged && c.before.missing == c.after.missing) return;
        appendActivityChange(log, c.after, activityOf(c.before), activityOf(c.after), describe(c));
      });
}

TopologyDelta followTopology(CounterSweeper& sweeper, EventLog& log, TopologyPtr next) {
  TopologyPtr before = sweeper.topology();
  if (!before) {
    sweeper.setTopology(next);
    return TopologyDelta(next, next);
  }
  TopologyDelta delta(std::move(before), next);
  appendTopologyEvents(log, delta);
  sweeper.setTopology(std::move(next));
  return delta;
}

namespace {
constexpr std::size_t kUnreachableEventsPerSweep = 64;
}  // namespace

void HealthEventTracker::observeSweep(const CounterSnapshot& snapshot, const RatesTable& rates,
                                      EventLog& log) {
  // A sweep that loses the plane (MAD loss, an SM rerouting a large fabric) would write one
  // event per port — tens of thousands, overrunning the log and the store: the first
  // kUnreachableEventsPerSweep get their own event, the rest one event together.
  std::size_t newlyUnreachable = 0;
  std::optional<std::pair<EventEnd, std::optional<EventEnd>>> firstUntold;
  for (const PortSample& s : snapshot.ports) {
    EventEnd end{s.key.node, s.nodeDescription, s.key.port};
    std::optional<EventEnd> remote;
    if (s.remote) remote = EventEnd{s.remote->node, s.remoteDescription, s.remote->port};
    if (s.status == PortStatus::kGone) {
      unreachable_.erase(s.key);
      log.append(EventType::kPortGone, end, remote, "port no longer linked: not polled any more");
      continue;
    }
    if (s.status == PortStatus::kOk) {
      unreachable_.erase(s.key);
    } else if (unreachable_.insert(s.key).second) {
      if (++newlyUnreachable <= kUnreachableEventsPerSweep)
        log.append(EventType::kPortUnreachable, end, remote,
                   std::string(toString(s.status)) + ": " + s.detail);
      else if (!firstUntold)
        firstUntold = std::make_pair(end, remote);
    }
  }
  if (firstUntold) {
    const std::size_t untold = newlyUnreachable - kUnreachableEventsPerSweep;
    log.append(EventType::kPortUnreachable, firstUntold->first, firstUntold->second,
               std::to_string(untold) +
                   " more ports stopped answering in this sweep, this one "
                   "first (one event for them all; each port's status is in /api/v1/ports)");
  }
  for (const PortRates& r : rates) {
    auto resets = r.resets();
    if (resets.empty()) continue;
    const PortSample* s = snapshot.find(r.key);
    std::string names;
    for (Counter c : resets) names += (names.empty() ? "" : ", ") + std::string(ibName(c));
    std::optional<EventEnd> remote;
    if (s && s->remote) remote = EventEnd{s->remote->node, s->remoteDescription, s->remote->port};
    log.append(EventType::kCounterReset, {r.key.node, s ? s->nodeDescription : "", r.key.port},
               remote, "counter went backwards (cleared by someone else): " + names);
  }
}

void HealthEventTracker::observeHealth(const std::vector<LinkHealthReport>& reports,
                                       EventLog& log) {
  std::set<std::pair<PortKey, std::string>> now;
  for (const LinkHealthReport& r : reports) {
    const auto linkKey = std::make_pair(r.a, r.b);
    EventEnd a{r.a.node, r.aDescription, r.a.port};
    EventEnd b{r.b.node, r.bDescription, r.b.port};
    auto endFor = [&](PortKey k) { return k == r.a ? std::pair{a, b} : std::pair{b, a}; };

    LinkState before = LinkState::kOk;
    if (auto it = linkState_.find(linkKey); it != linkState_.end()) before = it->second;
    linkState_[linkKey] = r.state;
    if (r.state == LinkState::kDegraded && before != LinkState::kDegraded) {
      std::string why = r.reasons.empty() ? "" : r.reasons.front().text;
      log.append(EventType::kLinkDegraded, a, b, why);
    } else if (r.state == LinkState::kOk && before != LinkState::kOk &&
               before != LinkState::kDown) {
      log.append(EventType::kLinkRecovered, a, b, "link healthy again");
    }

    for (const HealthReason& reason : r.reasons) {
      if (reason.code != "flapping" && reason.code != "errors" &&
          reason.code != kUnreachableTrafficReason)
        continue;
      // One event per (port, counter) while it stays over the threshold.
      std::string tag = reason.code + ":" + reason.text.substr(0, reason.text.find(' '));
      auto key = std::make_pair(reason.port, tag);
      now.insert(key);
      if (active_.count(key)) continue;
      auto [e, rem] = endFor(reason.port);
      const EventType type = reason.code == "flapping" ? EventType::kFlapping
                             : reason.code == kUnreachableTrafficReason
                                 ? EventType::kUnreachableTraffic
                                 : EventType::kErrorThreshold;
      log.append(type, e, rem, reason.text);
    }

    const bool high = std::any_of(r.reasons.begin(), r.reasons.end(),
                                  [](const HealthReason& x) { return x.code == "congestion"; });
    if (high && congested_.insert(linkKey).second) {
      std::string why;
      for (const auto& x : r.reasons)
        if (x.code == "congestion") why = x.text;
      log.append(EventType::kCongestionHigh, a, b, why);
    } else if (!high && congested_.count(linkKey) &&
               r.congestion.value_or(0.0) < congestionClear_) {
      congested_.erase(linkKey);
      char buf[64];
      std::snprintf(buf, sizeof buf, "congestion %.1f%%", r.congestion.value_or(0.0) * 100);
      log.append(EventType::kCongestionCleared, a, b, buf);
    }
  }
  active_ = std::move(now);
}

}  // namespace ibfabric::telemetry
