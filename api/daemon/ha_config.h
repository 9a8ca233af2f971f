// HaConfig: the `ha:` block of the configuration (docs/scale-out.md) — several ibfabricd on one
// subnet, one active (api/service/role_election.h):
//   ha:
//     mode: always                  # always | follow_sm | lowest_guid
//     peers: ["http://10.0.0.2:9464"]   # lowest_guid: the other instances (this one's own URL
//                                   # may be listed too: a peer with our GUID is ignored)
//     peer_timeout: 2               # seconds: a peer that does not answer in time is not live
//     poll_interval: 1              # seconds between role decisions (and peer polls)
//     standby_crawl_interval: 300   # seconds between a standby's crawls
// Plain value type.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace YAML {
class Node;
}

namespace ibfabric::api {

struct HaConfig {
  std::string mode = "always";
  std::vector<std::string> peers;
  std::chrono::milliseconds peerTimeout{2'000};
  std::chrono::milliseconds pollInterval{1'000};
  std::chrono::milliseconds standbyCrawlInterval{300'000};

  /// Throws ConfigError (service_config.h) naming the key.
  void validate() const;
};

/// Applies the `ha` mapping over `c`; throws ConfigError for unknown keys and bad values.
void applyHaKeys(const YAML::Node& ha, HaConfig& c);

}  // namespace ibfabric::api
