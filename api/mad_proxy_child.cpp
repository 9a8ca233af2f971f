#include "api/mad_proxy_child.h"

#include <signal.h>
#include <sys/prctl.h>

#include "telemetry/mad_proxy.h"
#include "telemetry/umad_transport.h"

namespace ibfabric::api {

int runMadProxyChild(const std::string& ca, int caPort) {
  // Never outlive the daemon (the socket's EOF also ends the proxy).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  mad::UmadTransport transport(mad::UmadTransport::Options{
      ca, caPort, {mad::MgmtClass::kSubnLid, mad::MgmtClass::kPerfMgt}});
  constexpr int kSocketFd = 3;
  return mad::proxy::runMadProxy(transport, kSocketFd, [&] {
    return "umad " + transport.caName() + ":" + std::to_string(transport.portNum());
  });
}

}  // namespace ibfabric::api
