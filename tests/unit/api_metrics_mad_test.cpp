// The MAD engine on /metrics and /health: every counter of MadEngineStats and where the policy
// stands (windows, round-trip times, retry budget, breakers), in base units.
#include <gtest/gtest.h>

#include <string>

#include "api/http/json_views.h"
#include "api/metrics/metrics.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;

ServiceState withEngine() {
  ServiceState s;
  s.started = std::chrono::system_clock::now();
  mad::MadEngineStats e;
  e.sent = 40;
  e.timeouts = 2;
  e.lostReported = 3;  // Drops the transport reported: MAD losses too.
  e.retries = 4;
  e.retriesRefused = 6;
  e.completedOk = 30;
  e.failed = 5;
  e.targetDown = 7;
  e.policy = mad::MadPolicy::kAdaptive;  // the state of an adaptive engine
  e.window = 12;
  e.windowMax = 256;
  e.targetWindowMax = 4;
  e.windowDecreases = 3;
  e.targetWindowDecreases = 9;
  e.srtt = 1500us;
  e.rttvar = 2500us;
  e.rto = 20ms;
  e.retryTokens = 2.5;
  e.breakerOpens = 2;
  e.openBreakers = 1;
  e.probes = 8;
  e.targets[Lid(5)].window = 1;
  e.targets[Lid(5)].rto = 800ms;
  e.targets[Lid(6)].window = 4;
  s.engine = e;
  return s;
}

bool has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(ApiMetricsMad, LossesTheTransportReportedCountAsTimeouts) {
  telemetry::EventLog log;
  const std::string text = renderMetrics(withEngine(), log);
  EXPECT_TRUE(has(text, "ibfabric_mad_timeouts_total 5")) << text;
  EXPECT_TRUE(has(text, "ibfabric_mad_lost_reported_total 3"));
}

TEST(ApiMetricsMad, EveryEngineCounterAndThePolicyState) {
  telemetry::EventLog log;
  const std::string text = renderMetrics(withEngine(), log);
  for (const char* line : {
           "ibfabric_mad_sent_total 40",
           "ibfabric_mad_retries_total 4",
           "ibfabric_mad_retries_refused_total 6",
           "ibfabric_mad_requests_total{outcome=\"ok\"} 30",
           "ibfabric_mad_requests_total{outcome=\"timeout\"} 5",
           "ibfabric_mad_requests_total{outcome=\"target_down\"} 7",
           "ibfabric_mad_window_decreases_total{scope=\"overall\"} 3",
           "ibfabric_mad_window_decreases_total{scope=\"target\"} 9",
           "ibfabric_mad_breaker_opens_total 2",
           "ibfabric_mad_breaker_probes_total 8",
           "ibfabric_mad_policy_info{policy=\"adaptive\"} 1",
           "ibfabric_mad_window 12",
           "ibfabric_mad_window_max 256",
           "ibfabric_mad_targets_window_reduced 1",
           "ibfabric_mad_rtt_smoothed_seconds 0.0015",
           "ibfabric_mad_rtt_deviation_seconds 0.0025",
           "ibfabric_mad_timeout_seconds 0.02",
           "ibfabric_mad_target_timeout_max_seconds 0.8",
           "ibfabric_mad_retry_tokens 2.5",
           "ibfabric_mad_breaker_open_targets 1",
       }) {
    EXPECT_TRUE(has(text, line)) << line;
  }
}

TEST(ApiMetricsMad, HealthShowsTheEngine) {
  const auto j = healthJson(withEngine(), std::chrono::system_clock::now());
  ASSERT_TRUE(j.contains("mad"));
  EXPECT_EQ(j["mad"]["policy"], "adaptive");
  EXPECT_EQ(j["mad"]["window"], 12);
  EXPECT_EQ(j["mad"]["lost_reported"], 3);
  EXPECT_EQ(j["mad"]["retries_refused"], 6);
  EXPECT_EQ(j["mad"]["breaker_open_targets"], 1);
  EXPECT_DOUBLE_EQ(j["mad"]["timeout_seconds"].get<double>(), 0.02);
  EXPECT_FALSE(healthJson(ServiceState{}, std::chrono::system_clock::now()).contains("mad"));
}

}  // namespace
}  // namespace ibfabric::api
