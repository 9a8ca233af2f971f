#include "tools/osm_plugin/plugin_event.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace ibfabric::osm {

const char* toString(PluginEventType t) {
  switch (t) {
    case PluginEventType::kHello:
      return "hello";
    case PluginEventType::kTrap:
      return "trap";
    case PluginEventType::kSubnetUp:
      return "subnet_up";
    case PluginEventType::kHeavySweepDone:
      return "heavy_sweep_done";
    case PluginEventType::kUcastRoutingDone:
      return "ucast_routing_done";
    case PluginEventType::kLftChange:
      return "lft_change";
    case PluginEventType::kStateChange:
      return "state_change";
    case PluginEventType::kPortErrors:
      return "port_errors";
  }
  return "unknown";
}

const char* smStateName(unsigned state) {
  switch (state) {
    case 0:
      return "not_active";
    case 1:
      return "discovering";
    case 2:
      return "standby";
    case 3:
      return "master";
  }
  return "unknown";
}

namespace {

std::string hexGuid(std::uint64_t g) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(g));
  return buf;
}

}  // namespace

std::string formatEventLine(const PluginEvent& e, std::uint64_t dropped) {
  try {
    nlohmann::json j = {
        {"type", toString(e.type)}, {"seq", e.seq}, {"time", e.time}, {"dropped", dropped}};
    switch (e.type) {
      case PluginEventType::kHello:
        j["osm_version"] = e.osmVersion;
        j["plugin_version"] = kPluginVersion;
        j["sm_state"] = e.smState;
        break;
      case PluginEventType::kTrap:
        j["trap"] = e.trapNumber;
        j["issuer_lid"] = e.issuerLid;
        if (e.lid != 0) j["lid"] = e.lid;
        if (e.port >= 0) j["port"] = e.port;
        break;
      case PluginEventType::kSubnetUp:
      case PluginEventType::kHeavySweepDone:
        break;
      case PluginEventType::kUcastRoutingDone:
        j["reason"] = e.reason;
        break;
      case PluginEventType::kLftChange:
        j["switch_guid"] = hexGuid(e.switchGuid);
        if (e.lftTop >= 0) j["lft_top"] = e.lftTop;
        if (e.block >= 0) j["block"] = e.block;
        break;
      case PluginEventType::kStateChange:
        j["sm_state"] = e.smState;
        break;
      case PluginEventType::kPortErrors: {
        j["node_guid"] = hexGuid(e.nodeGuid);
        j["port"] = e.port < 0 ? 0 : e.port;
        j["node"] = e.nodeName;
        nlohmann::json c = nlohmann::json::object();
        for (std::size_t i = 0; i < kPortErrorCounters.size(); ++i)
          c[kPortErrorCounters[i]] = e.counters[i];
        j["counters"] = std::move(c);
        j["interval_s"] = e.intervalSeconds < 0 ? 0 : e.intervalSeconds;
        break;
      }
    }
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  } catch (...) {
    return std::string();
  }
}

}  // namespace ibfabric::osm
