// A TCP port on 127.0.0.1 that was free a moment ago, for test servers that need their port
// before they start (Prometheus, slurmctld). Another process may take it in between: callers
// retry with a new one when their server cannot bind. Thread-safe.
#pragma once

namespace ibfabric::testing {

/// Binds port 0 on loopback, reads the port back, closes; throws std::runtime_error.
int freeLoopbackPort();

}  // namespace ibfabric::testing
