// JobService: the daemon's jobs and which fabric links they load (issue "attribution").
//
// Jobs are the GPU pool's allocations (ring_allreduce, the pattern the pool places them with;
// api/service/pool_service.h) and the host sets schedulers report (JobRegistry,
// PUT /api/v1/jobs/{id}). A JobsView joins them with the fabric: routing::JobAttribution on the
// placement engine's index (recomputed only when the forwarding tables, the topology or the jobs
// change) and, per job, its hottest links on the state's link load (joined per state, cheap).
// With no jobs, nothing is computed and the placement engine is not asked for.
//
// A follower thread takes each new state once (every sweep) and appends a `job_congested` event
// when a job's hottest link reaches `congestedUtilization`, naming the other jobs on that link;
// once per episode: the job must fall below `clearUtilization` before it can fire again.
//
// The predicted bottleneck at registration is the engine's score when the job was reported (kept
// with it), or for a pool allocation when this service first saw it (within one state change of
// the allocation; not kept across restarts).
//
// Owned by the daemon's main (the FabricService, PlacementService and PoolService outlive it).
// Thread-safe: view(), latest(), report(), remove() and stats() from any thread; start()/stop()
// from one.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/service/congestion_episodes.h"
#include "api/service/fabric_service.h"
#include "api/service/job_registry.h"
#include "api/service/placement_service.h"
#include "api/service/pool_service.h"
#include "routing/job_attribution.h"

namespace ibfabric::api {

struct JobServiceOptions {
  /// Utilization of a job's hottest link at which `job_congested` fires, and below which the
  /// episode ends.
  double congestedUtilization = 0.8;
  double clearUtilization = 0.6;
  /// Hottest links kept per job (REST summary, /metrics).
  std::size_t hottestLinks = 3;
  /// The reported jobs' file; empty = in memory only.
  std::filesystem::path registryFile;
};

enum class JobSource { kPool, kReported };
std::string_view toString(JobSource s);  // "pool", "reported"

struct JobEntry {
  std::string id;
  JobSource source = JobSource::kReported;
  routing::CommPattern pattern = routing::CommPattern::kRingAllreduce;
  std::vector<std::string> hosts;  ///< rank order
  std::chrono::system_clock::time_point since{};
  std::optional<double> bottleneckAtStart;  ///< bytes/s
};

/// The jobs joined with one state; immutable once published.
struct JobsView {
  std::vector<JobEntry> jobs;  ///< pool allocations by sequence, then reported jobs by id
  ServiceStatePtr state;
  /// The placement engine of `state` (index + link load); null when not ready or no jobs.
  std::shared_ptr<const routing::PlacementEngine> engine;
  std::string notReady;  ///< why engine is null while there are jobs
  /// On engine->index(), jobs in the order of `jobs`; null with engine.
  std::shared_ptr<const routing::JobAttribution> attribution;
  /// Per job, its hottest links now (at most JobServiceOptions::hottestLinks).
  std::vector<std::vector<routing::JobLinkNow>> hottest;

  /// Index into jobs, or nullopt.
  std::optional<std::size_t> find(std::string_view id) const;
};
using JobsViewPtr = std::shared_ptr<const JobsView>;

/// Work done, for /metrics; a plain value.
struct JobStats {
  std::uint64_t attributions = 0;  ///< full recomputations
  std::uint64_t joins = 0;         ///< per-state joins with the link load
  double lastAttributionSeconds = 0.0;
  double lastJoinSeconds = 0.0;
  std::uint64_t congestedEvents = 0;
};

class JobService {
 public:
  JobService(FabricService& fabric, PlacementService& placement, PoolService* pool,
             JobServiceOptions options = {});
  ~JobService();
  JobService(const JobService&) = delete;
  JobService& operator=(const JobService&) = delete;

  void start();
  void stop();

  /// The jobs on the current state (refreshed first when the state or the jobs changed).
  JobsViewPtr view();
  /// The last view published (never refreshes; for /metrics). Null before the first.
  JobsViewPtr latest() const;

  /// PUT /api/v1/jobs/{id}: validates the body and its hosts against the current topology
  /// (JobError: 400, 404 naming the unknown hosts, 409 when a pool allocation has that id, 503
  /// without a topology) and stores it. True when it is new.
  bool report(std::string_view id, const nlohmann::json& body);
  /// DELETE: false when no such reported job; JobError(409) for a pool allocation's id.
  bool remove(std::string_view id);

  JobRegistry& registry() { return registry_; }
  const JobServiceOptions& options() const { return options_; }
  JobStats stats() const;

 private:
  std::vector<JobEntry> currentJobs() const;
  JobsViewPtr refresh(const ServiceStatePtr& state, std::vector<JobEntry> jobs);
  void attribute(JobsView& v, const JobsView* previous);
  void join(JobsView& v);
  void noteBottlenecks(JobsView& v);
  void checkCongestion(const JobsView& v);
  void appendCongested(const JobsView& v, std::size_t job);
  void follow();

  FabricService& fabric_;
  PlacementService& placement_;
  PoolService* pool_;
  JobServiceOptions options_;
  JobRegistry registry_;

  mutable std::mutex mu_;  // view_, firstSeen_, stats_
  JobsViewPtr view_;
  std::uint64_t viewRegistryVersion_ = 0;
  std::map<std::string, std::optional<double>, std::less<>> firstSeen_;  ///< pool jobs
  JobStats stats_;

  CongestionEpisodes episodes_;  ///< follower only
  ServiceStatePtr checked_;      ///< follower only
  std::mutex wakeMu_;
  std::condition_variable wake_;
  std::atomic<bool> stop_{false};
  std::thread follower_;
};

}  // namespace ibfabric::api
