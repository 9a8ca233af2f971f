#include "api/daemon/mad_proxy_child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "telemetry/mad_proxy.h"
#include "telemetry/umad_transport.h"

namespace ibfabric::api {
namespace {

/// The SA port under the simulator: once the umad port is open with its classes registered,
/// opens umad2sim's issm device (the client becomes an SM client of ibsim). Forwards the rest.
class SimReportsTransport final : public mad::MadTransport {
 public:
  explicit SimReportsTransport(mad::UmadTransport& inner) : inner_(inner) {}
  ~SimReportsTransport() override {
    if (issm_ >= 0) ::close(issm_);
  }
  bool open(std::string& error) override {
    if (!inner_.open(error)) return false;
    issm_ = ::open("/dev/infiniband/issm0", O_RDWR);
    if (issm_ < 0)
      std::fprintf(stderr, "mad proxy: cannot open the simulator's issm device: %s\n",
                   std::strerror(errno));
    return true;
  }
  int send(const mad::MadAddress& to, const mad::MadBuffer& mad) override {
    return inner_.send(to, mad);
  }
  mad::ReceiveResult receive(std::chrono::nanoseconds timeout) override {
    return inner_.receive(timeout);
  }
  void close() override { inner_.close(); }
  std::string fatalError() const override { return inner_.fatalError(); }
  Lid localLid() const override { return inner_.localLid(); }
  Lid smLid() const override { return inner_.smLid(); }
  Guid localPortGuid() const override { return inner_.localPortGuid(); }

 private:
  mad::UmadTransport& inner_;
  int issm_ = -1;
};

}  // namespace

int runMadProxyChild(const std::string& ca, int caPort, bool sa) {
  // Never outlive the daemon (the socket's EOF also ends the proxy).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  using mad::MgmtClass;
  std::vector<MgmtClass> classes = {MgmtClass::kSubnLid, MgmtClass::kPerfMgt,
                                    MgmtClass::kSubnDirected};
  const char* preload = std::getenv("LD_PRELOAD");
  const char* asSm = std::getenv("IBFABRIC_SIM_SM_CLIENT");
  const bool simulated =
      sa && preload && std::strstr(preload, "umad2sim") && asSm && std::strcmp(asSm, "1") == 0;
  if (sa) classes = {MgmtClass::kSubnAdm};
  // The simulator (ibsim through umad2sim) hands unsolicited QP0/QP1 requests — the SM's
  // Reports — only to a client registered as an SM (ibsim.c find_client), which opening the
  // issm device makes it; such a client also gets the SMInfo queries ibsim does not answer
  // itself, so the SMP classes are registered first to take them (umad2sim's receiver crashes
  // on a class nobody registered); the subscription answers them "unsupported" (through the
  // proxy's send thread: a reply written from the reader thread can deadlock with ibsim).
  // Never on hardware, where any agent registered for the Report method gets the Reports; and
  // only when IBFABRIC_SIM_SM_CLIENT=1 asks for it: on the 10,240-HCA simulated fabric an extra
  // SM port (OpenSM queries it at every heavy sweep) went with a sweep collapse and crawls that
  // timed out (docs/BENCHMARKS.md 2026-12-03 21:08), so by default ibsim drops the Reports.
  if (simulated) classes.insert(classes.end(), {MgmtClass::kSubnLid, MgmtClass::kSubnDirected});
  mad::UmadTransport umad(mad::UmadTransport::Options{ca, caPort, classes});
  SimReportsTransport withReports(umad);
  mad::MadTransport& transport = simulated ? static_cast<mad::MadTransport&>(withReports) : umad;
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
    return "umad " + umad.caName() + ":" + std::to_string(umad.portNum());
  });
}

}  // namespace ibfabric::api
