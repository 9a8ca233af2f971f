// JSON codecs of the pool (docs/pool.md): allocation requests (with their validation), allocations
// (the REST and the journal form), and inventory hosts as journal records.
#include "scheduler_hooks/pool/json_codecs.h"

#include <cctype>
#include <chrono>
#include <climits>
#include <ctime>
#include <set>
#include <string>

#include "scheduler_hooks/pool.h"
#include "scheduler_hooks/pool/usage_accounting.h"

namespace ibfabric::scheduler_hooks {
namespace {

using nlohmann::json;
using SysClock = std::chrono::system_clock;

[[noreturn]] void invalid(const std::string& message) {
  throw PoolError(PoolError::Kind::kInvalid, message);
}

std::int64_t toMs(SysClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string isoTime(SysClock::time_point t) {
  const std::time_t tt = SysClock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::string_view toString(AllocationState s) {
  return s == AllocationState::kActive ? "active" : "degraded";
}

void validate(const AllocationRequest& r) {
  if (r.jobId.empty() || r.jobId.size() > 128) invalid("job_id: 1..128 characters required");
  for (char c : r.jobId)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' &&
        c != ':')
      invalid("job_id: only letters, digits, '-', '_', '.', ':' are allowed");
  if (r.gpus < 1 || r.gpus > 1'000'000) invalid("gpus: must be 1..1000000");
  if (r.gpusPerHost < 0 || r.gpusPerHost > 64) invalid("gpus_per_host: must be 0 (any)..64");
  if (r.priority < -1'000'000 || r.priority > 1'000'000) invalid("priority: out of range");
  if (!pool_impl::isExclusive(r)) {
    Gpu probe;
    probe.memoryGb = 4096;
    probe.model = "generic";
    if (!parseMigProfile(r.sharing, probe))
      invalid("sharing: \"exclusive\" or a MIG profile like \"1g.10gb\", got \"" + r.sharing +
              "\"");
    if (r.jobClass == JobClass::kTraining)
      invalid("sharing: training takes whole GPUs (MIG instances have no NVLink/P2P)");
  }
}

/// An integer field as int: 400 when it does not fit (never wrapped before the range checks).
int intOf(const json& v, const char* name) {
  const bool fits = v.is_number_unsigned()
                        ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT_MAX)
                        : v.get<std::int64_t>() >= INT_MIN && v.get<std::int64_t>() <= INT_MAX;
  if (!fits) invalid(std::string(name) + ": out of range");
  return static_cast<int>(v.get<std::int64_t>());
}

AllocationRequest requestFromJson(const json& j) {
  if (!j.is_object()) invalid("the request must be a JSON object");
  static const std::set<std::string> known = {"job_id",   "gpus",    "gpus_per_host", "class",
                                              "priority", "sharing", "preemptible"};
  for (const auto& [k, v] : j.items())
    if (!known.count(k)) invalid("unknown field \"" + k + "\"");
  AllocationRequest r;
  if (!j.contains("job_id") || !j["job_id"].is_string()) invalid("job_id: a string is required");
  r.jobId = j["job_id"].get<std::string>();
  if (!j.contains("gpus") || !j["gpus"].is_number_integer())
    invalid("gpus: an integer is required");
  r.gpus = intOf(j["gpus"], "gpus");
  if (j.contains("gpus_per_host")) {
    const auto& g = j["gpus_per_host"];
    if (g.is_string() && g.get<std::string>() == "any")
      r.gpusPerHost = 0;
    else if (g.is_number_integer())
      r.gpusPerHost = intOf(g, "gpus_per_host");
    else
      invalid("gpus_per_host: an integer or \"any\"");
  }
  if (!j.contains("class") || !j["class"].is_string()) invalid("class: training or inference");
  auto c = parseJobClass(j["class"].get<std::string>());
  if (!c) invalid("class: training or inference, got \"" + j["class"].get<std::string>() + "\"");
  r.jobClass = *c;
  if (j.contains("priority")) {
    if (!j["priority"].is_number_integer()) invalid("priority: an integer");
    r.priority = intOf(j["priority"], "priority");
  }
  if (j.contains("sharing")) {
    if (!j["sharing"].is_string()) invalid("sharing: a string");
    r.sharing = j["sharing"].get<std::string>();
  }
  if (j.contains("preemptible")) {
    if (!j["preemptible"].is_boolean()) invalid("preemptible: true or false");
    r.preemptible = j["preemptible"].get<bool>();
  }
  validate(r);
  return r;
}

json toJson(const AllocationRequest& r) {
  return {{"job_id", r.jobId},
          {"gpus", r.gpus},
          {"gpus_per_host", r.gpusPerHost == 0 ? json("any") : json(r.gpusPerHost)},
          {"class", toString(r.jobClass)},
          {"priority", r.priority},
          {"sharing", r.sharing},
          {"preemptible", r.preemptible}};
}

json toJson(const Allocation& a) {
  json hosts = json::array();
  for (const auto& h : a.hosts) hosts.push_back({{"host", h.host}, {"gpus", h.gpus}});
  json j = toJson(a.request);
  j["state"] = toString(a.state);
  j["hosts"] = hosts;
  j["sequence"] = a.sequence;
  j["created"] = isoTime(a.created);
  j["created_unix_ms"] = toMs(a.created);
  j["gpu_equivalents"] = a.gpuEquivalents;
  if (a.state == AllocationState::kDegraded)
    j["degraded"] = {{"reason", a.degradedReason},
                     {"replacement", a.replacement ? json(*a.replacement) : json(nullptr)},
                     {"note", a.replacementNote}};
  return j;
}

namespace {

/// An allocation's GPU indexes: integers that fit an int.
std::vector<int> gpuIndexesOf(const json& v) {
  if (!v.is_array()) invalid("allocation record: gpus: not an array");
  std::vector<int> out;
  for (const auto& g : v) {
    if (!g.is_number_integer()) invalid("allocation record: gpus: not an integer");
    out.push_back(intOf(g, "allocation record: gpus"));
  }
  return out;
}

}  // namespace

Allocation allocationFromJson(const json& j) {
  try {
    Allocation a;
    json req = j;
    for (const char* k : {"state", "hosts", "sequence", "created", "created_unix_ms",
                          "gpu_equivalents", "degraded"})
      req.erase(k);
    a.request = requestFromJson(req);
    a.state = j.at("state") == "degraded" ? AllocationState::kDegraded : AllocationState::kActive;
    for (const auto& h : j.at("hosts"))
      a.hosts.push_back({h.at("host").get<std::string>(), gpuIndexesOf(h.at("gpus"))});
    // Checked before conversion: a double out of range would be undefined, an integer wrapped.
    const json& sequence = j.at("sequence");
    if (!sequence.is_number_unsigned())
      invalid("allocation record: sequence: not an unsigned integer");
    a.sequence = sequence.get<std::uint64_t>();
    const json& created = j.at("created_unix_ms");
    if (!created.is_number_integer()) invalid("allocation record: created_unix_ms: not an integer");
    a.created = SysClock::time_point(std::chrono::milliseconds(created.get<std::int64_t>()));
    a.gpuEquivalents = j.at("gpu_equivalents").get<double>();
    if (j.contains("degraded")) {
      const auto& d = j["degraded"];
      a.degradedReason = d.value("reason", "");
      if (d.contains("replacement") && d["replacement"].is_string())
        a.replacement = d["replacement"].get<std::string>();
      a.replacementNote = d.value("note", "");
    }
    return a;
  } catch (const json::exception& e) {
    throw PoolError(PoolError::Kind::kInvalid, std::string("allocation record: ") + e.what());
  }
}

namespace pool_impl {

PoolHost hostFromRecord(const json& j) {
  json body = j;
  body.erase("name");
  return hostFromJson(j.at("name").get<std::string>(), body);
}

}  // namespace pool_impl
}  // namespace ibfabric::scheduler_hooks
