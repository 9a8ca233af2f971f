// Pool: the GPU pool allocator. Turns the GPUs of the cluster's hosts into one pool and hands
// them out: whole hosts to training (chosen by a routing::Placer with the ring pattern), whole
// GPUs packed onto partly used hosts and MIG slices to inference. docs/pool.md.
//
//   inventory    hosts -> GPUs (pool/inventory.h), from a file and/or putHost(); joined with the
//                fabric's hosts (setTopology): a host the fabric does not know is reported and
//                never used.
//   allocations  allocate() / release() / get() / list(); idempotent on the job id (the same
//                request answers the same allocation, another request with that id is a
//                conflict).
//   preemption   when capacity (or a class quota) is short, a request may evict preemptible
//                allocations of strictly lower priority: lowest priority first, and among equal
//                priorities the youngest (most recently allocated) first; victims not needed in
//                the end are spared. The answer lists the victims.
//   quotas       per class, a share of the pool's GPUs inside a daily window (pool/quota.h).
//   faults       setTopology() and observeEvent() track each host's HCAs; an allocation on a
//                host whose HCA link is down, faulty or degraded becomes `degraded` with a
//                suggested replacement host, and a PoolEvent is emitted.
//   durability   every change is written to an fsync'd journal before it is applied
//                (pool/journal_file.h); the constructor replays it.
//
// Thread-safety: every public method may be called from any thread (one mutex; decisions are
// short). The placer is called with the mutex held and must not call back into the pool.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "discovery/topology.h"
#include "routing/placement.h"
#include "scheduler_hooks/export_layout.h"
#include "scheduler_hooks/pool/inventory.h"
#include "scheduler_hooks/pool/quota.h"
#include "telemetry/event_log.h"

namespace ibfabric::scheduler_hooks {

class PoolJournal;

enum class AllocationState { kActive, kDegraded };
std::string_view toString(AllocationState s);  // "active", "degraded"

// How a host looks from the fabric: HostHealth (ok < degraded < faulty < down) of
// scheduler_hooks/export_layout.h, shared with the exports and the extender.

struct AllocationRequest {
  std::string jobId;
  int gpus = 0;         ///< whole GPUs, or MIG instances when `sharing` is a profile
  int gpusPerHost = 0;  ///< 0 = any
  JobClass jobClass = JobClass::kTraining;
  int priority = 0;                   ///< higher wins
  std::string sharing = "exclusive";  ///< "exclusive" or a MIG profile ("1g.10gb")
  bool preemptible = false;
  friend bool operator==(const AllocationRequest&, const AllocationRequest&) = default;
};

/// GPUs of one host given to an allocation. For a MIG allocation each entry of `gpus` is one
/// instance of the profile (a GPU index may repeat).
struct HostGrant {
  std::string host;
  std::vector<int> gpus;
  friend bool operator==(const HostGrant&, const HostGrant&) = default;
};

struct Allocation {
  AllocationRequest request;
  std::vector<HostGrant> hosts;  ///< in rank order (the placer's order for training)
  AllocationState state = AllocationState::kActive;
  std::uint64_t sequence = 0;  ///< allocation order; higher = younger
  std::chrono::system_clock::time_point created{};
  std::string degradedReason;              ///< "dgx0003: HCA mlx5_1 link down"
  std::optional<std::string> replacement;  ///< suggested host instead of the failing one
  std::string replacementNote;             ///< why that one (or why none)
  /// GPU-equivalents held: whole GPUs count 1, a MIG instance its compute slices / 7.
  double gpuEquivalents = 0.0;
};

struct AllocationResult {
  Allocation allocation;
  bool created = false;               ///< false: the same request was answered before
  std::vector<Allocation> victims;    ///< preempted to make room, in eviction order
  std::vector<std::string> warnings;  ///< e.g. inventory hosts unknown to the fabric
};

/// Emitted when an allocation turns degraded (and given to PoolOptions::onEvent).
struct PoolEvent {
  std::string jobId;
  std::string host;
  std::string reason;
  std::optional<std::string> replacement;
  std::string message;  ///< one line
};

/// A request the pool refuses; `kind` maps to the HTTP status.
class PoolError : public std::runtime_error {
 public:
  enum class Kind {
    kInvalid,   ///< 400
    kNotFound,  ///< 404
    kConflict,  ///< 409: same job id, other request; a host with allocations changed
    kCapacity,  ///< 409: not enough free GPUs even after preemption
    kQuota,     ///< 409: the class quota of the active window would be exceeded
    kNotReady,  ///< 503: no fabric topology yet
    kStorage,   ///< 500: the journal cannot be written
  };
  PoolError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }
  int httpStatus() const;

 private:
  Kind kind_;
};

struct PoolOptions {
  routing::Placer placer;
  /// Wall clock for quota windows and allocation times; default system_clock::now.
  std::function<std::chrono::system_clock::time_point()> clock;
  /// Journal directory; empty = in memory only (tests, benchmarks).
  std::filesystem::path journalDir;
  /// Journal records after which the state is compacted into a snapshot.
  std::size_t compactEvery = 1000;
  std::vector<QuotaRule> quotas;
  /// Called (with the pool's mutex released) for every allocation that turns degraded.
  std::function<void(const PoolEvent&)> onEvent;
};

/// One inventory host joined with the fabric.
struct PoolHostView {
  PoolHost host;
  bool inFabric = false;
  HostHealth health = HostHealth::kOk;
  std::string healthReason;
  std::vector<int> rails;  ///< per GPU: the rail of its HCA's leaf, -1 when unknown
  int freeGpus = 0;        ///< whole GPUs nobody uses
  std::vector<std::string> allocations;
};

struct ClassUsage {
  double gpus = 0.0;  ///< GPU-equivalents held
  int allocations = 0;
  int degradedAllocations = 0;
};

struct PoolUsage {
  int totalGpus = 0;   ///< of hosts known to the fabric
  int usableGpus = 0;  ///< of those, on healthy hosts
  double usedGpus = 0.0;
  std::map<JobClass, ClassUsage> byClass;
  std::vector<QuotaStatus> quotas;
  std::vector<std::string> unknownHosts;  ///< inventory hosts the fabric does not know
  std::uint64_t preemptions = 0;          ///< allocations preempted since start
  std::size_t journalRecords = 0;         ///< since the last snapshot
  std::uint64_t tornBytesAtStart = 0;     ///< a torn journal tail cut off at start
  std::chrono::system_clock::time_point now{};
};

/// JSON forms (docs/pool.md). requestFromJson throws PoolError(kInvalid) naming the field.
AllocationRequest requestFromJson(const nlohmann::json& j);
nlohmann::json toJson(const AllocationRequest& r);
nlohmann::json toJson(const Allocation& a);
/// Inverse of toJson(Allocation) (the journal's form); throws PoolError(kInvalid).
Allocation allocationFromJson(const nlohmann::json& j);
/// Checks ranges and names; throws PoolError(kInvalid).
void validate(const AllocationRequest& r);

class Pool {
 public:
  /// Replays the journal when `options.journalDir` is set; throws PoolError(kStorage) when it
  /// cannot be read or created.
  explicit Pool(PoolOptions options);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  /// Joins the inventory with a (newer) fabric snapshot; HCAs that vanished or went down make
  /// their hosts unhealthy (and their allocations degraded).
  void setTopology(TopologyPtr topology);
  /// A fabric event (link_down, link_degraded, error_threshold, ...) on a host's HCA.
  void observeEvent(const telemetry::Event& event);

  /// Adds or replaces a host; returns true when it is new. kConflict when the host has
  /// allocations and its GPUs would change.
  bool putHost(PoolHost host);
  std::vector<PoolHostView> hosts() const;
  std::optional<PoolHostView> host(std::string_view name) const;

  AllocationResult allocate(const AllocationRequest& request);
  std::optional<Allocation> get(std::string_view jobId) const;
  std::vector<Allocation> list() const;  ///< by sequence
  /// Frees; false when no such allocation.
  bool release(std::string_view jobId);

  PoolUsage usage() const;
  /// Writes a snapshot and restarts the journal (also done every `compactEvery` records).
  void compact();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ibfabric::scheduler_hooks
