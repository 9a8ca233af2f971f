#include "tests/fakes/fake_sources.h"

#include <algorithm>
#include <thread>

#include "routing/synthetic_tables.h"

namespace ibfabric::api {

void ScriptedTopologySource::push(TopologyPtr topology) {
  std::lock_guard lock(mu_);
  script_.emplace_back(std::move(topology));
}

void ScriptedTopologySource::pushFailure(std::string message) {
  std::lock_guard lock(mu_);
  script_.emplace_back(std::move(message));
}

TopologyPtr ScriptedTopologySource::discover() {
  ++calls_;
  Outcome outcome;
  {
    std::lock_guard lock(mu_);
    if (!script_.empty()) {
      last_ = script_.front();
      script_.pop_front();
    }
    if (!last_) throw CrawlError("scripted source: nothing scripted");
    outcome = *last_;
  }
  if (auto* error = std::get_if<std::string>(&outcome)) throw CrawlError(*error);
  return std::get<TopologyPtr>(outcome);
}

FakeCounterSource::FakeCounterSource(std::shared_ptr<FakeCounterControl> control)
    : control_(std::move(control)) {}

telemetry::CounterSnapshotPtr FakeCounterSource::sweep() {
  using telemetry::Counter;
  if (control_->failSweeps) throw SweepError("fake: sweeps fail");
  const int n = ++control_->sweeps;
  auto snap = std::make_shared<telemetry::CounterSnapshot>();
  snap->sequence = ++sequence_;
  snap->started = mad::SteadyClock().now();
  snap->wallTime = std::chrono::system_clock::now();
  snap->topology = topology_;
  for (const Node& node : topology_->nodes()) {
    for (const auto& port : node.ports) {
      if (!port || !port->remote) continue;
      telemetry::PortSample s;
      s.key = {node.guid, port->num};
      s.nodeType = node.type;
      s.nodeDescription = node.description;
      s.lid = node.isSwitch() ? node.lid() : port->lid;
      s.rate = port->activeRate;
      const Node& remote = topology_->node(port->remote->node);
      s.remote = telemetry::PortKey{remote.guid, port->remote->port};
      s.remoteDescription = remote.description;
      s.at = snap->started;
      auto step = static_cast<std::uint64_t>(n);
      if (auto c = clearedAt_.find(s.key); c != clearedAt_.end()) step -= c->second;
      for (Counter c : telemetry::kAllCounters) s.counters.set(c, 0, 64);
      s.counters.set(Counter::kXmitData, step * control_->dataStep, 64);
      s.counters.set(Counter::kRcvData, step * control_->dataStep, 64);
      s.counters.set(Counter::kXmitPkts, step * 10, 64);
      s.counters.set(Counter::kRcvPkts, step * 10, 64);
      if (control_->answerNothing) s.status = telemetry::PortStatus::kTimeout;
      snap->ports.push_back(std::move(s));
    }
  }
  std::sort(snap->ports.begin(), snap->ports.end(),
            [](const auto& a, const auto& b) { return a.key < b.key; });
  snap->stats.ports = snap->ports.size();
  snap->stats.portsOk = control_->answerNothing ? 0 : snap->ports.size();
  snap->finished = mad::SteadyClock().now();
  return snap;
}

ClearCountersResult FakeCounterSource::clearCounters(telemetry::PortKey key, Lid /*lid*/) {
  if (int ms = control_->clearDelayMs; ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  ++control_->clears;
  const auto status = control_->clearStatus.load();
  if (status != ClearCountersResult::Status::kOk) return {status, false, "fake: clear refused"};
  clearedAt_[key] = static_cast<std::uint64_t>(control_->sweeps.load());
  return {ClearCountersResult::Status::kOk, false, ""};
}

routing::ForwardingTablesPtr FakeCounterSource::readForwardingTables(
    const TopologyPtr& topology, const routing::ForwardingTablesPtr& previous,
    std::string* reason) {
  if (!control_->serveTables || !topology) return nullptr;
  if (between_) between_();
  if (previous && previous->topology() == topology) {
    if (reason) *reason = "unchanged";
    return previous;
  }
  ++control_->tableReads;
  if (reason) *reason = previous ? "topology changed" : "first read";
  return routing::computeShortestPathTables(topology);
}

}  // namespace ibfabric::api
