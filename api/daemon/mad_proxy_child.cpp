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
#include <mutex>
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
    std::lock_guard lock(sendMu_);  // the proxy's reader thread refuses SMPs (refuseSmp)
    return inner_.send(to, mad);
  }
  mad::ReceiveResult receive(std::chrono::nanoseconds timeout) override {
    mad::ReceiveResult r = inner_.receive(timeout);
    if (r.status == mad::ReceiveStatus::kMad) refuseSmp(r.mad);
    return r;
  }
  void close() override { inner_.close(); }
  std::string fatalError() const override { return inner_.fatalError(); }
  Lid localLid() const override { return inner_.localLid(); }
  Lid smLid() const override { return inner_.smLid(); }
  Guid localPortGuid() const override { return inner_.localPortGuid(); }

 private:
  /// An SM client must answer the SMPs ibsim forwards to it (SMInfo: the SM asks every port
  /// that says IsSM) — umad2sim has no timeouts, an SM left waiting stops sweeping — so each
  /// gets "attribute not supported" (MAD status 0x000C).
  void refuseSmp(const mad::ReceivedMad& m) {
    const mad::MadHeader in = mad::decodeHeader(m.mad);
    const bool dr = in.mgmtClass == static_cast<std::uint8_t>(mad::MgmtClass::kSubnDirected);
    if (m.umadStatus != 0 || mad::isResponse(m.mad) ||
        (!dr && in.mgmtClass != static_cast<std::uint8_t>(mad::MgmtClass::kSubnLid)))
      return;
    mad::MadBuffer reply = m.mad;
    mad::MadHeader h = in;
    h.method = static_cast<std::uint8_t>(mad::MadMethod::kGetResponse);
    h.status = dr ? 0x800C : 0x000C;  // a directed-route reply carries the direction bit
    mad::encodeHeader(reply, h);
    std::lock_guard lock(sendMu_);
    inner_.send(dr ? mad::directedRouteAddress() : mad::smpAddress(m.sourceLid), reply);
  }

  mad::UmadTransport& inner_;
  std::mutex sendMu_;
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
  const bool simulated = sa && preload && std::strstr(preload, "umad2sim");
  if (sa) classes = {MgmtClass::kSubnAdm};
  // The simulator (ibsim through umad2sim) hands unsolicited QP0/QP1 requests — the SM's
  // Reports — only to a client registered as an SM (ibsim.c find_client), which opening the
  // issm device makes it; such a client also gets the SMInfo queries ibsim does not answer
  // itself, so the SMP classes are registered first to take them (and drop them: umad2sim's
  // receiver crashes on a class nobody registered). Never on hardware, where any agent
  // registered for the Report method gets the Reports.
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
