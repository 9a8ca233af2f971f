// MemberBoard: what the federation remembers about its members — nothing but caches with their
// age. Per member: when it last answered and when it last failed (with the error), the subnet
// name, prefix and role its /health reported, and its recent GET answers (reused for cache_ttl
// so that several dashboards do not multiply the load on the daemons).
//
// The subnet name of a member: the operator's (config) name; else the name its /health
// reported (sanitized, see validSubnetName); else "subnet-<n>" (1-based position) until it
// reported one. Owned by the FederationServer; thread-safe (one mutex).
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/federation/federation_config.h"
#include "api/federation/member_client.h"

namespace ibfabric::api::federation {

class MemberBoard {
 public:
  using SystemClock = std::chrono::system_clock;

  explicit MemberBoard(FederationConfig config);

  const FederationConfig& config() const { return config_; }
  std::size_t size() const { return config_.members.size(); }
  MemberTarget target(std::size_t member) const;

  /// The member's subnet name (see the header).
  std::string name(std::size_t member) const;
  /// The member whose subnet is `name`, or nullopt.
  std::optional<std::size_t> find(const std::string& name) const;

  /// Records a reply: an answer marks the member seen now, a failure records the error.
  void record(std::size_t member, const MemberReply& reply);
  /// Takes the subnet name, prefix and role from a /health body (any of the daemon's shapes:
  /// "subnet": "name" or {"name", "prefix"}, "subnet_name", "subnet_prefix", "role").
  void learnHealth(std::size_t member, const nlohmann::json& health);

  /// {"subnet", "url", "error", "age_seconds", "last_ok"}: a member that failed `reply`
  /// (age: since it last answered; null when it never did).
  nlohmann::json unavailableJson(std::size_t member, const MemberReply& reply) const;
  /// {"subnet", "url", "configured_name"?, "reported_name"?, "subnet_prefix"?, "role"?,
  ///  "last_ok", "age_seconds", "last_error", "last_error_at"} as remembered.
  nlohmann::json memberJson(std::size_t member) const;
  /// Seconds since the member last answered; nullopt when it never did.
  std::optional<double> ageSeconds(std::size_t member) const;

  /// A GET answer of `member` for `path` younger than cache_ttl, or nullopt.
  std::optional<MemberReply> cached(std::size_t member, const std::string& path) const;
  void store(std::size_t member, const std::string& path, const MemberReply& reply);

  /// Test seam: the clock the ages are computed with.
  void setNowForTest(std::function<SystemClock::time_point()> now) { now_ = std::move(now); }

 private:
  struct Member {
    std::string reportedName, reportedPrefix, role;
    std::optional<SystemClock::time_point> lastOk, lastErrorAt;
    std::string lastError;
    std::map<std::string, std::pair<SystemClock::time_point, MemberReply>> cache;
  };
  std::string nameLocked(std::size_t member) const;

  const FederationConfig config_;
  std::function<SystemClock::time_point()> now_ = [] { return SystemClock::now(); };
  mutable std::mutex mu_;
  std::vector<Member> members_;
};

}  // namespace ibfabric::api::federation
