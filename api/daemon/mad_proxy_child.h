// The daemon's MAD proxy child: `ibfabricd --mad-proxy [--sa] [--ca NAME] [--ca-port N]` opens
// the umad port (UmadTransport) and serves MADs for its parent on fd 3 (telemetry/mad_proxy.h).
// Started by the sweeps' SubprocessMadTransport (SMP and PerfMgt classes) and, with --sa, by the
// trap subscription's (the SA class, whose Reports arrive unasked: api/daemon/trap_wiring.h);
// exits when the parent closes the socket or dies.
#pragma once

#include <string>

namespace ibfabric::api {

/// Returns the process exit code (telemetry/mad_proxy.h: 0, 3 or 4).
int runMadProxyChild(const std::string& ca, int caPort, bool sa = false);

}  // namespace ibfabric::api
