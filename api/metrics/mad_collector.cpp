// The sweep collector: the last counter sweep and the MAD engine that ran it, every engine
// counter and where its policy stands (windows, round-trip times, retry budget, breakers;
// telemetry/mad_policy/flow_control.h).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>

#include "api/metrics/collectors.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kSweepDuration{"ibfabric_sweep_duration_seconds",
                                      "Duration of the last successful counter sweep", "gauge"};
constexpr MetricFamily kLastSweep{"ibfabric_last_sweep_timestamp_seconds",
                                  "When the last successful counter sweep finished (Unix time)",
                                  "gauge"};
constexpr MetricFamily kSweepPorts{
    "ibfabric_sweep_ports",
    "Ports of the last counter sweep by status (ok, timeout, unsupported, unreachable, gone)",
    "gauge"};
constexpr MetricFamily kSweepStale{
    "ibfabric_sweep_ports_stale",
    "Ports the last sweep could not read that an earlier sweep did: shown with their last good "
    "reading",
    "gauge"};

// Counters, in the order they are written.
constexpr MetricFamily kSent{"ibfabric_mad_sent_total",
                             "MADs sent by the sweep engine (attempts, retries included)",
                             "counter"};
constexpr MetricFamily kTimeouts{
    "ibfabric_mad_timeouts_total",
    "MAD attempts that went unanswered: the engine's timer expired or the transport reported the "
    "MAD lost (ibfabric_mad_lost_reported_total)",
    "counter"};
constexpr MetricFamily kLost{"ibfabric_mad_lost_reported_total",
                             "MAD attempts the transport returned as lost (e.g. umad status 110)",
                             "counter"};
constexpr MetricFamily kRetries{"ibfabric_mad_retries_total", "MAD re-sends", "counter"};
constexpr MetricFamily kRefused{"ibfabric_mad_retries_refused_total",
                                "MAD re-sends the retry budget refused (the request failed)",
                                "counter"};
constexpr MetricFamily kSendErrors{"ibfabric_mad_send_errors_total",
                                   "MAD sends the transport refused (the attempt then times out)",
                                   "counter"};
constexpr MetricFamily kReceived{"ibfabric_mad_received_total",
                                 "MAD replies that completed a request", "counter"};
constexpr MetricFamily kDuplicates{"ibfabric_mad_duplicates_total",
                                   "MAD replies for a request already answered", "counter"};
constexpr MetricFamily kLate{"ibfabric_mad_late_replies_total",
                             "MAD replies for a request that had already failed", "counter"};
constexpr MetricFamily kSpurious{
    "ibfabric_mad_spurious_timeouts_total",
    "MAD timeouts an answer proved premature (a reply to an earlier attempt after a re-send, or "
    "to a request that had failed)",
    "counter"};
constexpr MetricFamily kCutsUndone{"ibfabric_mad_window_cuts_undone_total",
                                   "MAD window cuts undone because their timeout was spurious",
                                   "counter"};
constexpr MetricFamily kUnmatched{"ibfabric_mad_unmatched_total",
                                  "MAD replies with an unknown transaction id", "counter"};
constexpr MetricFamily kRequests{
    "ibfabric_mad_requests_total",
    "MAD requests by outcome: ok, timeout (every attempt unanswered), target_down (not sent: "
    "circuit breaker open), aborted (batch deadline or shutdown)",
    "counter"};
constexpr MetricFamily kWatchdog{"ibfabric_mad_batch_watchdog_fired_total",
                                 "MAD batches whose deadline expired with requests open",
                                 "counter"};
constexpr MetricFamily kTransportErrors{"ibfabric_mad_transport_errors_total",
                                        "Receive errors of the MAD transport", "counter"};
constexpr MetricFamily kDecreases{"ibfabric_mad_window_decreases_total",
                                  "Cuts of the MAD window on timeouts, by scope (overall, target)",
                                  "counter"};
constexpr MetricFamily kBreakerOpens{"ibfabric_mad_breaker_opens_total",
                                     "Times a LID's circuit breaker opened (it stopped answering)",
                                     "counter"};
constexpr MetricFamily kProbes{"ibfabric_mad_breaker_probes_total",
                               "Probes sent to LIDs with an open circuit breaker", "counter"};

// Gauges.
constexpr MetricFamily kPolicy{"ibfabric_mad_policy_info",
                               "The MAD engine's policy (mad.policy: adaptive or fixed)", "gauge"};
constexpr MetricFamily kWindow{"ibfabric_mad_window",
                               "MAD requests allowed in flight now, all targets together", "gauge"};
constexpr MetricFamily kWindowMax{"ibfabric_mad_window_max", "The bound of ibfabric_mad_window",
                                  "gauge"};
constexpr MetricFamily kInFlightMax{"ibfabric_mad_in_flight_max",
                                    "The most MAD requests that were in flight at once", "gauge"};
constexpr MetricFamily kReduced{
    "ibfabric_mad_targets_window_reduced",
    "LIDs whose per-target MAD window is below its maximum (they timed out lately)", "gauge"};
constexpr MetricFamily kSrtt{"ibfabric_mad_rtt_smoothed_seconds",
                             "Smoothed round-trip time of MADs answered on their first attempt",
                             "gauge"};
constexpr MetricFamily kRttvar{"ibfabric_mad_rtt_deviation_seconds",
                               "Mean deviation of the MAD round-trip time (RFC 6298 RTTVAR)",
                               "gauge"};
constexpr MetricFamily kRto{"ibfabric_mad_timeout_seconds",
                            "MAD timeout a LID without samples starts with (RFC 6298 RTO)",
                            "gauge"};
constexpr MetricFamily kRtoMax{"ibfabric_mad_target_timeout_max_seconds",
                               "The longest per-LID MAD timeout now (backed off after timeouts)",
                               "gauge"};
constexpr MetricFamily kTokens{"ibfabric_mad_retry_tokens",
                               "Re-sends the MAD retry budget allows now", "gauge"};
constexpr MetricFamily kOpen{"ibfabric_mad_breaker_open_targets",
                             "LIDs whose circuit breaker is open: one probe per sweep", "gauge"};

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

void writeCounter(MetricWriter& out, const MetricFamily& f, std::uint64_t value) {
  out.family(f);
  out.sampleU(f.name, "", value);
}

void writeGauge(MetricWriter& out, const MetricFamily& f, double value) {
  out.family(f);
  out.sample(f.name, "", value);
}

void writeCounters(const mad::MadEngineStats& e, MetricWriter& out) {
  writeCounter(out, kSent, e.sent);
  writeCounter(out, kTimeouts, e.timeouts + e.lostReported);
  writeCounter(out, kLost, e.lostReported);
  writeCounter(out, kRetries, e.retries);
  writeCounter(out, kRefused, e.retriesRefused);
  writeCounter(out, kSendErrors, e.sendErrors);
  writeCounter(out, kReceived, e.received);
  writeCounter(out, kDuplicates, e.duplicates);
  writeCounter(out, kLate, e.lateReplies);
  writeCounter(out, kSpurious, e.spuriousTimeouts);
  writeCounter(out, kCutsUndone, e.windowCutsUndone);
  writeCounter(out, kUnmatched, e.unmatched);
  out.family(kRequests);
  out.sampleU(kRequests.name, Labels("outcome", "ok"), e.completedOk);
  out.sampleU(kRequests.name, Labels("outcome", "timeout"), e.failed);
  out.sampleU(kRequests.name, Labels("outcome", "target_down"), e.targetDown);
  out.sampleU(kRequests.name, Labels("outcome", "aborted"), e.aborted);
  writeCounter(out, kWatchdog, e.watchdogFired);
  writeCounter(out, kTransportErrors, e.transportErrors);
  out.family(kDecreases);
  out.sampleU(kDecreases.name, Labels("scope", "overall"), e.windowDecreases);
  out.sampleU(kDecreases.name, Labels("scope", "target"), e.targetWindowDecreases);
  writeCounter(out, kBreakerOpens, e.breakerOpens);
  writeCounter(out, kProbes, e.probes);
}

void writeGauges(const mad::MadEngineStats& e, MetricWriter& out) {
  out.family(kPolicy);
  out.sampleU(kPolicy.name, Labels("policy", mad::toString(e.policy)), 1);
  writeGauge(out, kWindow, e.window);
  writeGauge(out, kWindowMax, e.windowMax);
  writeGauge(out, kInFlightMax, static_cast<double>(e.maxInFlight));
  std::uint64_t reduced = 0;
  std::chrono::nanoseconds rtoMax = e.rto;
  for (const auto& [lid, t] : e.targets) {
    if (t.window > 0 && t.window < e.targetWindowMax) ++reduced;
    rtoMax = std::max(rtoMax, t.rto);
  }
  writeGauge(out, kReduced, static_cast<double>(reduced));
  writeGauge(out, kSrtt, seconds(e.srtt));
  writeGauge(out, kRttvar, seconds(e.rttvar));
  writeGauge(out, kRto, seconds(e.rto));
  writeGauge(out, kRtoMax, seconds(rtoMax));
  writeGauge(out, kTokens, e.retryTokens);
  writeGauge(out, kOpen, static_cast<double>(e.openBreakers));
}

void writeSweepPorts(const telemetry::CounterSnapshot& snap, MetricWriter& out) {
  using telemetry::PortStatus;
  constexpr std::array kStatuses = {PortStatus::kOk, PortStatus::kTimeout, PortStatus::kUnsupported,
                                    PortStatus::kUnreachable, PortStatus::kGone};
  std::array<std::uint64_t, kStatuses.size()> counts{};
  for (const auto& p : snap.ports) ++counts[static_cast<std::size_t>(p.status)];
  out.family(kSweepPorts);
  for (PortStatus st : kStatuses)
    out.sampleU(kSweepPorts.name, Labels("status", telemetry::toString(st)),
                counts[static_cast<std::size_t>(st)]);
  writeGauge(out, kSweepStale, static_cast<double>(snap.stats.portsStale));
}

class MadCollector final : public Collector {
 public:
  std::string_view name() const override { return "mad"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    const ServiceState& s = c.state;
    if (s.sweep.lastSuccess) {
      out.family(kSweepDuration);
      out.sample(kSweepDuration.name, "",
                 std::chrono::duration<double>(s.sweep.lastDuration).count());
      out.family(kLastSweep);
      out.sample(kLastSweep.name, "",
                 std::chrono::duration<double>(s.sweep.lastSuccess->time_since_epoch()).count());
    }
    if (s.counters) writeSweepPorts(*s.counters, out);
    if (!s.engine) return;
    writeCounters(*s.engine, out);
    writeGauges(*s.engine, out);
  }
};

}  // namespace

CollectorPtr madCollector() { return std::make_unique<MadCollector>(); }

}  // namespace ibfabric::api
