// Pool: the facade of the GPU pool allocator — the mutex, the public operations in the order
// they touch the state (journal first, then apply), and the degraded events handed to
// PoolOptions::onEvent once the mutex is released. The parts live in scheduler_hooks/pool/.
#include "scheduler_hooks/pool.h"

#include <algorithm>
#include <utility>

#include "scheduler_hooks/pool/degraded_allocations.h"
#include "scheduler_hooks/pool/fabric_join.h"
#include "scheduler_hooks/pool/host_registry.h"
#include "scheduler_hooks/pool/journal_records.h"
#include "scheduler_hooks/pool/pool_state.h"
#include "scheduler_hooks/pool/preemption.h"
#include "scheduler_hooks/pool/usage_accounting.h"

namespace ibfabric::scheduler_hooks {

using nlohmann::json;
using namespace pool_impl;

int PoolError::httpStatus() const {
  switch (kind_) {
    case Kind::kInvalid:
      return 400;
    case Kind::kNotFound:
      return 404;
    case Kind::kConflict:
    case Kind::kCapacity:
    case Kind::kQuota:
      return 409;
    case Kind::kNotReady:
      return 503;
    case Kind::kStorage:
      return 500;
  }
  return 500;
}

struct Pool::Impl {
  mutable std::mutex mu;
  PoolState s;  // guarded by mu

  /// Releases the lock, then hands the queued events to onEvent.
  void emitPending(std::unique_lock<std::mutex>& lock) {
    auto events = std::move(s.pending);
    s.pending.clear();
    lock.unlock();
    if (s.options.onEvent)
      for (const auto& e : events) s.options.onEvent(e);
  }
};

Pool::Pool(PoolOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->s.options = std::move(options);
  if (!impl_->s.options.journalDir.empty()) replay(impl_->s);
}

Pool::~Pool() = default;

void Pool::setTopology(TopologyPtr topology) {
  if (!topology) return;
  std::unique_lock lock(impl_->mu);
  PoolState& s = impl_->s;
  s.topology = std::move(topology);
  for (std::size_t i = 0; i < s.hosts.size(); ++i) joinHost(s, i);
  refreshDegraded(s);
  impl_->emitPending(lock);
}

void Pool::observeEvent(const telemetry::Event& event) {
  std::unique_lock lock(impl_->mu);
  if (applyFabricEvent(impl_->s, event)) refreshDegraded(impl_->s);
  impl_->emitPending(lock);
}

bool Pool::putHost(PoolHost host) {
  std::unique_lock lock(impl_->mu);
  PoolState& s = impl_->s;
  auto it = s.byName.find(host.name);
  if (it != s.byName.end() && s.hosts[it->second].inv == host) return false;
  checkHostChange(s, host);
  const bool created = it == s.byName.end();
  record(s, {{"op", "host"}, {"host", toJson(host)}});
  installHost(s, std::move(host));
  refreshDegraded(s);
  impl_->emitPending(lock);
  return created;
}

std::vector<PoolHostView> Pool::hosts() const {
  std::lock_guard lock(impl_->mu);
  return hostViews(impl_->s);
}

std::optional<PoolHostView> Pool::host(std::string_view name) const {
  for (auto& v : hosts())
    if (v.host.name == name) return v;
  return std::nullopt;
}

AllocationResult Pool::allocate(const AllocationRequest& request) {
  validate(request);
  std::unique_lock lock(impl_->mu);
  PoolState& s = impl_->s;
  if (auto it = s.allocations.find(request.jobId); it != s.allocations.end()) {
    if (it->second.request == request) return AllocationResult{it->second, false, {}, {}};
    throw PoolError(PoolError::Kind::kConflict,
                    "job " + request.jobId + " already holds an allocation for another request");
  }
  if (!s.topology) throw PoolError(PoolError::Kind::kNotReady, "no fabric topology yet");
  AllocationResult result;
  for (const auto& h : s.hosts)
    if (!h.known) result.warnings.push_back(h.inv.name + ": unknown to the fabric, not used");
  AllocationPlan plan = planAllocation(s, request);

  Allocation a;
  a.request = request;
  a.hosts = std::move(plan.grants);
  a.sequence = s.nextSequence;
  a.created = s.now();
  a.gpuEquivalents = applyGrant(s, a, +1, nullptr);
  json victimIds = json::array();
  for (const Allocation* v : plan.victims) victimIds.push_back(v->request.jobId);
  record(s, {{"op", "alloc"}, {"allocation", toJson(a)}, {"victims", victimIds}});
  for (const Allocation* v : plan.victims) result.victims.push_back(*v);
  for (const auto& v : result.victims) removeAllocation(s, v.request.jobId);
  s.preemptions += result.victims.size();
  addAllocation(s, a);
  maybeCompact(s);
  result.allocation = std::move(a);
  result.created = true;
  return result;
}

std::optional<Allocation> Pool::get(std::string_view jobId) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->s.allocations.find(jobId);
  if (it == impl_->s.allocations.end()) return std::nullopt;
  return it->second;
}

std::vector<Allocation> Pool::list() const {
  std::lock_guard lock(impl_->mu);
  std::vector<Allocation> out;
  for (const auto& [id, a] : impl_->s.allocations) out.push_back(a);
  std::sort(out.begin(), out.end(),
            [](const Allocation& a, const Allocation& b) { return a.sequence < b.sequence; });
  return out;
}

bool Pool::release(std::string_view jobId) {
  std::lock_guard lock(impl_->mu);
  PoolState& s = impl_->s;
  auto it = s.allocations.find(jobId);
  if (it == s.allocations.end()) return false;
  const std::string id(jobId);
  record(s, {{"op", "free"}, {"job", id}});
  removeAllocation(s, id);
  maybeCompact(s);
  return true;
}

PoolUsage Pool::usage() const {
  std::lock_guard lock(impl_->mu);
  return summarizeUsage(impl_->s);
}

void Pool::compact() {
  std::lock_guard lock(impl_->mu);
  pool_impl::compact(impl_->s);
}

}  // namespace ibfabric::scheduler_hooks
