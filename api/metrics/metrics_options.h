// MetricsOptions: what the operator chooses to export on /metrics (config `metrics:`,
// docs/daemon.md): which state collectors run, whether the per-port families cover every polled
// port or the switch ports only, and which counter sets of the port collector are written. The
// names accepted in the configuration are the ones below (parse*() reject any other).
//
// A value type, copied into every MetricsPage; thread-safe to read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ibfabric::api {

/// The families of the port collector, in groups the operator turns on or off
/// (`metrics.counters`). Every per-port family belongs to exactly one set; ibfabric_port_info is
/// always written for every exported port.
enum class CounterSet : std::uint8_t {
  kTraffic,         ///< traffic: transmit/receive bytes
  kPackets,         ///< packets: transmit/receive packets
  kErrors,          ///< errors: the port errors the alerts read (symbol errors, link downed,
                    ///< receive errors, transmit discards)
  kPhysicalErrors,  ///< physical_errors: link error recovery, remote physical, local link
                    ///< integrity, buffer overrun
  kFilterErrors,    ///< filter_errors: dropped by switch relay, partition/raw filters, VL15
  kCongestion,      ///< congestion: the congestion ratio (time waiting for credits)
  kUtilization,     ///< utilization: data rate over the link's data rate, per direction
  kLink,            ///< link: port state, active and expected data rate of the port's link
  kXmitWait,        ///< xmit_wait: the raw PortXmitWait ticks the congestion ratio comes from
};
inline constexpr std::size_t kCounterSetCount = 9;

/// The configuration name of a set ("traffic", ...).
std::string_view counterSetName(CounterSet set);
/// The set named `name`; nullopt for an unknown name.
std::optional<CounterSet> parseCounterSet(std::string_view name);

/// Which ports the per-port families cover (`metrics.ports`).
enum class PortScope : std::uint8_t {
  /// Switch ports only: a CA port's traffic and errors are those of the leaf port at the other
  /// end of its cable (seen from that end), and that port's ibfabric_port_info names the CA.
  kSwitch,
  kAll,  ///< every polled port, CA ports too
};
std::optional<PortScope> parsePortScope(std::string_view name);
std::string_view portScopeName(PortScope scope);

/// The state collectors an operator may turn off (`metrics.collectors`): every one but
/// "daemon" (readiness, which every alert rule joins on).
const std::vector<std::string_view>& optionalCollectorNames();

struct MetricsOptions {
  PortScope ports = PortScope::kSwitch;
  /// Bit i: CounterSet(i) is exported. Default: traffic, errors, congestion: what every alert
  /// and the overview dashboard read, a page a new Prometheus target takes in one scrape at
  /// 10,240 HCAs (docs/daemon.md: the page at the defaults, and what each set costs). A cable's
  /// rate is on the links collector's per-cable series either way.
  std::uint32_t counterSets = defaultCounterSets();
  /// State collectors not to run (names of optionalCollectorNames()); they are absent from the
  /// page and from ibfabric_collector_success.
  std::vector<std::string> disabledCollectors;

  static constexpr std::uint32_t bit(CounterSet s) { return 1u << static_cast<unsigned>(s); }
  static constexpr std::uint32_t defaultCounterSets() {
    return bit(CounterSet::kTraffic) | bit(CounterSet::kErrors) | bit(CounterSet::kCongestion);
  }
  static constexpr std::uint32_t allCounterSets() { return (1u << kCounterSetCount) - 1; }

  bool exports(CounterSet s) const { return (counterSets & bit(s)) != 0; }
  /// Whether the state collector named `name` runs.
  bool runs(std::string_view name) const;
};

}  // namespace ibfabric::api
