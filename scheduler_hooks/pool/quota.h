// Class quotas with daily time windows: "inference may hold at most 60% of the pool's GPUs from
// 08:00 to 20:00" — QuotaRule{kInference, 0.60, 8:00, 20:00}. Windows are minutes of the day in
// UTC; a window whose end is not after its start wraps past midnight (20:00-08:00); 00:00-00:00
// is the whole day. The checks the pool makes against the rules are here too. Pure functions;
// thread-safe.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ibfabric::scheduler_hooks {

enum class JobClass { kTraining, kInference };
std::string_view toString(JobClass c);  // "training", "inference"
std::optional<JobClass> parseJobClass(std::string_view text);

struct QuotaRule {
  JobClass jobClass = JobClass::kInference;
  double maxFraction = 1.0;  ///< of the pool's GPUs (those on hosts the fabric knows)
  int startMinute = 0;       ///< minutes after 00:00 UTC
  int endMinute = 0;
  bool activeAt(std::chrono::system_clock::time_point t) const;
  std::string window() const;  ///< "08:00-20:00"
};

/// One rule's state now.
struct QuotaStatus {
  QuotaRule rule;
  bool active = false;
  double limitGpus = 0.0;  ///< maxFraction x pool GPUs
  double usedGpus = 0.0;   ///< held by the class now
  bool exceeded = false;   ///< active and used > limit (allocations made before the window)
};

/// "HH:MM" -> minutes; nullopt on anything else.
std::optional<int> parseClockTime(std::string_view text);
/// {"class": "inference", "max_fraction": 0.6, "window": "08:00-20:00"} ("max_percent": 60 is
/// accepted too; no window = all day). Throws std::invalid_argument naming the field.
QuotaRule quotaFromJson(const nlohmann::json& j);
nlohmann::json toJson(const QuotaRule& rule);

/// Why `rules` keep class `c`, holding `held` GPU-equivalents, from taking `eq` more at `now` in
/// a pool of `totalGpus` (the first active rule it would exceed); nullopt when none does.
std::optional<std::string> quotaBlock(const std::vector<QuotaRule>& rules, JobClass c, double eq,
                                      double held, int totalGpus,
                                      std::chrono::system_clock::time_point now);
/// The state of one rule with its class holding `usedGpus` at `now`.
QuotaStatus quotaStatus(const QuotaRule& rule, double usedGpus, int totalGpus,
                        std::chrono::system_clock::time_point now);

}  // namespace ibfabric::scheduler_hooks
