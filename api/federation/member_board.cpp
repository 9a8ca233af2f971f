#include "api/federation/member_board.h"

#include <spdlog/spdlog.h>

namespace ibfabric::api::federation {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxCachedPaths = 64;  // per member

double epoch(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

std::string stringAt(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return "";
  return j[key].get<std::string>();
}

}  // namespace

MemberBoard::MemberBoard(FederationConfig config)
    : config_(std::move(config)), members_(config_.members.size()) {}

MemberTarget MemberBoard::target(std::size_t member) const {
  const MemberConfig& m = config_.members.at(member);
  return {m.url, m.token, config_.timeoutOf(m)};
}

std::string MemberBoard::nameLocked(std::size_t member) const {
  const MemberConfig& m = config_.members.at(member);
  if (!m.name.empty()) return m.name;
  const std::string reported = sanitizeSubnetName(members_[member].reportedName);
  if (!reported.empty()) {
    // A reported name that another member already carries stays unused.
    bool clash = false;
    for (std::size_t i = 0; i < members_.size() && !clash; ++i)
      if (i != member && (config_.members[i].name == reported ||
                          (i < member && config_.members[i].name.empty() &&
                           sanitizeSubnetName(members_[i].reportedName) == reported)))
        clash = true;
    if (!clash) return reported;
  }
  return "subnet-" + std::to_string(member + 1);
}

std::string MemberBoard::name(std::size_t member) const {
  std::lock_guard lock(mu_);
  return nameLocked(member);
}

std::optional<std::size_t> MemberBoard::find(const std::string& name) const {
  std::lock_guard lock(mu_);
  for (std::size_t i = 0; i < members_.size(); ++i)
    if (nameLocked(i) == name) return i;
  return std::nullopt;
}

void MemberBoard::record(std::size_t member, const MemberReply& reply) {
  std::lock_guard lock(mu_);
  Member& m = members_.at(member);
  const auto now = now_();
  if (reply.answered() && reply.status != 503) {
    if (!m.lastError.empty() && m.lastErrorAt && (!m.lastOk || *m.lastOk < *m.lastErrorAt))
      spdlog::info("member {} ({}) answers again", nameLocked(member), config_.members[member].url);
    m.lastOk = now;
    return;
  }
  const std::string error = reply.answered() ? "not ready: " + reply.message() : reply.error;
  if (m.lastError != error || !m.lastErrorAt || (m.lastOk && *m.lastOk > *m.lastErrorAt))
    spdlog::warn("member {} ({}) unavailable: {}", nameLocked(member), config_.members[member].url,
                 error);
  m.lastError = error;
  m.lastErrorAt = now;
}

void MemberBoard::learnHealth(std::size_t member, const json& health) {
  if (!health.is_object()) return;
  std::lock_guard lock(mu_);
  Member& m = members_.at(member);
  std::string name = stringAt(health, "subnet_name");
  std::string prefix = stringAt(health, "subnet_prefix");
  if (health.contains("subnet")) {
    const json& s = health["subnet"];
    if (s.is_string()) name = s.get<std::string>();
    if (name.empty()) name = stringAt(s, "name");
    if (prefix.empty()) prefix = stringAt(s, "prefix");
    if (prefix.empty()) prefix = stringAt(s, "subnet_prefix");
  }
  const std::string& configured = config_.members[member].name;
  if (!name.empty() && name != m.reportedName && !configured.empty() && name != configured)
    spdlog::info("member {} reports subnet name \"{}\"; the configured name wins", configured,
                 name);
  if (!name.empty()) m.reportedName = name;
  if (!prefix.empty()) m.reportedPrefix = prefix;
  const std::string role = stringAt(health, "role");
  if (!role.empty()) m.role = role;
}

std::optional<double> MemberBoard::ageSeconds(std::size_t member) const {
  std::lock_guard lock(mu_);
  const Member& m = members_.at(member);
  if (!m.lastOk) return std::nullopt;
  return std::chrono::duration<double>(now_() - *m.lastOk).count();
}

json MemberBoard::unavailableJson(std::size_t member, const MemberReply& reply) const {
  const auto age = ageSeconds(member);
  std::lock_guard lock(mu_);
  const Member& m = members_.at(member);
  return {{"subnet", nameLocked(member)},
          {"url", config_.members[member].url},
          {"available", false},
          {"error", reply.answered() ? "not ready: " + reply.message() : reply.error},
          {"age_seconds", age ? json(*age) : json()},
          {"last_ok", m.lastOk ? json(epoch(*m.lastOk)) : json()}};
}

json MemberBoard::memberJson(std::size_t member) const {
  const auto age = ageSeconds(member);
  std::lock_guard lock(mu_);
  const Member& m = members_.at(member);
  const MemberConfig& c = config_.members[member];
  json j = {{"subnet", nameLocked(member)},
            {"url", c.url},
            {"last_ok", m.lastOk ? json(epoch(*m.lastOk)) : json()},
            {"age_seconds", age ? json(*age) : json()},
            {"last_error", m.lastError.empty() ? json() : json(m.lastError)},
            {"last_error_at", m.lastErrorAt ? json(epoch(*m.lastErrorAt)) : json()}};
  if (!c.name.empty()) j["configured_name"] = c.name;
  if (!m.reportedName.empty()) j["reported_name"] = m.reportedName;
  if (!m.reportedPrefix.empty()) j["subnet_prefix"] = m.reportedPrefix;
  if (!m.role.empty()) j["role"] = m.role;
  return j;
}

std::optional<MemberReply> MemberBoard::cached(std::size_t member, const std::string& path) const {
  if (config_.cacheTtl.count() == 0) return std::nullopt;
  std::lock_guard lock(mu_);
  const auto& cache = members_.at(member).cache;
  auto it = cache.find(path);
  if (it == cache.end() || now_() - it->second.first >= config_.cacheTtl) return std::nullopt;
  return it->second.second;
}

void MemberBoard::store(std::size_t member, const std::string& path, const MemberReply& reply) {
  if (config_.cacheTtl.count() == 0 || !reply.answered()) return;
  std::lock_guard lock(mu_);
  auto& cache = members_.at(member).cache;
  const auto now = now_();
  if (cache.size() >= kMaxCachedPaths) {
    for (auto it = cache.begin(); it != cache.end();)
      it = now - it->second.first >= config_.cacheTtl ? cache.erase(it) : std::next(it);
    if (cache.size() >= kMaxCachedPaths) cache.erase(cache.begin());
  }
  cache[path] = {now, reply};
}

}  // namespace ibfabric::api::federation
