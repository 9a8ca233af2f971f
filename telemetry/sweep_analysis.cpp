// SweepAnalyzer: rates, history, link health and events from one sweep.
#include "telemetry/sweep_analysis.h"

#include <utility>

namespace ibfabric::telemetry {

SweepAnalyzer::SweepAnalyzer(CounterHistory& history, SweepAnalysisOptions options)
    : history_(history), options_(std::move(options)) {}

void SweepAnalyzer::setBaseline(CounterSnapshotPtr baseline) {
  if (baseline) history_.add(*baseline);
  previous_ = std::move(baseline);
}

SweepAnalysis SweepAnalyzer::analyze(CounterSnapshotPtr snapshot, EventLog& events,
                                     const std::set<PortKey>& restart) {
  const CounterSnapshot& snap = *snapshot;
  SweepAnalysis out;
  out.firstSweep = previous_ == nullptr;
  if (previous_) out.rates = computeRates(*previous_, snap, options_.rates);
  std::erase_if(out.rates, [&](const PortRates& r) { return restart.count(r.key) > 0; });
  history_.add(snap, restart);
  tracker_.observeSweep(snap, out.rates, events);

  const HealthThresholds& t = options_.thresholds;
  for (const auto& p : snap.ports) {
    if (p.status == PortStatus::kGone) continue;  // no longer linked; its history is gone
    auto w = history_.window(p.key, t.errorWindow, t.flapWindow);
    PortWindow& slot = out.windows[p.key];
    if (w) slot = std::move(*w);
    slot.key = p.key;
  }
  if (snap.topology) {
    out.health = evaluateLinkHealth(
        *snap.topology,
        [&](PortKey k) -> const PortWindow* {
          auto it = out.windows.find(k);
          return it == out.windows.end() ? nullptr : &it->second;
        },
        t);
  }
  // Only links with a polled end.
  std::erase_if(out.health,
                [&](const LinkHealthReport& r) { return !snap.find(r.a) && !snap.find(r.b); });
  if (previous_) tracker_.observeHealth(out.health, events);
  previous_ = std::move(snapshot);
  return out;
}

}  // namespace ibfabric::telemetry
