#include "telemetry/sim_socket_buffers.h"

#include <sys/socket.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>

namespace ibfabric::mad {
namespace {

bool isUnixDatagramSocket(int fd) {
  int type = 0;
  socklen_t typeLen = sizeof(type);
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &typeLen) != 0 || type != SOCK_DGRAM) return false;
  sockaddr_storage addr{};
  socklen_t addrLen = sizeof(addr);
  return getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &addrLen) == 0 &&
         addr.ss_family == AF_UNIX;
}

bool sendBufferAtLeast(int fd, int bytes) {
  int now = 0;
  socklen_t len = sizeof(now);
  // The kernel reports twice what was set (it doubles for its bookkeeping).
  return getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &now, &len) == 0 && now >= bytes;
}

}  // namespace

bool underUmad2sim() {
  const char* preload = std::getenv("LD_PRELOAD");
  return preload != nullptr && std::string_view(preload).find("umad2sim") != std::string_view::npos;
}

int widenSimulatorSocketBuffers(int bytes, std::string& note) {
  if (!underUmad2sim()) return 0;
  int widened = 0, capped = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    if (!isUnixDatagramSocket(fd)) continue;
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof(bytes)) != 0)
      setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
    ++(sendBufferAtLeast(fd, bytes) ? widened : capped);
  }
  if (ec) note = "cannot list /proc/self/fd: " + ec.message();
  if (capped > 0) {
    note = std::to_string(capped) +
           " umad2sim socket(s) kept a smaller send buffer (SO_SNDBUFFORCE needs CAP_NET_ADMIN; "
           "SO_SNDBUF is capped by net.core.wmem_max): a slow simulator may deadlock this client";
  }
  return widened;
}

}  // namespace ibfabric::mad
