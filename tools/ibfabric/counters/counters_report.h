// CountersReport: what `ibfabric counters` prints, written as it becomes known — each port's
// raw counters as soon as the sweep has read them, the sweep's summary when it ends, the rates of
// an interval when they are computed, health and events at the end. Nothing is kept that has
// been written (the JSON report keeps an interval's rates in a temporary file until the
// document reaches its `rates` member).
//
// makeJsonReport: one well-formed JSON document, written incrementally:
//   {"xmit_wait_tick_ns": T,
//    "sweeps": [{"ports": [<sample>, ...], "sequence": N, ...stats, "failures": [...]}, ...],
//    "rates": [{"sequence": N, "ports": [<rates>, ...]}, ...],
//    "health": [...], "engine": {...}, "events": [...]}
// one record per line, ports in the order they were read (not sorted).
// makeTableReport: the text tables; a raw sweep prints its column header first, then a row per
// port as it is read, then its "sweep N: ..." summary and failed targets.
//
// Owner: one `counters` run; used from the thread that sweeps. Not thread-safe.
#pragma once

#include <cstdio>
#include <memory>
#include <vector>

#include "telemetry/counter_sweep.h"
#include "telemetry/event_log.h"
#include "telemetry/link_health_eval.h"
#include "telemetry/mad_engine.h"
#include "telemetry/port_rates.h"
#include "telemetry/rates_table.h"

namespace ibfabric::cli {

class CountersReport {
 public:
  virtual ~CountersReport() = default;
  /// A sweep begins. `raw`: its ports are shown as raw counters (a sweep with no sweep before
  /// it; the table shows later sweeps as rates only, JSON shows every sweep).
  virtual void beginSweep(bool raw) = 0;
  /// One port of the current sweep, as soon as it is read.
  virtual void port(const telemetry::PortSample& sample) = 0;
  virtual void endSweep(const telemetry::CounterSnapshot& snapshot) = 0;
  /// The interval that ended with `snapshot` (rates in the snapshot's port order).
  virtual void rates(const telemetry::CounterSnapshot& snapshot,
                     const telemetry::RatesTable& rates) = 0;
  /// The end: health of the last interval (empty after a single raw sweep), the events, the
  /// engine's totals. Flushes.
  virtual void finish(const std::vector<telemetry::LinkHealthReport>& health,
                      const std::vector<telemetry::Event>& events,
                      const mad::MadEngineStats& engine) = 0;
};

/// Throws std::runtime_error when no temporary file can be made (for the rates).
std::unique_ptr<CountersReport> makeJsonReport(std::FILE* out, double xmitWaitTickNs);
std::unique_ptr<CountersReport> makeTableReport(std::FILE* out);

}  // namespace ibfabric::cli
