// FabricService, active/standby (role_election.h): the role set by the daemon's HaMonitor, what
// a standby's sweep thread does instead of sweeping, and the local port read that tells the
// role election where the SM is and the subnet who it is.
#include <spdlog/spdlog.h>

#include "api/service/fabric_service.h"

namespace ibfabric::api {
namespace {

using Clock = std::chrono::steady_clock;
using SysClock = std::chrono::system_clock;

/// The port at `lid` in `t`: its node's GUID and its port GUID.
std::optional<std::pair<Guid, Guid>> portAtLid(const Topology& t, std::uint16_t lid) {
  if (lid == 0) return std::nullopt;
  const auto ref = t.findLid(Lid(lid));
  if (!ref) return std::nullopt;
  const Port* p = t.port(*ref);
  if (!p) return std::nullopt;
  return std::make_pair(t.node(ref->node).guid, p->guid);
}

}  // namespace

std::string formatGidPrefix(std::uint64_t prefix) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(prefix));
  return buf;
}

void FabricService::setRole(const RoleDecision& decision, std::vector<PeerView> peers) {
  const bool toStandby = decision.role == HaRole::kStandby;
  const bool changed = standby_.exchange(toStandby) != toStandby;
  const auto before = state();
  const bool firstDecision = !before->ha.decided;
  if (changed || firstDecision || before->ha.reason != decision.reason)
    spdlog::log(changed ? spdlog::level::warn : spdlog::level::info, "ha ({}): {}{}",
                toString(options_.haMode), toString(decision.role),
                decision.reason.empty() ? "" : ": " + decision.reason);
  if (changed || before->ha.peers != peers || before->ha.reason != decision.reason ||
      firstDecision) {
    publishChange([&](ServiceState& s) {
      if (changed) {
        s.ha.since = SysClock::now();
        if (!firstDecision) s.ha.roleChanges++;
      }
      if (changed && toStandby) {
        // A standby serves no counters: the demoted daemon's last sweep would go stale on
        // /metrics beside the new active one's (alerts twice, rates frozen).
        s.counters.reset();
        s.rates.reset();
        s.health.reset();
        s.linkLoad.reset();
        s.sweep.nextAttempt.reset();
      }
      s.ha.role = decision.role;
      s.ha.reason = decision.reason;
      s.ha.decided = true;
      s.ha.peers = std::move(peers);
    });
  }
  if (!changed) return;
  if (!toStandby) requestCrawl();  // the warm snapshot may be a standby interval old
  // The crawl wait reads standby_ under mu_: taking it once orders this change before its next
  // look, so the notification below cannot fall between its check and its wait.
  { std::lock_guard lock(mu_); }
  cv_.notify_all();
}

void FabricService::refreshLocalPort(CounterSourcePtr& source) {
  if (!source || !source->readsLocalPort()) return;
  std::optional<mad::PortInfo> info;
  try {
    info = source->localPortInfo();
  } catch (const std::exception& e) {
    spdlog::debug("local port read failed: {}", e.what());
    return;
  }
  if (!info) return;
  const TopologyPtr topology = state()->topology;
  std::optional<std::pair<Guid, Guid>> self, sm;
  if (topology) {
    self = portAtLid(*topology, info->lid);
    sm = portAtLid(*topology, info->masterSmLid);
  }
  const auto now = state();
  const bool same = now->subnet.localLid == info->lid && now->subnet.smLid == info->masterSmLid &&
                    now->subnet.gidPrefix == info->gidPrefix &&
                    now->ha.localPortGuid == (self ? std::optional(self->second) : std::nullopt) &&
                    now->subnetId.smPortGuid == (sm ? std::optional(sm->second) : std::nullopt);
  if (same) return;
  if (now->subnet.smLid != info->masterSmLid && now->subnet.smLid != 0)
    spdlog::info("the master SM moved: LID {} -> {}", now->subnet.smLid, info->masterSmLid);
  publishChange([&](ServiceState& s) {
    s.subnet.localLid = info->lid;
    s.subnet.smLid = info->masterSmLid;
    s.subnet.gidPrefix = info->gidPrefix;
    s.subnet.portState = std::string(toString(static_cast<PortState>(info->portState)));
    if (info->gidPrefix) s.subnetId.gidPrefix = info->gidPrefix;
    s.ha.localPortGuid = self ? std::optional(self->second) : std::nullopt;
    s.ha.localNodeGuid = self ? std::optional(self->first) : std::nullopt;
    s.subnetId.smPortGuid = sm ? std::optional(sm->second) : std::nullopt;
    s.subnetId.smNodeGuid = sm ? std::optional(sm->first) : std::nullopt;
  });
}

void FabricService::standbyWait(CounterSourcePtr& source, std::unique_lock<std::mutex>& lock) {
  // What was asked of an active daemon is not done by a standby: probes are dropped (the next
  // crawl sees what they would have), clears refused.
  refuseClearJobs("this daemon is standby: ask the active one");
  probeRequests_.clear();
  sweepProbes_.clear();
  pendingUp_.clear();
  const auto next = Clock::now() + options_.standbyPoll;
  lock.unlock();
  if (state()->counters) {  // a sweep that was running when the role changed published them
    publishChange([](ServiceState& s) {
      s.counters.reset();
      s.rates.reset();
      s.health.reset();
      s.linkLoad.reset();
    });
  }
  if (!source) {
    std::string error;
    if (Clock::now() >= nextSourceAt_ && !createSource(source, error))
      spdlog::debug("standby: no counter source: {}", error);
  }
  refreshLocalPort(source);
  if (source) {
    auto engine = source->engineStats();
    publishChange([&](ServiceState& s) {
      s.engine = engine;
      s.sweep.nextAttempt.reset();  // no sweep is due: not overdue either
    });
  }
  lock.lock();
  cv_.wait_until(lock, next, [&] { return stopping_ || !standby_ || !clearJobs_.empty(); });
}

}  // namespace ibfabric::api
