// The federation's event log: the members' events merged by time, ids namespaced
// "<subnet>:<id>". The position in the merged log is a composite cursor, one event id per
// subnet: "east:12,west:40" (what `last_id` hands out and `since` takes back; a plain number is
// the same id for every subnet, a subnet not named starts at 0). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/federation/subnet_answer.h"

namespace ibfabric::api::federation {

/// Per subnet: the id after which its events are wanted.
struct EventCursor {
  std::map<std::string, std::uint64_t> since;
  std::uint64_t fallback = 0;  ///< for subnets the cursor does not name

  std::uint64_t of(const std::string& subnet) const {
    auto it = since.find(subnet);
    return it == since.end() ? fallback : it->second;
  }
};

/// "east:12,west:40", "12" or ""; nullopt when malformed.
std::optional<EventCursor> parseEventCursor(const std::string& text);
/// The cursor's text for `subnets` (every subnet named, in that order).
std::string formatEventCursor(const EventCursor& cursor, const std::vector<std::string>& subnets);

/// {"events": [...], "last_id": "<cursor>", "unavailable": [...]}: the events of the available
/// answers (each {"events": [...]} from a member asked with since = cursor.of(subnet)) sorted
/// by time (ties: subnet order, then id), the first `limit`; each event's "id" becomes
/// "<subnet>:<id>" and gets "subnet"; last_id moves each subnet past its events that were kept
/// (an unavailable subnet keeps its position).
nlohmann::json mergeEvents(const std::vector<SubnetAnswer>& answers, const EventCursor& cursor,
                           std::size_t limit);

}  // namespace ibfabric::api::federation
