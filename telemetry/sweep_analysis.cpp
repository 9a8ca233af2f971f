// SweepAnalyzer: rates, history, link health and events from one sweep.
#include "telemetry/sweep_analysis.h"

#include <algorithm>
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
  if (previous_) out.rates = computeRates(*previous_, snap, options_.rates, restart);
  history_.add(snap, restart);
  tracker_.observeSweep(snap, out.rates, events);

  const HealthThresholds& t = options_.thresholds;
  for (const auto& p : snap.ports)
    if (p.status != PortStatus::kGone) out.judged.push_back(p.key);  // gone: history dropped
  if (snap.topology) {
    PortWindow window;  // one at a time: evaluateLinkHealth reads it before the next lookup
    out.health = evaluateLinkHealth(
        *snap.topology,
        [&](PortKey k) -> const PortWindow* {
          if (!std::binary_search(out.judged.begin(), out.judged.end(), k)) return nullptr;
          auto w = history_.window(k, t.errorWindow, t.flapWindow);
          window = w ? std::move(*w) : PortWindow{};
          window.key = k;
          return &window;
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
