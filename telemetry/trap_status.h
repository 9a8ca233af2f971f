// The trap subscription's status (telemetry/trap_subscription.h), a plain value the service
// publishes in its state for /health and /metrics.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "discovery/types.h"

namespace ibfabric::mad {

/// What the subscription is doing, for /health and /metrics.
struct TrapSubscriptionStatus {
  bool portOpen = false;
  bool subscribed = false;     ///< every trap of the options accepted by the SM
  Lid smLid;                   ///< the SM subscribed at (or last tried)
  std::uint64_t rounds = 0;    ///< successful subscription rounds
  std::uint64_t failures = 0;  ///< failed rounds and port opens
  std::string lastError;       ///< the latest failure; empty once a round succeeded
  std::map<std::uint16_t, std::uint64_t> reports;  ///< Reports received, by trap number
  std::uint64_t duplicates = 0;                    ///< Reports resent by the SM (not handled)
  std::optional<std::chrono::system_clock::time_point> subscribedAt;
  std::optional<std::chrono::system_clock::time_point> lastReport;
  bool operator==(const TrapSubscriptionStatus&) const = default;
};

}  // namespace ibfabric::mad
