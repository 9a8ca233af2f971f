// Class quotas: job classes, daily UTC windows, the quota JSON form, and the quota checks.
#include "scheduler_hooks/pool/quota.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace ibfabric::scheduler_hooks {

std::string_view toString(JobClass c) {
  return c == JobClass::kTraining ? "training" : "inference";
}

std::optional<JobClass> parseJobClass(std::string_view text) {
  if (text == "training") return JobClass::kTraining;
  if (text == "inference") return JobClass::kInference;
  return std::nullopt;
}

bool QuotaRule::activeAt(std::chrono::system_clock::time_point t) const {
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  const int minute = static_cast<int>(((secs % 86400) + 86400) % 86400 / 60);
  if (startMinute == endMinute) return true;
  if (startMinute < endMinute) return minute >= startMinute && minute < endMinute;
  return minute >= startMinute || minute < endMinute;
}

std::string QuotaRule::window() const {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%02d:%02d-%02d:%02d", startMinute / 60, startMinute % 60,
                endMinute / 60, endMinute % 60);
  return buf;
}

std::optional<int> parseClockTime(std::string_view text) {
  if (text.size() != 5 || text[2] != ':') return std::nullopt;
  int h = 0, m = 0;
  auto [p1, e1] = std::from_chars(text.data(), text.data() + 2, h);
  auto [p2, e2] = std::from_chars(text.data() + 3, text.data() + 5, m);
  if (e1 != std::errc() || e2 != std::errc() || p1 != text.data() + 2 || p2 != text.data() + 5 ||
      h < 0 || h > 24 || m < 0 || m > 59 || (h == 24 && m != 0))
    return std::nullopt;
  return (h * 60 + m) % 1440;
}

QuotaRule quotaFromJson(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("quota: must be a mapping");
  for (const auto& [k, v] : j.items())
    if (k != "class" && k != "max_fraction" && k != "max_percent" && k != "window")
      throw std::invalid_argument("quota: unknown key \"" + k + "\"");
  QuotaRule r;
  if (!j.contains("class") || !j["class"].is_string())
    throw std::invalid_argument("quota: \"class\" (training|inference) is required");
  auto c = parseJobClass(j["class"].get<std::string>());
  if (!c) throw std::invalid_argument("quota: class must be training or inference");
  r.jobClass = *c;
  if (j.contains("max_fraction") == j.contains("max_percent"))
    throw std::invalid_argument("quota: give one of max_fraction or max_percent");
  const auto& lim = j.contains("max_fraction") ? j["max_fraction"] : j["max_percent"];
  if (!lim.is_number()) throw std::invalid_argument("quota: the limit must be a number");
  r.maxFraction = lim.get<double>() / (j.contains("max_percent") ? 100.0 : 1.0);
  if (!(r.maxFraction >= 0.0 && r.maxFraction <= 1.0))
    throw std::invalid_argument("quota: the limit must be 0..1 (or 0..100 percent)");
  if (j.contains("window")) {
    if (!j["window"].is_string()) throw std::invalid_argument("quota: window must be HH:MM-HH:MM");
    const std::string w = j["window"].get<std::string>();
    auto dash = w.find('-');
    auto a = dash == std::string::npos ? std::nullopt : parseClockTime(w.substr(0, dash));
    auto b = dash == std::string::npos ? std::nullopt : parseClockTime(w.substr(dash + 1));
    if (!a || !b) throw std::invalid_argument("quota: window must be HH:MM-HH:MM, got " + w);
    r.startMinute = *a;
    r.endMinute = *b;
  }
  return r;
}

nlohmann::json toJson(const QuotaRule& rule) {
  return {{"class", toString(rule.jobClass)},
          {"max_fraction", rule.maxFraction},
          {"window", rule.window()}};
}

std::optional<std::string> quotaBlock(const std::vector<QuotaRule>& rules, JobClass c, double eq,
                                      double held, int totalGpus,
                                      std::chrono::system_clock::time_point now) {
  for (const auto& rule : rules) {
    if (rule.jobClass != c || !rule.activeAt(now)) continue;
    const double limit = rule.maxFraction * totalGpus;
    if (held + eq > limit + 1e-9)
      return "quota: " + std::string(toString(c)) + " may hold " + std::to_string(limit) +
             " GPUs (" + std::to_string(int(std::lround(rule.maxFraction * 100))) + "% in " +
             rule.window() + " UTC), holds " + std::to_string(held) + ", asks " +
             std::to_string(eq);
  }
  return std::nullopt;
}

QuotaStatus quotaStatus(const QuotaRule& rule, double usedGpus, int totalGpus,
                        std::chrono::system_clock::time_point now) {
  QuotaStatus s;
  s.rule = rule;
  s.active = rule.activeAt(now);
  s.limitGpus = rule.maxFraction * totalGpus;
  s.usedGpus = usedGpus;
  s.exceeded = s.active && s.usedGpus > s.limitGpus + 1e-9;
  return s;
}

}  // namespace ibfabric::scheduler_hooks
