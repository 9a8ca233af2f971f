// The store collector: the durable state store (api/service/state_store.h) and the journal that
// writes the event log and the remembered fabric to it — writes, failures, retention, and
// whether a damaged earlier file was moved aside at start. Nothing without `state.dir`.
#include <chrono>

#include "api/metrics/collectors.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kWritten{"ibfabric_store_events_written_total",
                                "Events written to the state store since the daemon started",
                                "counter"};
constexpr MetricFamily kPruned{"ibfabric_store_events_pruned_total",
                               "Stored events deleted by retention (state.event_max_age_days, "
                               "state.event_max_count)",
                               "counter"};
constexpr MetricFamily kMissed{"ibfabric_store_events_missed_total",
                               "Events the full in-memory log dropped before they could be written",
                               "counter"};
constexpr MetricFamily kFailures{"ibfabric_store_write_failures_total",
                                 "State store writes that failed (retried a second later)",
                                 "counter"};
constexpr MetricFamily kFailing{"ibfabric_store_write_failing",
                                "1 while the last state store write failed", "gauge"};
constexpr MetricFamily kLastWrite{"ibfabric_store_last_write_timestamp_seconds",
                                  "When the state store was last written (Unix time)", "gauge"};
constexpr MetricFamily kMovedAside{
    "ibfabric_store_moved_aside",
    "1 when an unusable state file (damaged, foreign, newer schema) was moved aside at start",
    "gauge"};
constexpr MetricFamily kRestored{"ibfabric_store_restored_events",
                                 "Events of earlier runs loaded from the state store at start",
                                 "gauge"};
constexpr MetricFamily kFabricRows{
    "ibfabric_store_fabric_rows_written_total",
    "Rows of the remembered fabric (nodes, cables) written or deleted since the daemon started",
    "counter"};

class StoreCollector final : public Collector {
 public:
  std::string_view name() const override { return "store"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    const StoreStatus& st = c.state.store;
    if (!st.enabled) return;
    auto counter = [&](const MetricFamily& f, std::uint64_t v) {
      out.family(f);
      out.sampleU(f.name, "", v);
    };
    counter(kWritten, st.eventsWritten);
    counter(kPruned, st.eventsPruned);
    counter(kMissed, st.eventsMissed);
    counter(kFailures, st.writeFailures);
    counter(kFailing, st.consecutiveFailures > 0 ? 1 : 0);
    if (st.lastWrite) {
      out.family(kLastWrite);
      out.sample(kLastWrite.name, "",
                 std::chrono::duration<double>(st.lastWrite->time_since_epoch()).count());
    }
    counter(kMovedAside, st.movedAside.empty() ? 0 : 1);
    counter(kRestored, st.restoredEvents);
    counter(kFabricRows, st.fabricRowsWritten);
  }
};

}  // namespace

CollectorPtr storeCollector() { return std::make_unique<StoreCollector>(); }

}  // namespace ibfabric::api
