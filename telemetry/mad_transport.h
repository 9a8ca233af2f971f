// MadTransport: the seam between the MAD engine and the wire.
//
// A transport sends one 256-byte MAD to an address and receives replies with a timeout. It does
// no matching, no retries and no timing of its own: that is the engine's job. Implementations:
// UmadTransport (libibumad; also works through ibsim's umad2sim) and FakeMadTransport (scripted,
// for unit tests).
//
// Thread-safety: a transport is used by exactly one thread at a time (the engine's I/O thread
// once the engine runs); open() and close() must not race with send()/receive().
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "telemetry/mad_packet.h"

namespace ibfabric::mad {

/// One received MAD. `umadStatus` is the transport status (0 = a real reply; otherwise an errno
/// such as ETIMEDOUT for a send the transport reports as lost, in which case `mad` holds the
/// request that failed, with its transaction id).
struct ReceivedMad {
  MadBuffer mad{};
  int umadStatus = 0;
  Lid sourceLid;
};

enum class ReceiveStatus {
  kMad,      ///< `ReceiveResult::mad` is valid.
  kTimeout,  ///< Nothing arrived within the timeout.
  kError,    ///< The transport failed; `error` says why.
};

struct ReceiveResult {
  ReceiveStatus status = ReceiveStatus::kTimeout;
  ReceivedMad mad;
  std::string error;
};

class MadTransport {
 public:
  virtual ~MadTransport() = default;

  /// Opens the port and registers the management classes. Returns false and fills `error` when
  /// the environment does not allow it (no CA, no permission, simulator not running).
  virtual bool open(std::string& error) = 0;
  /// Sends `mad` as is (the caller has set the transaction id). Returns 0 or an errno value.
  virtual int send(const MadAddress& to, const MadBuffer& mad) = 0;
  /// Waits at most `timeout` for one MAD (0 = just check).
  virtual ReceiveResult receive(std::chrono::nanoseconds timeout) = 0;
  virtual void close() = 0;
  /// Non-empty once the transport can no longer work until it is closed and opened again (e.g.
  /// SubprocessMadTransport's child exited): says why. Plain transports never report this.
  virtual std::string fatalError() const { return {}; }
  /// Our own port as it reported itself at open(): its LID, the master SM's LID and its port
  /// GUID (the start of directed routes). Zero when the transport does not know.
  virtual Lid localLid() const { return Lid{}; }
  virtual Lid smLid() const { return Lid{}; }
  virtual Guid localPortGuid() const { return Guid{}; }
};

using MadTransportPtr = std::unique_ptr<MadTransport>;

}  // namespace ibfabric::mad
