// CounterSource: where the service's counter sweeps come from.
//
// The real one (makeUmadCounterSource) opens one umad port for the daemon's life, runs a
// MadEngine on it and a CounterSweeper over the current topology; tests give scripted sources.
// A source is created by a factory on the sweep thread and used only from that thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/service/counter_clear.h"
#include "discovery/topology.h"
#include "routing/forwarding.h"
#include "telemetry/counter_sweep.h"
#include "telemetry/mad_engine.h"
#include "telemetry/smp_attributes.h"

namespace ibfabric::api {

/// The source cannot sweep at all (umad cannot be opened, transport gone). what() is one line.
class SweepError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CounterSource {
 public:
  virtual ~CounterSource() = default;
  /// A new topology snapshot to poll.
  virtual void setTopology(TopologyPtr topology) = 0;
  /// One sweep. Per-port failures are statuses in the snapshot; throws SweepError only when
  /// nothing can be asked.
  virtual telemetry::CounterSnapshotPtr sweep() = 0;
  /// MAD engine statistics, when there is an engine.
  virtual std::optional<mad::MadEngineStats> engineStats() const { return std::nullopt; }
  /// The forwarding tables of `topology` (the one last given to setTopology): `previous` when
  /// still valid, else freshly read (routing/lft_reader.h). nullptr: this source has none.
  /// `reason` says why tables were (re)read or kept. Throws SweepError when nothing can be asked.
  virtual routing::ForwardingTablesPtr readForwardingTables(
      const TopologyPtr& /*topology*/, const routing::ForwardingTablesPtr& /*previous*/,
      std::string* /*reason*/) {
    return nullptr;
  }
  /// Work run between the slices of a sweep and of a long table read, on the thread that called
  /// sweep() or readForwardingTables(), where the engine has room for other MADs (the daemon's
  /// probes of suspected ports: a cable the SM has just brought up is not left waiting behind a
  /// whole sweep or a re-read of 900 switches' tables). Empty: none.
  virtual void setBetweenSlices(std::function<void()> /*hook*/) {}
  virtual std::string describe() const = 0;
  /// A re-created source continues the last snapshot served: it numbers its sweeps on from its
  /// sequence (sequence numbers stay increasing across re-creations) and keeps its ports' last
  /// good readings' times (telemetry::PortSample::lastOk).
  virtual void continueAfter(const telemetry::CounterSnapshot& /*previous*/) {}
  /// Clears every counter of one port (PortCounters, and PortCountersExtended when the node
  /// has it), addressed at `lid` (the switch's LID or the CA port's). Blocking, bounded by the
  /// MAD engine's timeouts; called on the sweep thread between sweeps.
  virtual ClearCountersResult clearCounters(telemetry::PortKey /*key*/, Lid /*lid*/) {
    return {ClearCountersResult::Status::kUnsupported, false,
            "the counter source (" + describe() + ") cannot clear counters"};
  }
  /// The local port's PortInfo (state, LID, SM LID), read with one directed-route SMP to our
  /// own node: what the service waits on before the subnet is usable. nullopt: this source
  /// cannot tell (then the service does not wait). Throws SweepError when nothing can be asked.
  virtual std::optional<mad::PortInfo> localPortInfo() { return std::nullopt; }
  /// True when localPortInfo() reads the port (else the service does not wait on it).
  virtual bool readsLocalPort() const { return false; }
  /// PortInfo of `ports` of the node at `lid` (one SMP GET each); nullopt for a port that did
  /// not answer. Used to re-probe a switch after a trap. Throws SweepError when the source
  /// cannot send SMPs.
  virtual std::vector<std::optional<mad::PortInfo>> probePortInfo(
      Lid /*lid*/, const std::vector<PortNum>& /*ports*/) {
    throw SweepError(describe() + " cannot send SMPs");
  }
  /// One switch port's PortInfo each, read by directed route (`path` from our own port to the
  /// switch): independent of the forwarding tables, so it reaches a switch whose LID route
  /// crosses a dead cable. nullopt for no answer. Throws SweepError when the source cannot send
  /// SMPs.
  struct DirectedPortProbe {
    mad::DirectedPath path;
    PortNum port;
  };
  virtual std::vector<std::optional<mad::PortInfo>> probePortInfoDirected(
      const std::vector<DirectedPortProbe>& /*probes*/) {
    throw SweepError(describe() + " cannot send SMPs");
  }
  /// PortInfo of `ports` of switch `switchGuid` by directed route along the up cables of
  /// `topology` from our port: for a switch whose LID route crosses a dead cable until the SM
  /// reroutes it. Empty when no such path is known; nullopt for a port that did not answer.
  /// Throws SweepError when the source cannot send SMPs.
  virtual std::vector<std::optional<mad::PortInfo>> probeSwitchPortsDirected(
      const TopologyPtr& /*topology*/, Guid /*switchGuid*/, const std::vector<PortNum>& /*ports*/) {
    throw SweepError(describe() + " cannot send SMPs");
  }
  /// What answers at the far end of `port` of switch `switchGuid`: its NodeInfo (identity, and
  /// the port the request entered by), then that port's PortInfo (state, LID), both by directed
  /// route from our port through the switch (`topology` gives the path; it is the one last given
  /// to setTopology or an edit of it). Reaches a node the model lost (no LID known, or none
  /// assigned yet). nullopt: no path to the switch, or no answer to NodeInfo; `port` is nullopt
  /// when only PortInfo went unanswered. Throws SweepError when the source cannot send SMPs.
  struct FarEnd {
    mad::NodeInfo node;
    std::optional<mad::PortInfo> port;
  };
  virtual std::optional<FarEnd> probeFarEnd(const TopologyPtr& /*topology*/, Guid /*switchGuid*/,
                                            PortNum /*port*/) {
    throw SweepError(describe() + " cannot send SMPs");
  }
};
using CounterSourcePtr = std::unique_ptr<CounterSource>;
/// Creates a source; throws SweepError when it cannot (the service retries with backoff).
using CounterSourceFactory = std::function<CounterSourcePtr()>;

struct UmadCounterOptions {
  std::string ca;  ///< Empty: the first umad device.
  int caPort = 0;  ///< 0: the first active port.
  mad::MadEngineOptions engine;
  telemetry::SweepOptions sweep;  ///< e.g. clearSaturated
  /// Non-empty: open the port in this MAD proxy child (e.g. {ibfabricd, --mad-proxy, ...};
  /// telemetry/subprocess_mad_transport.h) instead of in this process.
  std::vector<std::string> proxyArgv;
};

/// The umad-backed source: UmadTransport + MadEngine + CounterSweeper. Throws SweepError when
/// the umad port cannot be opened.
CounterSourcePtr makeUmadCounterSource(const UmadCounterOptions& options);

}  // namespace ibfabric::api
