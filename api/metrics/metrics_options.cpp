#include "api/metrics/metrics_options.h"

#include <algorithm>
#include <array>

namespace ibfabric::api {
namespace {

constexpr std::array<std::string_view, kCounterSetCount> kSetNames = {
    "traffic",    "packets",     "errors", "physical_errors", "filter_errors",
    "congestion", "utilization", "link",   "xmit_wait"};

}  // namespace

std::string_view counterSetName(CounterSet set) { return kSetNames[static_cast<std::size_t>(set)]; }

std::optional<CounterSet> parseCounterSet(std::string_view name) {
  for (std::size_t i = 0; i < kSetNames.size(); ++i)
    if (kSetNames[i] == name) return static_cast<CounterSet>(i);
  return std::nullopt;
}

std::optional<PortScope> parsePortScope(std::string_view name) {
  if (name == "switch") return PortScope::kSwitch;
  if (name == "all") return PortScope::kAll;
  return std::nullopt;
}

std::string_view portScopeName(PortScope scope) {
  return scope == PortScope::kAll ? "all" : "switch";
}

const std::vector<std::string_view>& optionalCollectorNames() {
  static const std::vector<std::string_view> names = {"ha",     "subnet",   "topology", "mad",
                                                      "events", "store",    "routing",  "lft",
                                                      "osm",    "sm_traps", "ports",    "links"};
  return names;
}

bool MetricsOptions::runs(std::string_view name) const {
  return std::find(disabledCollectors.begin(), disabledCollectors.end(), name) ==
         disabledCollectors.end();
}

}  // namespace ibfabric::api
