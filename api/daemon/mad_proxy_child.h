// The daemon's MAD proxy child: `ibfabricd --mad-proxy [--ca NAME] [--ca-port N]` opens the umad
// port (UmadTransport) and serves MADs for its parent on fd 3 (telemetry/mad_proxy.h). Started
// by the sweeps' SubprocessMadTransport; exits when the parent closes the socket or dies.
#pragma once

#include <string>

namespace ibfabric::api {

/// Returns the process exit code (telemetry/mad_proxy.h: 0, 3 or 4).
int runMadProxyChild(const std::string& ca, int caPort);

}  // namespace ibfabric::api
