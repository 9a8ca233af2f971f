// FederationConfig: what ibfabric-federate is told — the ibfabricd daemons it merges (one per
// subnet) and how long it waits for each. From a YAML (or JSON) file and/or flags.
//
//   listen: "127.0.0.1:9470"     # HOST:PORT; port 0 picks a free port (printed at start)
//   timeout: 5                   # seconds: the default per-member request timeout
//   cache_ttl: 1                 # seconds a member's GET answer is reused (0 = no cache)
//   placement: best              # best (highest objective / most free GPUs) | first (config order)
//   api_token: ""                # bearer token for the federation's writes (pool allocations);
//                                # empty = writes disabled (403), as on the daemon
//   log_level: info
//   members:                     # at least one; order = the order of the merged lists
//     - name: east               # the subnet's operator-given name; optional: else the
//                                # member's own /health "subnet" name (the operator's name wins)
//       url: http://10.0.0.1:9464
//       token: ""                # the member's api_token (its writes); or token_file: PATH
//       timeout: 3               # seconds, overrides `timeout` for this member
//
// Subnet names are lower-case DNS labels ([a-z0-9-], at most 40): they prefix Slurm switch and
// Volcano HyperNode names and namespace event ids ("east:42"). Plain value type; loading is a
// pure function of its input (token_file is read at load).
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ibfabric::api::federation {

/// The configuration is invalid; what() is one line naming the key.
class FederationConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// How a job is routed when several subnets can take it.
enum class RoutingPolicy { kBest, kFirst };

struct MemberConfig {
  std::string name;  ///< operator-given subnet name; "" = the member's own
  std::string url;   ///< http(s)://host:port, optionally with a path prefix
  std::string token;
  std::optional<std::chrono::milliseconds> timeout;
};

struct FederationConfig {
  std::string listenHost = "127.0.0.1";
  int listenPort = 9470;
  std::chrono::milliseconds timeout{5000};
  std::chrono::milliseconds cacheTtl{1000};
  RoutingPolicy placement = RoutingPolicy::kBest;
  std::string apiToken;
  std::string logLevel = "info";
  std::vector<MemberConfig> members;

  /// The member's timeout, or the default one.
  std::chrono::milliseconds timeoutOf(const MemberConfig& m) const {
    return m.timeout ? *m.timeout : timeout;
  }
  /// Throws FederationConfigError: no member, a bad URL, a bad or duplicate name, bad numbers.
  void validate() const;
};

/// Whether `name` can name a subnet: a lower-case DNS label of at most 40 characters.
bool validSubnetName(std::string_view name);
/// `text` made a valid subnet name (lower-cased, other characters as '-', trimmed, cut to 40);
/// "" when nothing is left.
std::string sanitizeSubnetName(std::string_view text);

/// "HOST:PORT" (IPv6 as "[::1]:PORT"); throws FederationConfigError.
std::pair<std::string, int> parseListen(std::string_view text);

/// The configuration in `yaml` (validated); throws FederationConfigError.
FederationConfig parseFederationConfig(std::string_view yaml);
/// The file's configuration; throws FederationConfigError (also when it cannot be read).
FederationConfig loadFederationConfigFile(const std::filesystem::path& path);

}  // namespace ibfabric::api::federation
