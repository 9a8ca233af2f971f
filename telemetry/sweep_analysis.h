// SweepAnalyzer: what one counter sweep means against the sweeps before it — the rates since the
// previous sweep, the per-port history, link health judged over that history, and the events
// of transitions (counter resets, ports unreachable or gone, links degraded / recovered,
// flapping, error thresholds, congestion). Written once for the daemon's sweep thread
// (api/service/fabric_service.cpp) and `ibfabric counters` (tools/ibfabric/counters_command.cpp).
//
// Per sweep, in this order: rates against the previous sweep (none for the first; none for the
// ports the caller asks to re-baseline, e.g. after clearing their counters); the sweep into the
// history; sweep events (resets, unreachable, gone); one window of history per swept port —
// ports reported gone are skipped, they are no longer linked and their history is dropped; link
// health of the swept topology, keeping the links with a polled end — each end's window is
// summarized from the history when its link is judged; health events (from the second sweep
// on). Then the sweep becomes the previous one.
//
// Owner: the sweep loop (one per FabricService sweep thread, one per CLI run); the CounterHistory
// is the caller's and must outlive the analyzer. Not thread-safe: one thread calls analyze();
// the history itself may be read from other threads (CounterHistory is thread-safe).
#pragma once

#include <map>
#include <set>
#include <vector>

#include "telemetry/counter_history.h"
#include "telemetry/counter_sweep.h"
#include "telemetry/event_log.h"
#include "telemetry/link_health_eval.h"
#include "telemetry/port_rates.h"
#include "telemetry/rates_table.h"

namespace ibfabric::telemetry {

struct SweepAnalysisOptions {
  HealthThresholds thresholds = HealthThresholds::defaults();
  RateOptions rates;
};

/// What analyze() found in one sweep.
struct SweepAnalysis {
  /// No sweep before it: no rates, and health raised no events.
  bool firstSweep = true;
  /// Against the previous sweep, in the snapshot's (key) order.
  RatesTable rates;
  /// The swept ports that are not gone, in key order: health was judged on their history
  /// windows (each computed when the link is judged, not kept: ~23 MB at 10,240 HCAs).
  std::vector<PortKey> judged;
  /// Links of the swept topology with at least one end in the sweep.
  std::vector<LinkHealthReport> health;
};

class SweepAnalyzer {
 public:
  explicit SweepAnalyzer(CounterHistory& history, SweepAnalysisOptions options = {});

  /// Takes `baseline` as the sweep before the next one (e.g. read from a file): into the
  /// history, and the next rates are computed against it.
  void setBaseline(CounterSnapshotPtr baseline);
  /// Analyzes `snapshot`, appending its events to `events`. `restart`: ports whose counters were
  /// cleared since the previous sweep — they get no rate (and no reset event) this time.
  SweepAnalysis analyze(CounterSnapshotPtr snapshot, EventLog& events,
                        const std::set<PortKey>& restart = {});
  /// The last sweep analyzed (or the baseline); null before the first.
  const CounterSnapshotPtr& previous() const { return previous_; }

 private:
  CounterHistory& history_;
  SweepAnalysisOptions options_;
  HealthEventTracker tracker_;
  CounterSnapshotPtr previous_;
};

}  // namespace ibfabric::telemetry
