#include "api/daemon/mad_engine_config.h"

#include <chrono>

namespace ibfabric::api {

mad::MadEngineOptions madEngineOptions(const ServiceConfig& config) {
  mad::MadEngineOptions eo;
  eo.policy = mad::parseMadPolicy(config.madPolicy).value_or(mad::MadPolicy::kAdaptive);
  eo.window = config.madWindow;
  eo.timeout = std::chrono::milliseconds(config.madTimeoutMs);
  eo.retries = config.madRetries;
  eo.adaptive.minWindow = config.madMinWindow;
  eo.adaptive.timeoutMin = std::chrono::milliseconds(config.madTimeoutMinMs);
  eo.adaptive.timeoutMax = std::chrono::milliseconds(config.madTimeoutMaxMs);
  eo.adaptive.retryBudget = config.madRetryBudget;
  eo.adaptive.breakerAfter = config.madBreakerAfter;
  return eo;
}

}  // namespace ibfabric::api
