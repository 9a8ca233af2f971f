// ibfabricd's `mad.policy` keys: parsing, validation with messages that name the key, and the
// MadEngineOptions the sweeps' engine gets from them.
#include <gtest/gtest.h>

#include <string>

#include "api/daemon/mad_engine_config.h"
#include "api/daemon/service_config.h"

namespace ibfabric::api {
namespace {

using namespace std::chrono_literals;

std::string errorOf(const std::string& yaml) {
  try {
    loadConfigText(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ApiConfigMadPolicy, AdaptiveByDefault) {
  const ServiceConfig c;
  EXPECT_EQ(c.madPolicy, "adaptive");
  const mad::MadEngineOptions o = madEngineOptions(c);
  EXPECT_EQ(o.policy, mad::MadPolicy::kAdaptive);
  EXPECT_EQ(o.window, 256);
  EXPECT_EQ(o.timeout, 200ms);
  EXPECT_EQ(o.retries, 3);
  EXPECT_EQ(o.adaptive.minWindow, 8);
  EXPECT_EQ(o.adaptive.timeoutMin, 200ms);
  EXPECT_EQ(o.adaptive.timeoutMax, 2s);
  EXPECT_DOUBLE_EQ(o.adaptive.retryBudget, 0.1);
  EXPECT_EQ(o.adaptive.breakerAfter, 3);
}

TEST(ApiConfigMadPolicy, KeysReachTheEngineOptions) {
  const auto c = loadConfigText(R"(
mad: {policy: adaptive, window: 128, timeout_ms: 100, min_window: 4, timeout_min_ms: 5,
      timeout_max_ms: 800, retry_budget: 0.25, breaker_after: 5}
)");
  const mad::MadEngineOptions o = madEngineOptions(c);
  EXPECT_EQ(o.window, 128);
  EXPECT_EQ(o.timeout, 100ms);
  EXPECT_EQ(o.adaptive.minWindow, 4);
  EXPECT_EQ(o.adaptive.timeoutMin, 5ms);
  EXPECT_EQ(o.adaptive.timeoutMax, 800ms);
  EXPECT_DOUBLE_EQ(o.adaptive.retryBudget, 0.25);
  EXPECT_EQ(o.adaptive.breakerAfter, 5);
}

TEST(ApiConfigMadPolicy, FixedKeepsTodaysEngine) {
  const auto o = madEngineOptions(loadConfigText("mad: {policy: fixed}\n"));
  EXPECT_EQ(o.policy, mad::MadPolicy::kFixed);
  EXPECT_EQ(o.window, 256);
  EXPECT_EQ(o.perTargetWindow, 4);
  EXPECT_EQ(o.timeout, 200ms);
  EXPECT_EQ(o.retries, 3);
}

TEST(ApiConfigMadPolicy, ClearErrors) {
  EXPECT_EQ(errorOf("mad: {policy: aimd}\n"),
            "mad.policy: must be adaptive or fixed (got \"aimd\")");
  EXPECT_EQ(errorOf("mad: {window: 16, min_window: 32}\n"),
            "mad.min_window: must be 1..mad.window (16), got 32");
  EXPECT_EQ(errorOf("mad: {min_window: 0}\n"),
            "mad.min_window: must be 1..mad.window (256), got 0");
  EXPECT_EQ(errorOf("mad: {timeout_min_ms: 0}\n"), "mad.timeout_min_ms: must be >= 1");
  EXPECT_EQ(errorOf("mad: {timeout_min_ms: 50, timeout_max_ms: 10}\n"),
            "mad.timeout_max_ms: must be mad.timeout_min_ms (50)..60000, got 10");
  EXPECT_NE(errorOf("mad: {retry_budget: 1.5}\n").find("mad.retry_budget"), std::string::npos);
  EXPECT_NE(errorOf("mad: {retry_budget: -0.1}\n").find("mad.retry_budget"), std::string::npos);
  EXPECT_NE(errorOf("mad: {breaker_after: -1}\n").find("mad.breaker_after"), std::string::npos);
  EXPECT_NE(errorOf("mad: {breaker: 3}\n").find("unknown key \"mad.breaker\""), std::string::npos);
  EXPECT_EQ(errorOf("mad: {breaker_after: 0, retry_budget: 0}\n"), "");  // Both off: valid.
}

}  // namespace
}  // namespace ibfabric::api
