// PluginEvent: what the OpenSM event plugin copies out of one report() call (plain values, no
// OpenSM pointers, so it can outlive the call), and its newline-delimited JSON form — the wire
// format api/osm/osm_events.h parses (documented there and in docs/opensm-plugin.md).
//
// Pure functions and value types; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace ibfabric::osm {

enum class PluginEventType : std::uint8_t {
  kHello,
  kTrap,
  kSubnetUp,
  kHeavySweepDone,
  kUcastRoutingDone,
  kLftChange,
  kStateChange,
  kPortErrors,
};
const char* toString(PluginEventType t);

/// PORT_ERRORS counter deltas, in osm_epi_pe_event_t order.
inline constexpr std::array<const char*, 13> kPortErrorCounters = {
    "symbol_errors",  "link_error_recovery",    "link_downed",
    "rcv_errors",     "rcv_remote_phys_errors", "rcv_switch_relay_errors",
    "xmit_discards",  "xmit_constraint_errors", "rcv_constraint_errors",
    "link_integrity", "buffer_overrun",         "vl15_dropped",
    "xmit_wait"};

struct PluginEvent {
  PluginEventType type = PluginEventType::kHello;
  double time = 0;  ///< Unix seconds.
  std::uint64_t seq = 0;
  // hello
  std::string osmVersion;
  // hello, state_change
  std::string smState;
  // trap
  std::uint16_t trapNumber = 0;
  std::uint16_t issuerLid = 0;
  std::uint16_t lid = 0;  ///< 0 = none
  int port = -1;          ///< -1 = none (also port_errors' port)
  // ucast_routing_done
  std::string reason;
  // lft_change
  std::uint64_t switchGuid = 0;
  int lftTop = -1;          ///< -1 = none
  std::int64_t block = -1;  ///< -1 = none
  // port_errors
  std::uint64_t nodeGuid = 0;
  std::string nodeName;
  std::array<std::uint64_t, kPortErrorCounters.size()> counters{};
  std::int64_t intervalSeconds = 0;
};

/// The plugin's version string, sent in its hello.
inline constexpr const char* kPluginVersion = "ibfabric_osm 1";

/// One JSON object and a trailing newline. Never throws (invalid UTF-8 in names is replaced).
std::string formatEventLine(const PluginEvent& event, std::uint64_t dropped);

/// "master", "standby", "discovering", "not_active" for SMInfo states 3, 2, 1, 0.
const char* smStateName(unsigned state);

}  // namespace ibfabric::osm
