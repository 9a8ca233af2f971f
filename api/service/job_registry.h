// JobRegistry: the jobs a scheduler reports for attribution (PUT /api/v1/jobs/{id}): host sets
// placed outside the daemon's GPU pool, with the traffic pattern they run.
//
// Validation is strict and done here, so every caller gets the same answers: a job id of 1..128
// characters from [A-Za-z0-9._:@+=-]; a body {"hosts": [names], "pattern": "ring_allreduce" |
// "alltoall"} with no other field, 1..kMaxHosts distinct non-empty host names (rank order as
// given); at most kMaxJobs jobs. Host names are checked against the fabric by the caller
// (JobService), which knows the topology.
//
// Persistence: with a file (`state.dir`/jobs.json) every change rewrites the whole registry to a
// temporary file, fsyncs it and renames it over the old one, so a restart (or a crash at any
// point) finds either the old or the new registry, never a torn one. A few KB per job and
// writes only on scheduler calls: cheaper and simpler than a table in the SQLite store, which
// belongs to the event journal's thread. An unreadable file at start is moved aside
// (jobs.json.bad-<UTC time>) and the registry starts empty (loadProblem() says why).
//
// Thread-safe: every method may be called from any thread (one mutex).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "routing/placement.h"

namespace ibfabric::api {

struct ReportedJob {
  std::string id;
  std::vector<std::string> hosts;  ///< rank order
  routing::CommPattern pattern = routing::CommPattern::kRingAllreduce;
  std::chrono::system_clock::time_point registered{};
  /// The placement engine's predicted per-flow bottleneck when registered (bytes/s); unset when
  /// the engine was not ready.
  std::optional<double> bottleneckAtRegistration;
};

/// A request the registry refuses, with its HTTP status (400, 404, 409, 500, 503).
class JobError : public std::runtime_error {
 public:
  JobError(int status, const std::string& what) : std::runtime_error(what), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

/// Throws JobError(400) unless `id` is a valid job id.
void validateJobId(std::string_view id);
/// The body of PUT /api/v1/jobs/{id} as a job (registered and bottleneck unset). Throws
/// JobError(400) naming the field.
ReportedJob reportedJobFromBody(std::string_view id, const nlohmann::json& body);

class JobRegistry {
 public:
  static constexpr std::size_t kMaxJobs = 4096;
  static constexpr std::size_t kMaxHosts = 65536;
  static constexpr const char* kFileName = "jobs.json";

  /// `file` empty: in memory only. Loads the file when it exists.
  explicit JobRegistry(std::filesystem::path file = {});

  /// Adds or replaces `job`; true when it is new. JobError(409) beyond kMaxJobs, JobError(500)
  /// when the file cannot be written (nothing changes then).
  bool put(ReportedJob job);
  /// false when there is no such job. JobError(500) when the file cannot be written.
  bool remove(std::string_view id);
  std::optional<ReportedJob> get(std::string_view id) const;
  std::vector<ReportedJob> list() const;  ///< by id
  /// Bumped by every change.
  std::uint64_t version() const;
  /// Why the file found at start was not used (empty when it was, or there was none).
  const std::string& loadProblem() const { return loadProblem_; }

 private:
  void load();
  /// Writes `jobs` atomically; throws JobError(500).
  void save(const std::map<std::string, ReportedJob, std::less<>>& jobs) const;

  std::filesystem::path file_;
  mutable std::mutex mu_;
  std::map<std::string, ReportedJob, std::less<>> jobs_;
  std::uint64_t version_ = 0;
  std::string loadProblem_;
};

}  // namespace ibfabric::api
