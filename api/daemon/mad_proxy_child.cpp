#include "api/daemon/mad_proxy_child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <cstdio>

#include "telemetry/mad_proxy.h"
#include "telemetry/umad_transport.h"

namespace ibfabric::api {

int runMadProxyChild(const std::string& ca, int caPort) {
  // Never outlive the daemon (the socket's EOF also ends the proxy).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  mad::UmadTransport transport(mad::UmadTransport::Options{
      ca,
      caPort,
      {mad::MgmtClass::kSubnLid, mad::MgmtClass::kPerfMgt, mad::MgmtClass::kSubnDirected}});
  constexpr int kSocketFd = 3;
  int type = 0;
  socklen_t len = sizeof type;
  if (::getsockopt(kSocketFd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET) {
    std::fprintf(stderr,
                 "ibfabricd --mad-proxy: fd 3 is not a SOCK_SEQPACKET socket (this mode is "
                 "started by the daemon itself)\n");
    return 2;
  }
  return mad::proxy::runMadProxy(transport, kSocketFd, [&] {
    return "umad " + transport.caName() + ":" + std::to_string(transport.portNum());
  });
}

}  // namespace ibfabric::api
