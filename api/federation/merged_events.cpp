#include "api/federation/merged_events.h"

#include <algorithm>
#include <charconv>

#include "api/federation/merged_views.h"

namespace ibfabric::api::federation {
namespace {

using nlohmann::json;

std::optional<std::uint64_t> parseId(std::string_view s) {
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

struct Merged {
  double time;
  std::size_t subnet;
  std::uint64_t id;
  const json* event;
};

}  // namespace

std::optional<EventCursor> parseEventCursor(const std::string& text) {
  EventCursor c;
  if (text.empty()) return c;
  if (auto plain = parseId(text)) {
    c.fallback = *plain;
    return c;
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string part =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t colon = part.rfind(':');
    if (colon == std::string::npos || colon == 0) return std::nullopt;
    auto id = parseId(std::string_view(part).substr(colon + 1));
    if (!id) return std::nullopt;
    c.since[part.substr(0, colon)] = *id;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return c;
}

std::string formatEventCursor(const EventCursor& cursor, const std::vector<std::string>& subnets) {
  std::string out;
  for (const auto& s : subnets)
    out += (out.empty() ? "" : ",") + s + ":" + std::to_string(cursor.of(s));
  return out;
}

json mergeEvents(const std::vector<SubnetAnswer>& answers, const EventCursor& cursor,
                 std::size_t limit) {
  std::vector<Merged> all;
  for (std::size_t i = 0; i < answers.size(); ++i) {
    const SubnetAnswer& a = answers[i];
    if (!a.available || !a.body.is_object() || !a.body.contains("events") ||
        !a.body["events"].is_array())
      continue;
    for (const json& e : a.body["events"]) {
      if (!e.is_object() || !e.contains("id") || !e["id"].is_number_integer() ||
          e["id"].get<std::int64_t>() < 0)
        continue;
      const double t = e.contains("time") && e["time"].is_number() ? e["time"].get<double>() : 0;
      all.push_back({t, i, e["id"].get<std::uint64_t>(), &e});
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Merged& x, const Merged& y) {
    if (x.time != y.time) return x.time < y.time;
    if (x.subnet != y.subnet) return x.subnet < y.subnet;
    return x.id < y.id;
  });
  if (all.size() > limit) all.resize(limit);
  EventCursor next = cursor;
  std::vector<std::string> subnets;
  for (const auto& a : answers) {
    subnets.push_back(a.subnet);
    next.since[a.subnet] = cursor.of(a.subnet);
  }
  json events = json::array();
  for (const Merged& m : all) {
    const std::string& subnet = answers[m.subnet].subnet;
    json e = *m.event;
    e["id"] = subnet + ":" + std::to_string(m.id);
    e["subnet"] = subnet;
    events.push_back(std::move(e));
    next.since[subnet] = std::max(next.since[subnet], m.id);
  }
  return {{"events", events},
          {"last_id", formatEventCursor(next, subnets)},
          {"unavailable", unavailableOf(answers)}};
}

}  // namespace ibfabric::api::federation
