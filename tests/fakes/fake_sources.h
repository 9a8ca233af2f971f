// Test doubles for FabricService's two seams (like tests/fakes/fake_mad_transport.h):
//
//   ScriptedTopologySource  returns the topologies (or failures) pushed into it, repeating the
//                           last outcome once the script is used up; counts its calls.
//   FakeCounterSource       produces a sweep of every linked port of the current topology with
//                           counters that grow by a fixed step per sweep (data counters by
//                           `dataStep` 4-octet units), all kOk; can be told to throw.
//
// Thread-safe: the service's threads use them while a test scripts them.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

#include "api/service/counter_source.h"
#include "discovery/crawler.h"

namespace ibfabric::api {

class ScriptedTopologySource final : public TopologySource {
 public:
  /// Appends an outcome: a snapshot, or a failure with this message.
  void push(TopologyPtr topology);
  void pushFailure(std::string message);

  TopologyPtr discover() override;
  std::string describe() const override { return "scripted"; }
  int calls() const { return calls_; }

 private:
  using Outcome = std::variant<TopologyPtr, std::string>;
  std::mutex mu_;
  std::deque<Outcome> script_;
  std::optional<Outcome> last_;
  std::atomic<int> calls_{0};
};

/// Shared between a test and the FakeCounterSources a factory creates.
struct FakeCounterControl {
  std::atomic<bool> failSweeps{false};
  /// Sweeps return every port with status kTimeout (a transport that answers nothing).
  std::atomic<bool> answerNothing{false};
  std::atomic<int> sweeps{0};
  std::uint64_t dataStep = 1000;
  /// clearCounters(): sleeps this long first (to provoke timeouts), then answers this status.
  std::atomic<int> clearDelayMs{0};
  std::atomic<ClearCountersResult::Status> clearStatus{ClearCountersResult::Status::kOk};
  std::atomic<int> clears{0};
  /// Serve shortest-path forwarding tables of the topology (routing/synthetic_tables.h).
  std::atomic<bool> serveTables{false};
  std::atomic<int> tableReads{0};  ///< Tables computed (a new topology, or after a change).
};

class FakeCounterSource final : public CounterSource {
 public:
  explicit FakeCounterSource(std::shared_ptr<FakeCounterControl> control);

  void setTopology(TopologyPtr topology) override { topology_ = std::move(topology); }
  telemetry::CounterSnapshotPtr sweep() override;
  std::string describe() const override { return "fake"; }
  /// Counts from zero again for this port (data counters restart at the next sweep's step).
  ClearCountersResult clearCounters(telemetry::PortKey key, Lid lid) override;
  routing::ForwardingTablesPtr readForwardingTables(const TopologyPtr& topology,
                                                    const routing::ForwardingTablesPtr& previous,
                                                    std::string* reason) override;
  /// Run once by every table read that serves tables (its one slice boundary).
  void setBetweenSlices(std::function<void()> hook) override { between_ = std::move(hook); }

 private:
  std::shared_ptr<FakeCounterControl> control_;
  std::function<void()> between_;
  std::map<telemetry::PortKey, std::uint64_t> clearedAt_;  // sweep number at the clear
  TopologyPtr topology_;
  std::uint64_t sequence_ = 0;
};

}  // namespace ibfabric::api
