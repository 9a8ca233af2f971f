#include "api/daemon/ha_config.h"

#include <yaml-cpp/yaml.h>

#include "api/daemon/service_config.h"
#include "api/service/role_election.h"

namespace ibfabric::api {
namespace {

template <typename T>
T haScalar(const YAML::Node& node, const std::string& key) {
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    throw ConfigError("config: \"ha." + key + "\" has the wrong type");
  }
}

std::chrono::milliseconds haSeconds(const YAML::Node& node, const std::string& key) {
  return secondsToInterval(haScalar<double>(node, key), "ha." + key);
}

}  // namespace

void HaConfig::validate() const {
  if (!parseHaMode(mode))
    throw ConfigError("ha.mode: must be always, follow_sm or lowest_guid (got \"" + mode + "\")");
  for (const auto& p : peers)
    if (p.rfind("http://", 0) != 0 && p.rfind("https://", 0) != 0)
      throw ConfigError("ha.peers: \"" + p + "\" is not an http:// or https:// URL");
  if (mode == "lowest_guid" && peers.empty())
    throw ConfigError("ha.peers: lowest_guid needs the other instances' URLs");
}

void applyHaKeys(const YAML::Node& ha, HaConfig& c) {
  if (!ha.IsMap()) throw ConfigError("config: \"ha\" must be a mapping");
  for (const auto& kv : ha) {
    const std::string key = haScalar<std::string>(kv.first, "key");
    if (key != "mode" && key != "peers" && key != "peer_timeout" && key != "poll_interval" &&
        key != "standby_crawl_interval")
      throw ConfigError("config: unknown key \"ha." + key + "\"");
  }
  if (auto n = ha["mode"]) c.mode = haScalar<std::string>(n, "mode");
  if (auto n = ha["peers"]) {
    if (!n.IsSequence()) throw ConfigError("config: \"ha.peers\" must be a list of URLs");
    c.peers.clear();
    for (const auto& item : n) c.peers.push_back(haScalar<std::string>(item, "peers"));
  }
  if (auto n = ha["peer_timeout"]) c.peerTimeout = haSeconds(n, "peer_timeout");
  if (auto n = ha["poll_interval"]) c.pollInterval = haSeconds(n, "poll_interval");
  if (auto n = ha["standby_crawl_interval"])
    c.standbyCrawlInterval = haSeconds(n, "standby_crawl_interval");
}

}  // namespace ibfabric::api
