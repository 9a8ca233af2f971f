#include "telemetry/umad_transport.h"

#include <arpa/inet.h>
#include <endian.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>
#include <poll.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "telemetry/sim_socket_buffers.h"

namespace ibfabric::mad {
namespace {

// Class version 1 for both SMI and PerfMgt; no RMPP.
constexpr int kClassVersion = 1;
constexpr int kSaClassVersion = 2;

// Size of our umad buffers. umad_size() is not where umad_get_mad() puts the MAD under umad2sim
// (ASan caught a 256-byte copy at umad_get_mad() running 8 bytes past umad_size() + 256), so
// the buffers are sized from the struct and get generous slack; only 256 MAD bytes are used.
std::size_t umadBufferSize() {
  return std::max(umad_size(), sizeof(ib_user_mad_t)) + IB_MAD_SIZE + 4096;
}

int pollTimeoutMs(std::chrono::nanoseconds timeout) {
  if (timeout <= std::chrono::nanoseconds::zero()) return 0;
  // Round up so that a sub-millisecond wait does not become a busy loop.
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(timeout).count();
  return ms > 60'000 ? 60'000 : static_cast<int>(ms);
}

}  // namespace

UmadTransport::UmadTransport(Options options)
    : options_(std::move(options)), sendBuf_(umadBufferSize()), recvBuf_(umadBufferSize()) {}

UmadTransport::~UmadTransport() { close(); }

bool UmadTransport::open(std::string& error) {
  if (portId_ >= 0) return true;
  if (umad_init() < 0) {
    error = "umad_init failed";
    return false;
  }
  const char* ca = options_.caName.empty() ? nullptr : options_.caName.c_str();
  umad_port_t port{};
  if (int rc = umad_get_port(ca, options_.port, &port); rc < 0) {
    error = "umad_get_port(" + options_.caName + ", " + std::to_string(options_.port) +
            "): " + std::strerror(-rc);
    return false;
  }
  openedCa_ = port.ca_name;
  openedPort_ = port.portnum;
  localLid_ = Lid(static_cast<std::uint16_t>(port.base_lid));
  smLid_ = Lid(static_cast<std::uint16_t>(port.sm_lid));
  localPortGuid_ = Guid(be64toh(port.port_guid));
  umad_release_port(&port);

  portId_ = umad_open_port(openedCa_.c_str(), openedPort_);
  if (portId_ < 0) {
    error = "umad_open_port(" + openedCa_ + ", " + std::to_string(openedPort_) +
            "): " + std::strerror(-portId_);
    portId_ = -1;
    return false;
  }
  for (MgmtClass c : options_.classes) {
    // SA: class version 2, and the methods it receives unasked (Reports of a subscription).
    long methods[16 / sizeof(long)] = {};
    const bool sa = c == MgmtClass::kSubnAdm;
    if (sa) {
      const unsigned report = static_cast<unsigned>(MadMethod::kReport);
      methods[report / (8 * sizeof(long))] |= 1L << (report % (8 * sizeof(long)));
    }
    int agent = umad_register(portId_, static_cast<int>(c), sa ? kSaClassVersion : kClassVersion, 0,
                              sa ? methods : nullptr);
    if (agent < 0) {
      error = "umad_register(class " + std::to_string(static_cast<int>(c)) +
              "): " + std::strerror(-agent);
      close();
      return false;
    }
    agents_[c] = agent;
  }
  // 16 MiB: room for tens of thousands of MADs queued at a slow simulator.
  std::string note;
  if (int n = widenSimulatorSocketBuffers(16 << 20, note); n > 0)
    spdlog::debug("umad transport: {} umad2sim socket(s) given a 16 MiB send buffer", n);
  if (!note.empty()) spdlog::warn("umad transport: {}", note);
  spdlog::debug("umad transport: {} port {} lid {} sm lid {}", openedCa_, openedPort_,
                localLid_.value(), smLid_.value());
  return true;
}

int UmadTransport::send(const MadAddress& to, const MadBuffer& mad) {
  if (portId_ < 0) return EBADF;
  auto agent = agents_.find(to.mgmtClass);
  if (agent == agents_.end()) return EPROTONOSUPPORT;
  std::memset(sendBuf_.data(), 0, sendBuf_.size());
  std::memcpy(umad_get_mad(sendBuf_.data()), mad.data(), mad.size());
  umad_set_addr(sendBuf_.data(), to.lid.value(), static_cast<int>(to.qp), to.sl,
                static_cast<int>(to.qkey));
  // Timeout 0 and retries 0: the engine keeps its own timers (umad2sim has none).
  if (umad_send(portId_, agent->second, sendBuf_.data(), IB_MAD_SIZE, 0, 0) < 0) {
    return errno != 0 ? errno : EIO;
  }
  return 0;
}

ReceiveResult UmadTransport::receive(std::chrono::nanoseconds timeout) {
  ReceiveResult result;
  if (portId_ < 0) {
    result.status = ReceiveStatus::kError;
    result.error = "port not open";
    return result;
  }
  pollfd pfd{umad_get_fd(portId_), POLLIN, 0};
  int n = ::poll(&pfd, 1, pollTimeoutMs(timeout));
  if (n == 0 || (n < 0 && errno == EINTR)) {
    result.status = ReceiveStatus::kTimeout;
    return result;
  }
  if (n < 0) {
    result.status = ReceiveStatus::kError;
    result.error = std::string("poll: ") + std::strerror(errno);
    return result;
  }
  int length = IB_MAD_SIZE;
  int rc = umad_recv(portId_, recvBuf_.data(), &length, 0);
  if (rc < 0) {
    result.status = ReceiveStatus::kError;
    result.error = std::string("umad_recv: ") + std::strerror(-rc);
    return result;
  }
  result.status = ReceiveStatus::kMad;
  std::memcpy(result.mad.mad.data(), umad_get_mad(recvBuf_.data()), IB_MAD_SIZE);
  result.mad.umadStatus = umad_status(recvBuf_.data());
  const auto* hdr = reinterpret_cast<const ib_user_mad_t*>(recvBuf_.data());
  result.mad.sourceLid = Lid(ntohs(hdr->addr.lid));
  return result;
}

void UmadTransport::close() {
  if (portId_ < 0) return;
  for (auto& [cls, agent] : agents_) umad_unregister(portId_, agent);
  agents_.clear();
  umad_close_port(portId_);
  portId_ = -1;
}

}  // namespace ibfabric::mad
