// Link health from counters: ok / degraded / faulty / down per link, with reasons.
//
//   down      an end's port is not Active in the topology, or the port is gone;
//   faulty    flapping (LinkDowned rose by >= flapCount within flapWindow), or a link-integrity
//             error counter (symbol, link error recovery, link downed, receive errors, local
//             link integrity, excessive buffer overrun) over its threshold;
//   degraded  running below the rate both ends enable / ends disagree / not active (discovery's
//             checkLinkHealth findings), another error counter over its threshold (remote
//             physical, transmit discards, constraint errors, VL15 dropped), or congestion over
//             its threshold.
// Routing symptoms (switch relay errors; discards where the link is down) over their threshold
// are reasons of their own ("unreachable-traffic") that change no state: a poller or a job that
// sends to a vanished LID makes the entry port count them, and that cable is not at fault.
// Thresholds are rates (errors per hour), derived from ibqueryerrors' suggested counts; see
// docs/telemetry.md. Each end's counters are judged over a window of its history.
//
// Pure functions over values; thread-safe.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "discovery/topology.h"
#include "telemetry/counter_sweep.h"
#include "telemetry/port_rates.h"

namespace ibfabric::telemetry {

enum class LinkState : std::uint8_t { kOk, kDegraded, kFaulty, kDown };
std::string_view toString(LinkState s);  // "ok", "degraded", "faulty", "down"

struct HealthThresholds {
  /// Errors per hour above which an error counter trips; 0 = not checked. Indexed by Counter.
  std::array<double, kCounterCount> errorsPerHour{};
  /// LinkDowned increments within flapWindow that make a link flap.
  std::uint64_t flapCount = 2;
  std::chrono::seconds flapWindow{600};
  /// Congestion ratio (latest interval) at or above which a link is congested.
  double congestionHigh = 0.10;
  /// Window of history used for error rates.
  std::chrono::seconds errorWindow{300};

  static HealthThresholds defaults();
};

/// True for the counters whose threshold crossing makes a link faulty rather than degraded.
bool isIntegrityCounter(Counter c);
/// True for the counters that count traffic to an unreachable destination where it was
/// dropped (PortRcvSwitchRelayErrors; PortXmitDiscards at a port whose link is down): over
/// their threshold they give the reason kUnreachableTrafficReason, which leaves the link's
/// state alone (the cable is fine; something sends to a LID that is gone).
bool isRoutingSymptom(Counter c, bool linkDown);
/// The reason code of a routing symptom over its threshold.
inline constexpr const char* kUnreachableTrafficReason = "unreachable-traffic";

/// One port's counters summarized over a window of its history.
struct PortWindow {
  PortKey key;
  double seconds = 0.0;  ///< Time covered by usable intervals.
  /// Summed kOk deltas per counter; nullopt when no interval of the window had a usable delta.
  std::array<std::optional<std::uint64_t>, kCounterCount> deltas{};
  std::uint64_t linkDownedInFlapWindow = 0;
  std::optional<double> congestion;  ///< Latest interval.
  std::size_t resets = 0;            ///< Intervals with a counter reset.
  std::optional<double> perHour(Counter c) const;
};

/// Summarizes `samples` (oldest first, one port) over the last `window` (error rates) and
/// `flapWindow` (LinkDowned increments), ending at the newest sample.
PortWindow summarize(const std::vector<PortSample>& samples, std::chrono::nanoseconds window,
                     std::chrono::nanoseconds flapWindow, const RateOptions& rates = {});

struct HealthReason {
  std::string code;  ///< "down", "below-enabled", "flapping", "errors", "congestion", ...
  PortKey port;      ///< The end it is about.
  std::string text;
};

struct LinkHealthReport {
  std::uint32_t link = 0;  ///< Index into Topology::links().
  PortKey a;
  PortKey b;
  std::string aDescription;
  std::string bDescription;
  LinkState state = LinkState::kOk;
  std::vector<HealthReason> reasons;
  std::optional<double> congestion;  ///< Worst end.
};

/// Judges every link of `topology`. `windowOf(key)` returns the summary of one port, or nullptr
/// when there is none (then only discovery's findings count for that end); the pointer need only
/// stay valid until the next call (the caller may summarize each window on demand).
std::vector<LinkHealthReport> evaluateLinkHealth(
    const Topology& topology, const std::function<const PortWindow*(PortKey)>& windowOf,
    const HealthThresholds& thresholds = HealthThresholds::defaults());

}  // namespace ibfabric::telemetry
