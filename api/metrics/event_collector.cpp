// The event collector: events appended to the event log, by type, and the newest id.
#include "api/metrics/collectors.h"

namespace ibfabric::api {
namespace {

constexpr MetricFamily kEvents{"ibfabric_events_total",
                               "Events appended to the event log since the daemon started",
                               "counter"};
constexpr MetricFamily kLastId{"ibfabric_events_last_id",
                               "Id of the newest event (for /api/v1/events?since=)", "gauge"};

class EventCollector final : public Collector {
 public:
  std::string_view name() const override { return "events"; }
  void collect(const CollectContext& c, MetricWriter& out) const override {
    out.family(kEvents);
    for (const auto& [type, count] : c.state.eventsByType)
      out.sampleU(kEvents.name, Labels("type", type), count);
    out.family(kLastId);
    out.sampleU(kLastId.name, "", c.events.lastId());
  }
};

}  // namespace

CollectorPtr eventCollector() { return std::make_unique<EventCollector>(); }

}  // namespace ibfabric::api
