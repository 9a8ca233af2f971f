// JSON records of `ibfabric counters`: one port's raw sample, a sweep's statistics, one port's
// rates, one link's health, one event, the MAD engine's totals; and the sample back from a
// `--save` file. CountersReport writes them one at a time; the shapes are the CLI's documented
// output (docs/telemetry.md, "CLI").
//
// Free functions, no state: thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "telemetry/counter_sweep.h"
#include "telemetry/event_log.h"
#include "telemetry/link_health_eval.h"
#include "telemetry/mad_engine.h"
#include "telemetry/port_rates.h"

namespace ibfabric::cli {

nlohmann::json sampleJson(const telemetry::PortSample& s);
/// Throws std::runtime_error on a malformed record.
telemetry::PortSample sampleFromJson(const nlohmann::json& j);
/// Everything of a sweep but its ports: sequence, times, stats, failures.
nlohmann::json sweepSummaryJson(const telemetry::CounterSnapshot& snap);
/// `s`: the port's sample of the same sweep, for its description (may be null).
nlohmann::json ratesJson(const telemetry::PortRates& r, const telemetry::PortSample* s);
nlohmann::json healthJson(const telemetry::LinkHealthReport& r);
nlohmann::json eventJson(const telemetry::Event& e);
nlohmann::json engineJson(const mad::MadEngineStats& st);

}  // namespace ibfabric::cli
